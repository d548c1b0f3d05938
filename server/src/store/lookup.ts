/**
 * `readSurface`: find one session by id directly on disk (every project directory, as dsh's
 * lookup does; the cwd is not needed) and load a fresh snapshot of its log, streamed in bounded
 * reads ({@link loadOpenTranscript}, which the transcript view uses too).
 */
import { lstatSync, promises as fsp, type Stats } from 'node:fs';
import path from 'node:path';
import { SessionReadError, type SessionSurface } from '../resolver/sessionStore';
import { pathBindingProblem } from './binding';
import { throwIfAborted } from './concurrency';
import { DISCOVERY_REASONS } from './discovery';
import { encodeSegment, LISTING_REASONS, TRANSCRIPT_NAMES, type TranscriptEncoding } from './layout';
import { createSessionLogLoader, initZstdSupport, type LoadedSessionLog, type LoadSessionLogOptions } from './log';
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

/**
 * The longest stretch of synchronous stats a lookup runs before it lets the event loop answer
 * other requests. Synchronous stats because a lookup makes one per project directory (thousands
 * in a large store), and one promise-based stat costs several times the syscall itself (and a
 * thrown error per missing entry).
 */
const SCAN_SLICE_MS = 2;

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

/** What sits at `file` (links not followed); undefined when nothing, or nothing we may look at, is there. */
function lstatSyncOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** Every real directory directly under the root (each one is a project directory, whatever its name). */
async function listProjectDirectories(root: string): Promise<string[]> {
  try {
    return (await fsp.readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
}

/**
 * Root listings shared by the lookups that start in one synchronous run (the sources of one
 * prepare): they would all list the root at the same instant anyway. Dropped once that run ends,
 * so a later lookup lists afresh and sees project directories created since.
 */
const rootListingsOfThisRun = new Map<string, Promise<string[]>>();

function projectDirectories(root: string): Promise<string[]> {
  let listing = rootListingsOfThisRun.get(root);
  if (listing === undefined) {
    listing = listProjectDirectories(root);
    rootListingsOfThisRun.set(root, listing);
    queueMicrotask(() => rootListingsOfThisRun.delete(root));
  }
  return listing;
}

/**
 * Calls `visit` for every project directory, in order, synchronously in slices of at most
 * {@link SCAN_SLICE_MS}, yielding to the event loop between slices.
 */
async function eachProjectDirectory(projectDirs: string[], visit: (projectDir: string) => void, signal?: AbortSignal): Promise<void> {
  let sliceStart = performance.now();
  for (const projectDir of projectDirs) {
    visit(projectDir);
    if (performance.now() - sliceStart >= SCAN_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      throwIfAborted(signal);
      sliceStart = performance.now();
    }
  }
}

/** Every place below the root where a session directory (or flat transcript) for this id sits. */
async function findCopies(root: string, projectDirs: string[], dirName: string, files: TranscriptFiles, signal?: AbortSignal): Promise<Copy[]> {
  const entries: { projectDir: string; link: boolean }[] = [];
  await eachProjectDirectory(
    projectDirs,
    (projectDir) => {
      const stats = lstatSyncOrUndefined(path.join(root, projectDir, dirName));
      if (stats?.isSymbolicLink()) entries.push({ projectDir, link: true });
      else if (stats?.isDirectory()) entries.push({ projectDir, link: false });
    },
    signal,
  );
  const copies: Copy[] = [];
  for (const { projectDir, link } of entries) {
    if (link) {
      copies.push({ projectDir, kind: 'symlink', transcripts: [] });
      continue;
    }
    const sessionPath = path.join(root, projectDir, dirName);
    const transcripts: TranscriptEncoding[] = [];
    let linked = false;
    for (const encoding of ['raw', 'zstd'] as const) {
      const t = await lstatOrUndefined(files, path.join(sessionPath, TRANSCRIPT_NAMES[encoding]));
      if (t?.isFile()) transcripts.push(encoding);
      else if (t?.isSymbolicLink()) linked = true;
    }
    if (transcripts.length === 0 && linked) copies.push({ projectDir, kind: 'symlink', transcripts });
    // A session directory without a transcript is not a session (dsh skips it too).
    else if (transcripts.length > 0) copies.push({ projectDir, kind: 'session', transcripts });
  }
  return copies;
}

/** Flat-layout transcripts for this id (only looked for when no session directory exists). */
async function findFlatCopies(root: string, projectDirs: string[], dirName: string, signal?: AbortSignal): Promise<string[]> {
  const found: string[] = [];
  const flatNames = Object.values(TRANSCRIPT_NAMES).map((name) => `${dirName}${name.slice('session'.length)}`);
  await eachProjectDirectory(
    projectDirs,
    (projectDir) => {
      for (const flatName of flatNames) {
        const flat = path.join(root, projectDir, flatName);
        if (lstatSyncOrUndefined(flat)) found.push(flat);
      }
    },
    signal,
  );
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
  const copies = await findCopies(root, projectDirs, dirName, files, signal);
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
    const flat = await findFlatCopies(root, projectDirs, dirName, signal);
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
  if (encoding === 'zstd') await initZstdSupport();

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
 * and the record limit, never by the log's size. For 'zstd', `await initZstdSupport()` first.
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
  try {
    for (let position = 0; position < end; ) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - position), position);
      if (bytesRead === 0) break; // shrank while being read: what was read is the snapshot
      // A few KB of zstd may decode to a GiB: the decoding yields, and stops when cancelled.
      await loader.pushAsync(buffer.subarray(0, bytesRead), signal);
      position += bytesRead;
      throwIfAborted(signal);
    }
    await loader.prepareFinish(signal);
    throwIfAborted(signal);
    return loader.finish();
  } finally {
    loader.releaseMemory(); // a long line's memory from the read budget, when the load stopped early
  }
}
