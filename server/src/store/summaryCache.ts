/**
 * The persistent index cache: summaries keyed by root-relative path with the file identity
 * they describe, so a restart re-reads only transcripts that changed. Lives outside the root;
 * a missing, foreign, corrupt or truncated cache is simply an empty one.
 *
 * One JSON record per line (a head line naming format and root, one line per transcript, a
 * trailer line with the entry count and the SHA-256 of every line before it), read and written
 * a chunk at a time: a 100,000-entry cache never exists as one string or one parsed document,
 * so loading and saving need little memory and never hold the event loop for long. A cache
 * whose checksum does not match (any byte changed, lines spliced from another cache) is empty:
 * damage costs a re-read, never a wrong listing.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import { storeWorkSlices } from './concurrency';
import { openRegularFile } from './regularFile';
import type { ResumeState } from './summarize/summarizeFile';
import type { FileIdentity } from './transcriptFiles';
import type { TranscriptSummary } from './transcriptSummary';

/**
 * Bump when the file layout, the summary shape or the decoder's title/damage semantics change.
 * 4: checksum in the trailer, change time in identities, prefix digests in resume states,
 * omitted entries.
 */
export const SUMMARY_CACHE_FORMAT = 4;

/** One cached summary. */
export interface CachedSummary {
  identity: FileIdentity;
  summary: TranscriptSummary;
  /** Summarizer state, kept for recently written transcripts so an append after a restart resumes. */
  resume?: ResumeState;
}

/** The first line. */
interface CacheHead {
  format: number;
  root: string;
}

/** One line per transcript. */
interface CacheLine extends CachedSummary {
  key: string;
}

/**
 * An entry too long for a line (a title of megabytes): only the identity is kept, so a restart
 * that finds the transcript unchanged re-reads it alone and does not rewrite the cache.
 */
interface OmittedLine {
  key: string;
  identity: FileIdentity;
  omitted: true;
}

/** The last line: without it (or with another count or checksum) the file is not used. */
interface CacheTrailer {
  end: true;
  entries: number;
  /** SHA-256 (hex) of every line before this one, newlines included, as UTF-8. */
  sha256: string;
}

/**
 * A line longer than this is not ours (an older single-document cache, or garbage): stop
 * reading. The writer keeps every line below it (see {@link OmittedLine}).
 */
const MAX_LINE_CHARS = 4 * 1024 * 1024;

/** The most bytes such a line can take in UTF-8 (three a UTF-16 unit at most). */
const MAX_LINE_BYTES = 3 * MAX_LINE_CHARS;

/** A temp file untouched this long is a killed write's leftover (a live write touches it every chunk). */
export const STALE_TEMP_MS = 60_000;

/** …and this long, when the process named in it is not running. */
const STALE_DEAD_WRITER_TEMP_MS = 5_000;

/** Bytes written at once (one reused buffer). */
const WRITE_CHUNK_BYTES = 256 * 1024;

/** The cache file for a root inside a cache directory (one file per root). */
export function summaryCacheFile(cacheDir: string, root: string): string {
  return path.join(cacheDir, `session-index-${rootDigest(root)}.jsonl`);
}

/** The single-document cache of formats 1–2, removed once a new cache is written. */
function legacyCacheFile(file: string): string {
  return file.replace(/\.jsonl$/, '.json');
}

function rootDigest(root: string): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 16);
}

