/**
 * `readSurface`: find one session by id directly on disk (every project directory, as dsh's
 * lookup does; the cwd is not needed) and load a fresh snapshot of its log, streamed in bounded
 * reads ({@link loadOpenTranscript}, which the transcript view uses too).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { SessionReadError, type SessionSurface } from '../resolver/sessionStore';
import { pathBindingProblem } from './binding';
import { ConcurrencyLimit, throwIfAborted } from './concurrency';
import { DISCOVERY_REASONS } from './discovery';
import { encodeSegment, TRANSCRIPT_NAMES, type TranscriptEncoding } from './layout';
import { LISTING_REASONS } from './listing';
import { createSessionLogLoader, type LoadedSessionLog, type LoadSessionLogOptions } from './log';
import { ensureZstdSupport } from './transcriptIndex';
import { fileIdentity, type FileIdentity, type OpenTranscript, type TranscriptFiles } from './transcriptFiles';

/**
 * The load failure already known for a transcript (root-relative key) at exactly this file
 * identity: the same bytes fail the same way, so they need not be read again.
 */
export type KnownFailure = (key: string, identity: FileIdentity) => { reason: SessionReadError['reason']; message: string } | undefined;

/**
 * Read granularity of a full load. zstd bytes are queued until their frame is complete, so a
 * smaller chunk also keeps that queue small (3 × 10 MB logs loaded no slower with 256 KiB reads than with 1 MiB).
 */
const READ_CHUNK_BYTES = 256 * 1024;

/** Lookups stat project directories in parallel, within this bound. */
const LOOKUP_CONCURRENCY = 32;

type Copy = { projectDir: string; kind: 'session' | 'symlink' | 'flat'; transcripts: TranscriptEncoding[] };

function notFound(sessionId: string): SessionReadError {
  return new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
}

async function lstatOrUndefined(files: TranscriptFiles, file: string) {
  try {
    return await files.lstat(file);
  } catch {
    return undefined;
  }
}

