/**
 * The whole log of one session, read from its transcript file, for `dshSession.transcript` (which needs
 * append-origin events; `readSurface` gives the current surface only). It locates the file the way dsh
 * derives it and decodes it with the store's own decoder, read-only and without following links. The
 * features reach it only through the `SessionLogs` of their services.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { SessionReadError, raceWithSignal, throwIfCancelled, type AgentSessionLog, type SessionStore } from '../resolver';
import { TRANSCRIPT_NAMES, projectDirName, encodeSegment, type TranscriptEncoding } from './layout';
import { initZstdSupport, type LoadedSessionLog } from './log';
import { loadOpenTranscript } from './lookup';
import { nodeTranscriptFiles } from './transcriptFiles';

async function isPlainEntry(file: string, kind: 'directory' | 'file'): Promise<boolean> {
  try {
    const stats = await fsp.lstat(file);
    return kind === 'directory' ? stats.isDirectory() : stats.isFile();
  } catch {
    return false;
  }
}

/**
 * Read a session's whole log under `root`. `sessions.readSurface` is asked first, so a missing,
 * ambiguous or damaged session fails exactly as it does for `prepare`; its header then names the file.
 */
export async function readSessionLogFile(root: string, sessions: SessionStore, sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog> {
  const surface = await raceWithSignal(sessions.readSurface(sessionId, signal), signal);
  const realRoot = await fsp.realpath(root);
  const sessionDir = path.join(realRoot, projectDirName(surface.header.cwd), encodeSegment(sessionId));
  // Never through a link: the project and session directories and the file must be real entries.
  if (!(await isPlainEntry(path.dirname(sessionDir), 'directory')) || !(await isPlainEntry(sessionDir, 'directory'))) {
    throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
  }
  for (const encoding of ['zstd', 'raw'] as TranscriptEncoding[]) {
    const file = path.join(sessionDir, TRANSCRIPT_NAMES[encoding]);
    if (!(await isPlainEntry(file, 'file'))) continue;
    if (encoding === 'zstd') await initZstdSupport();
    const handle = await nodeTranscriptFiles.open(file);
    let loaded: LoadedSessionLog;
    try {
      // Streamed in bounded reads, keeping only the events a transcript shows or counts.
      const { size } = await handle.stat();
      loaded = await loadOpenTranscript(handle, size, encoding, { expectedId: sessionId, keepEvents: 'surface-types', signal });
    } finally {
      await handle.close().catch(() => undefined);
    }
    throwIfCancelled(signal);
    return { header: surface.header, events: loaded.events, ...(loaded.title === undefined ? {} : { title: loaded.title }) };
  }
  throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
}

/** Whole logs from the transcript files under the sessions root `root()` gives (it may change). */
export function sessionLogFiles(root: () => string, sessions: SessionStore): { read(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog> } {
  return { read: (sessionId, signal) => readSessionLogFile(root(), sessions, sessionId, signal) };
}
