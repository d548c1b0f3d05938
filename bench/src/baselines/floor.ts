/**
 * The floor: list the transcripts and read every byte of each once, zstd-decompressing the
 * zstd ones with the project's own frame decoder (checksums verified), with no line splitting
 * or parsing (benchmarks.md). An index that labels every session cannot build faster.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { decompressFrames } from '../zstd/frames';

/** One transcript found by a walk of the root. */
export interface TranscriptFile {
  path: string;
  encoding: 'raw' | 'zstd';
}

/** Every `<root>/<project>/<session>/session.jsonl[.zstd]`, directories only, in walk order. */
export function listTranscripts(root: string): TranscriptFile[] {
  const found: TranscriptFile[] = [];
  for (const project of readdirSync(root, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    const projectDir = path.join(root, project.name);
    for (const session of readdirSync(projectDir, { withFileTypes: true })) {
      if (!session.isDirectory()) continue;
      const sessionDir = path.join(projectDir, session.name);
      for (const name of readdirSync(sessionDir)) {
        if (name === 'session.jsonl.zstd') found.push({ path: path.join(sessionDir, name), encoding: 'zstd' });
        else if (name === 'session.jsonl') found.push({ path: path.join(sessionDir, name), encoding: 'raw' });
      }
    }
  }
  return found;
}

/** The whole plaintext of one transcript (all frames of a zstd one). */
export function readPlaintext(file: TranscriptFile): Uint8Array {
  const bytes = readFileSync(file.path);
  return file.encoding === 'zstd' ? decompressFrames(bytes) : bytes;
}

/** What one floor pass did. */
export interface FloorResult {
  ms: number;
  transcripts: number;
  bytesOnDisk: number;
  plaintextBytes: number;
}

/** One timed floor pass over a root. */
export function runFloor(root: string): FloorResult {
  const started = performance.now();
  const files = listTranscripts(root);
  let bytesOnDisk = 0;
  let plaintextBytes = 0;
  for (const file of files) {
    const bytes = readFileSync(file.path);
    bytesOnDisk += bytes.length;
    plaintextBytes += file.encoding === 'zstd' ? decompressFrames(bytes).length : bytes.length;
  }
  return { ms: performance.now() - started, transcripts: files.length, bytesOnDisk, plaintextBytes };
}