/** Every real directory directly under the root (each one is a project directory, whatever its name). */
async function projectDirectories(root: string): Promise<string[]> {
  try {
    return (await fsp.readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
}

/** Every place below the root where a session directory (or flat transcript) for this id sits. */
async function findCopies(root: string, projectDirs: string[], dirName: string, files: TranscriptFiles): Promise<Copy[]> {
  const limit = new ConcurrencyLimit(LOOKUP_CONCURRENCY);
  const copies = await Promise.all(
    projectDirs.map((projectDir) =>
      limit.run(async (): Promise<Copy | undefined> => {
        const sessionPath = path.join(root, projectDir, dirName);
        const stats = await lstatOrUndefined(files, sessionPath);
        if (stats?.isSymbolicLink()) return { projectDir, kind: 'symlink', transcripts: [] };
        if (!stats?.isDirectory()) return undefined;
        const transcripts: TranscriptEncoding[] = [];
        let linked = false;
        for (const encoding of ['raw', 'zstd'] as const) {
          const t = await lstatOrUndefined(files, path.join(sessionPath, TRANSCRIPT_NAMES[encoding]));
          if (t?.isFile()) transcripts.push(encoding);
          else if (t?.isSymbolicLink()) linked = true;
        }
        if (transcripts.length === 0 && linked) return { projectDir, kind: 'symlink', transcripts };
        // A session directory without a transcript is not a session (dsh skips it too).
        return transcripts.length > 0 ? { projectDir, kind: 'session', transcripts } : undefined;
      }),
    ),
  );
  return copies.filter((copy): copy is Copy => copy !== undefined);
}

/** Flat-layout transcripts for this id (only looked for when no session directory exists). */
async function findFlatCopies(root: string, projectDirs: string[], dirName: string, files: TranscriptFiles): Promise<string[]> {
  const found: string[] = [];
  for (const projectDir of projectDirs) {
    for (const name of Object.values(TRANSCRIPT_NAMES)) {
      const flat = path.join(root, projectDir, `${dirName}${name.slice('session'.length)}`);
      if (await lstatOrUndefined(files, flat)) found.push(flat);
    }
  }
  return found;
}

/**
 * One session's current surface, read fresh from disk. Rejects with `SessionReadError`:
 * `not-found`, `ambiguous`, `unsupported` (entries our listing skips), or the decoder's reason.
 */
export async function readSessionSurface(
  root: string | undefined,
  sessionId: string,
  files: TranscriptFiles,
  signal?: AbortSignal,
  knownFailure?: KnownFailure,
): Promise<SessionSurface> {
  throwIfAborted(signal);
  if (root === undefined || sessionId === '') throw notFound(sessionId);
  const dirName = encodeSegment(sessionId);
  const projectDirs = await projectDirectories(root);
  throwIfAborted(signal);
  const copies = await findCopies(root, projectDirs, dirName, files);
  throwIfAborted(signal);
  if (copies.length > 1) {
    throw new SessionReadError(
      'ambiguous',
      `session ${JSON.stringify(sessionId)} is ambiguous: found in ${copies.length} project directories (${copies
        .map((c) => c.projectDir)
        .join(', ')})`,
    );
  }
  if (copies.length === 0) {
    const flat = await findFlatCopies(root, projectDirs, dirName, files);
    if (flat.length > 0) throw new SessionReadError('unsupported', `${DISCOVERY_REASONS.flat}: ${flat.join(', ')}`);
    throw notFound(sessionId);
  }
  const [copy] = copies;
  const sessionPath = path.join(root, copy.projectDir, dirName);
  if (copy.kind === 'symlink') throw new SessionReadError('unsupported', `${DISCOVERY_REASONS.symlink}: ${sessionPath}`);
  if (copy.transcripts.length > 1) {
    throw new SessionReadError('unsupported', `${LISTING_REASONS.bothEncodings}: ${sessionPath}`);
  }
  const encoding = copy.transcripts[0];
  const file = path.join(sessionPath, TRANSCRIPT_NAMES[encoding]);
  if (encoding === 'zstd') await ensureZstdSupport();

  let loaded: LoadedSessionLog;
  let identity;
  try {
    const handle = await files.open(file);
    try {
      const stats = await handle.stat();
      identity = fileIdentity(stats);
      const known = knownFailure?.([copy.projectDir, dirName, TRANSCRIPT_NAMES[encoding]].join('/'), identity);
      if (known) throw new SessionReadError(known.reason, known.message);
      // Only the current surface is kept (`readSurface` needs no other event).
      loaded = await loadOpenTranscript(handle, stats.size, encoding, { expectedId: sessionId, keepEvents: false, signal });
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch (error) {
    if (error instanceof SessionReadError || signal?.aborted) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(sessionId);
    throw new SessionReadError('io', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  const header = { id: loaded.header.id, createdAt: loaded.header.createdAt } as SessionSurface['header'];
  if (loaded.header.cwd !== undefined) header.cwd = loaded.header.cwd;
  const key = [copy.projectDir, dirName, TRANSCRIPT_NAMES[encoding]].join('/');
  const unbound = await pathBindingProblem(root, key, encoding, header, identity, files);
  if (unbound !== undefined) {
    throw new SessionReadError('corrupt', `corrupt session log ${file}: ${unbound}`);
  }
  throwIfAborted(signal);
  return { header, capturedThroughSeq: loaded.capturedThroughSeq, events: loaded.surface };
}

/**
 * Where a raw log's last complete line ends. What follows is a torn tail that loading drops
 * (§5.4), so it is never fed (a huge unterminated line would otherwise be buffered up to the
 * record limit). A file without any `\n` is fed whole: its header's fate is the decoder's call.
 */
async function rawCommittedEnd(handle: OpenTranscript, size: number, buffer: Uint8Array): Promise<number> {
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - buffer.length);
    const { bytesRead } = await handle.read(buffer, 0, end - start, start);
    if (bytesRead < end - start) return size; // changed under us: let the decoder see it all
    const newline = buffer.lastIndexOf(0x0a, end - start - 1);
    if (newline !== -1) return start + newline + 1;
    end = start;
  }
  return size;
}

/** Options of {@link loadOpenTranscript}. */
export interface OpenTranscriptLoadOptions extends Pick<LoadSessionLogOptions, 'expectedId' | 'keepEvents'> {
  signal?: AbortSignal;
}

/**
 * The full load dsh's `inspect()` performs (`loadSessionLog`), fed from an open transcript in
 * chunks up to its size when opened: a snapshot whose memory is bounded by what `keepEvents` keeps
 * and the record limit, never by the log's size. For 'zstd', `await ensureZstdSupport()` first.
 */
export async function loadOpenTranscript(
  handle: OpenTranscript,
  size: number,
  encoding: TranscriptEncoding,
  options: OpenTranscriptLoadOptions = {},
): Promise<LoadedSessionLog> {
  const { signal, ...loadOptions } = options;
  const loader = createSessionLogLoader(encoding, loadOptions);
  const buffer = new Uint8Array(Math.min(READ_CHUNK_BYTES, size)); // the loader copies what it keeps
  const end = encoding === 'raw' ? await rawCommittedEnd(handle, size, buffer) : size;
  for (let position = 0; position < end; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - position), position);
    if (bytesRead === 0) break; // shrank while being read: what was read is the snapshot
    loader.push(buffer.subarray(0, bytesRead));
    position += bytesRead;
    throwIfAborted(signal);
  }
  return loader.finish();
}