/** Whether `candidate` is `dir` itself or lies below it (both absolute). */
export function isWithin(candidate: string, dir: string): boolean {
  const rel = path.relative(dir, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Whether a cache directory lies inside a store it would describe (any of `roots`, absolute),
 * as given or with its links resolved: a cache never lives inside its store, dsh's or a home.
 */
export async function cacheDirInside(cacheDir: string, roots: readonly string[], realpath: (dir: string) => Promise<string> = fsp.realpath): Promise<boolean> {
  const resolved = path.resolve(cacheDir);
  const real = await realpath(resolved).catch(() => resolved);
  return [resolved, real].some((dir) => roots.some((root) => isWithin(dir, root)));
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

function isIdentity(identity: unknown): identity is FileIdentity {
  if (!isObject(identity)) return false;
  return isNumber(identity.size) && isNumber(identity.mtimeMs) && isNumber(identity.ctimeMs) && isNumber(identity.ino) && isNumber(identity.dev);
}

function isCachedSummary(value: unknown): value is CachedSummary {
  if (!isObject(value)) return false;
  const { identity, summary } = value as Partial<CachedSummary>;
  if (!isIdentity(identity)) return false;
  if (!isObject(summary)) return false;
  // A read failure is never the file's state: such an entry is not ours.
  if (typeof summary.headerProblem === 'string' && summary.headerProblem.startsWith('cannot read')) return false;
  if (summary.capturedThroughSeq !== null && !isNumber(summary.capturedThroughSeq)) return false;
  if (summary.title !== undefined && typeof summary.title !== 'string') return false;
  if (summary.headerProblem !== undefined && typeof summary.headerProblem !== 'string') return false;
  if (summary.header !== undefined) {
    if (!isObject(summary.header)) return false;
    const { id, cwd, createdAt } = summary.header;
    if (typeof id !== 'string' || !isNumber(createdAt) || (cwd !== undefined && typeof cwd !== 'string')) return false;
  } else if (summary.headerProblem === undefined) {
    return false;
  }
  const { resume } = value as Partial<CachedSummary>;
  if (resume !== undefined && (!isObject(resume) || !isObject(resume.summarizer) || typeof resume.prefixSha256 !== 'string')) return false;
  if (summary.bodyError !== undefined) {
    if (!isObject(summary.bodyError)) return false;
    const { reason, message } = summary.bodyError;
    if (typeof reason !== 'string' || typeof message !== 'string') return false;
  }
  return true;
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** Lines of one chunk of the cache file, and where each starts in it. */
interface LineBatch {
  lines: string[];
  starts: number[];
}

/**
 * The cache file's lines, read as bytes: each line is decoded alone (a newline byte never lies
 * inside a UTF-8 sequence), and the SHA-256 of the bytes before the current line is kept a chunk
 * at a time rather than a line at a time. Stops (throws) at a line too long to be ours.
 */
class CacheLines {
  private readonly checksum = createHash('sha256');
  private digested = false;
  /** The bytes the current line lies in, how far they are hashed, and where the current line starts. */
  private chunk: Buffer = Buffer.alloc(0);
  private hashedTo = 0;
  private lineStart = 0;

  constructor(private readonly file: string) {}

  /** The lines a chunk of the file completes, together (the current line is the one being handled). */
  async *lines(): AsyncGenerator<LineBatch> {
    // Not a regular file (a FIFO would never end the read, a device never end the file): no cache.
    const stream = createReadStream(this.file, { fd: await openRegularFile(this.file), highWaterMark: 64 * 1024 });
    // An unfinished line's bytes, kept until its newline comes (one copy then, however many chunks it spans).
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    try {
      for await (const data of stream as AsyncIterable<Buffer>) {
        if (pending.length > 0 && data.indexOf(0x0a) === -1) {
          pending.push(data);
          pendingBytes += data.length;
          if (pendingBytes > MAX_LINE_BYTES) throw new Error('cache line too long');
          continue;
        }
        const chunk = pending.length === 0 ? data : Buffer.concat([...pending, data]);
        pending = [];
        pendingBytes = 0;
        this.enter(chunk);
        const batch: LineBatch = { lines: [], starts: [] };
        let start = 0;
        for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
          const line = chunk.toString('utf8', start, end);
          if (line.length > MAX_LINE_CHARS) throw new Error('cache line too long');
          batch.lines.push(line);
          batch.starts.push(start);
          start = end + 1;
        }
        if (batch.lines.length > 0) yield batch;
        this.lineStart = start;
        if (start < chunk.length) {
          pending.push(chunk.subarray(start));
          pendingBytes = chunk.length - start;
          if (pendingBytes > MAX_LINE_BYTES) throw new Error('cache line too long');
        }
      }
    } finally {
      stream.destroy();
    }
    if (pending.length > 0) {
      const rest = Buffer.concat(pending);
      this.enter(rest);
      yield { lines: [rest.toString('utf8')], starts: [0] };
    }
  }

  /** Starts on new bytes, hashing what was left of the ones before (the lines before them). */
  private enter(chunk: Buffer): void {
    this.hashThroughLineStart();
    this.chunk = chunk;
    this.hashedTo = 0;
    this.lineStart = 0;
  }

  private hashThroughLineStart(): void {
    if (!this.digested && this.lineStart > this.hashedTo) this.checksum.update(this.chunk.subarray(this.hashedTo, this.lineStart));
    this.hashedTo = this.lineStart;
  }

  /** SHA-256 (hex) of every line before the current one, which starts at `lineStart` in the batch's chunk; once. */
  digestBefore(lineStart: number): string {
    this.lineStart = lineStart;
    this.hashThroughLineStart();
    this.digested = true;
    return this.checksum.digest('hex');
  }
}

/**
 * Reads the cached summaries for `root`. Anything but a complete, intact cache of this format
 * and root (head line, entry lines, trailer with their count and checksum) is empty; a
 * malformed entry line in an intact file is dropped alone. The identities of entries written
 * without their summary (too long for a line) go to `omitted` when given.
 */
export async function loadSummaryCache(file: string, root: string, omitted?: Map<string, FileIdentity>): Promise<Map<string, CachedSummary>> {
  const cached = new Map<string, CachedSummary>();
  const omittedHere = new Map<string, FileIdentity>();
  const reader = new CacheLines(file);
  let lines = 0;
  let complete = false;
  try {
    for await (const batch of reader.lines()) {
      for (let i = 0; i < batch.lines.length; i++) {
        const line = batch.lines[i]!;
        if (complete) {
          if (line === '') continue;
          return new Map(); // bytes after the trailer: not a file we wrote
        }
        const record = parseLine(line);
        if (lines++ === 0) {
          const head = record as Partial<CacheHead> | undefined;
          if (!isObject(head) || head.format !== SUMMARY_CACHE_FORMAT || head.root !== root) return cached;
          continue;
        }
        if (isObject(record) && record.end === true) {
          complete = isNumber(record.entries) && record.entries === lines - 2 && record.sha256 === reader.digestBefore(batch.starts[i]!);
          if (!complete) return new Map();
          continue;
        }
        if (!isObject(record) || typeof record.key !== 'string') continue;
        if (record.omitted === true) {
          if (isIdentity(record.identity)) omittedHere.set(record.key, record.identity);
        } else if (isCachedSummary(record)) {
          const { key, identity, summary, resume } = record as unknown as CacheLine;
          cached.set(key, resume === undefined ? { identity, summary } : { identity, summary, resume });
        }
      }
    }
  } catch {
    return new Map();
  }
  if (!complete) return new Map();
  for (const [key, identity] of omittedHere) omitted?.set(key, identity);
  return cached;
}

function cacheLine(key: string, cached: CachedSummary): string {
  const line: CacheLine = { key, identity: cached.identity, summary: cached.summary };
  if (cached.resume !== undefined) line.resume = cached.resume;
  const text = JSON.stringify(line);
  if (text.length < MAX_LINE_CHARS) return `${text}\n`;
  const stub: OmittedLine = { key, identity: cached.identity, omitted: true };
  return `${JSON.stringify(stub)}\n`;
}

/** The temp file of one write: the writer's pid in its name tells a live write from a killed one's leftover. */
function tempFileFor(file: string): string {
  return `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/** A cache temp file's name: `session-index-<digest>.jsonl.<pid>.<random>.tmp` (or, before format 4, without the pid). */
const TEMP_NAME = /^session-index-[0-9a-f]{16}\.jsonl\.(?:(\d+)\.)?[0-9a-f]{12}\.tmp$/;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/**
 * Removes the temp files killed writes left in a cache directory: those untouched for
 * {@link STALE_TEMP_MS}, or for a few seconds when the process named in them is not running.
 * Another server may be writing its own right now: its file is recent and its pid alive.
 * Returns the names removed.
 */
export async function removeStaleTempFiles(cacheDir: string, now = Date.now()): Promise<string[]> {
  let names: string[];
  try {
    names = await fsp.readdir(cacheDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMP_NAME.exec(name);
    if (!match) continue;
    const full = path.join(cacheDir, name);
    try {
      const stats = await fsp.lstat(full);
      if (!stats.isFile()) continue;
      const age = now - stats.mtimeMs;
      const pid = match[1] === undefined ? undefined : Number(match[1]);
      const writerGone = pid === undefined || (pid !== process.pid && !isRunning(pid));
      if (age < STALE_TEMP_MS && !(writerGone && age >= STALE_DEAD_WRITER_TEMP_MS)) continue;
      await fsp.rm(full, { force: true });
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove: nothing to do
    }
  }
  return removed;
}

/** Cache writes in progress, of every store and agent home (see {@link cacheWritesSettled}). */
const cacheWrites = new Set<Promise<void>>();

/**
 * Resolves once no cache write is in progress: a write of a disposed store stops at its next entry
 * and removes its temp file, so a process that waits for this before exiting leaves no `.tmp` behind.
 */
export async function cacheWritesSettled(): Promise<void> {
  while (cacheWrites.size > 0) await Promise.allSettled([...cacheWrites]);
}

/**
 * Writes the cache atomically (temp file + rename in the cache directory), a chunk at a time:
 * `entries` is iterated lazily, so a caller can hand over a view of its index.
 */
export function saveSummaryCache(file: string, root: string, entries: Iterable<[string, CachedSummary]>): Promise<void> {
  const write = writeSummaryCache(file, root, entries);
  const tracked = write.then(
    () => undefined,
    () => undefined,
  );
  cacheWrites.add(tracked);
  void tracked.finally(() => cacheWrites.delete(tracked));
  return write;
}

async function writeSummaryCache(file: string, root: string, entries: Iterable<[string, CachedSummary]>): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const temp = tempFileFor(file);
  const handle = await fsp.open(temp, 'w');
  try {
    const head: CacheHead = { format: SUMMARY_CACHE_FORMAT, root };
    const checksum = createHash('sha256');
    // Each line is encoded into one reused buffer at once, so it dies young: lines joined into a
    // string chunk lived across collections, and at 100,000 entries their ~50 MB of garbage
    // reached the old generation (measured: +14 MiB RSS at the write, the cold run's peak).
    const buffer = Buffer.allocUnsafe(WRITE_CHUNK_BYTES);
    let used = 0;
    const write = async (bytes: Buffer): Promise<void> => {
      checksum.update(bytes);
      await handle.writeFile(bytes);
    };
    const put = async (text: string): Promise<void> => {
      const length = Buffer.byteLength(text);
      if (used + length > buffer.length && used > 0) {
        await write(buffer.subarray(0, used));
        used = 0;
      }
      if (length > buffer.length) await write(Buffer.from(text, 'utf-8'));
      else used += buffer.write(text, used, 'utf-8');
    };
    await put(`${JSON.stringify(head)}\n`);
    let count = 0;
    for (const [key, cached] of entries) {
      // Lines are made synchronously between the writes: let answers in between (concurrency.ts).
      await storeWorkSlices.pause();
      await put(cacheLine(key, cached));
      count++;
    }
    if (used > 0) await write(buffer.subarray(0, used));
    const trailer: CacheTrailer = { end: true, entries: count, sha256: checksum.digest('hex') };
    await handle.writeFile(`${JSON.stringify(trailer)}\n`);
    await handle.close();
    await fsp.rename(temp, file);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fsp.rm(temp, { force: true });
    throw error;
  }
  const legacy = legacyCacheFile(file);
  if (legacy !== file) await fsp.rm(legacy, { force: true }).catch(() => undefined);
}
