/** The naive baseline's per-log work, done with the project's own decoder (reused, not rewritten). */
import { readFileSync } from 'node:fs';
import { initZstdSupport, loadSessionLog, readSessionHeader } from 'dsh-session-ls/dist/store/log';
import type { TranscriptFile } from './floor';

/** A listed header: what dsh's listing reads from line 0 / frame 1. */
export interface ListedHeader {
  file: TranscriptFile;
  id: string;
  cwd?: string;
  createdAt: number;
}

/** The project decoder, ready for zstd (its checksum hasher loads asynchronously once). */
export async function projectDecoder(): Promise<{
  readHeader(file: TranscriptFile, prefix: Uint8Array): ListedHeader | undefined;
  readTitle(file: TranscriptFile, sessionId: string): string | undefined;
}> {
  await initZstdSupport();
  return {
    readHeader(file, prefix) {
      const read = readSessionHeader(prefix, file.encoding);
      if ('incomplete' in read) return undefined;
      return { file, id: read.header.id, cwd: read.header.cwd, createdAt: read.header.createdAt };
    },
    readTitle(file, sessionId) {
      try {
        return loadSessionLog(readFileSync(file.path), file.encoding, { expectedId: sessionId }).title;
      } catch {
        // A failed title read labels the session by its id, as dsh does.
        return undefined;
      }
    },
  };
}
