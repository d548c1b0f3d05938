/**
 * The persistent index cache: summaries keyed by root-relative path with the file identity
 * they describe, so a restart re-reads only transcripts that changed. Lives outside the root;
 * a missing, foreign, corrupt or truncated cache is simply an empty one.
 *
 * One JSON record per line (a head line naming format and root, one line per transcript, a
 * trailer line with the entry count), read and written a chunk at a time: a 100,000-entry cache
 * never exists as one string or one parsed document, so loading and saving need little memory
 * and never hold the event loop for long.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { SessionLogSummarizerJSON } from './log';
import type { FileIdentity } from './transcriptFiles';
import type { TranscriptSummary } from './transcriptIndex';

/** Bump when the file layout, the summary shape or the decoder's title/damage semantics change. */
export const SUMMARY_CACHE_FORMAT = 3;

/** One cached summary. */
export interface CachedSummary {
  identity: FileIdentity;
  summary: TranscriptSummary;
  /** Summarizer state, kept for recently written transcripts so an append after a restart resumes. */
  resume?: SessionLogSummarizerJSON;
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

/** The last line: without it (or with another count) the file was cut short and is not used. */
interface CacheTrailer {
  end: true;
  entries: number;
}

/** A line longer than this is not ours (an older single-document cache, or garbage): stop reading. */
const MAX_LINE_CHARS = 4 * 1024 * 1024;

/** Characters written at once. */
const WRITE_CHUNK_CHARS = 256 * 1024;

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

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

function isCachedSummary(value: unknown): value is CachedSummary {
  if (!isObject(value)) return false;
  const { identity, summary } = value as Partial<CachedSummary>;
  if (!isObject(identity)) return false;
  if (![identity.size, identity.mtimeMs, identity.ino, identity.dev].every(isNumber)) return false;
  if (!isObject(summary)) return false;
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
  if (resume !== undefined && !isObject(resume)) return false;
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

/** Yields the file's lines as they are read; stops (throws) at a line too long to be ours. */
async function* readLines(file: string): AsyncGenerator<string> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  let rest = '';
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let text = rest + chunk;
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        yield text.slice(start, end);
        start = end + 1;
      }
      text = text.slice(start);
      if (text.length > MAX_LINE_CHARS) throw new Error('cache line too long');
      rest = text;
    }
  } finally {
    stream.destroy();
  }
  if (rest !== '') yield rest;
}

/**
 * Reads the cached summaries for `root`. Anything but a complete cache of this format and root
 * (head line, entry lines, trailer with their count) is empty; a malformed entry line in a
 * complete file is dropped alone (its identity is what makes an entry trusted, not its neighbours).
 */
export async function loadSummaryCache(file: string, root: string): Promise<Map<string, CachedSummary>> {
  const cached = new Map<string, CachedSummary>();
  let lines = 0;
  let complete = false;
  try {
    for await (const line of readLines(file)) {
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
        complete = isNumber(record.entries) && record.entries === lines - 2;
        if (!complete) return new Map();
        continue;
      }
      if (isObject(record) && typeof record.key === 'string' && isCachedSummary(record)) {
        const { key, identity, summary, resume } = record as unknown as CacheLine;
        cached.set(key, resume === undefined ? { identity, summary } : { identity, summary, resume });
      }
    }
  } catch {
    return new Map();
  }
  return complete ? cached : new Map();
}

function cacheLine(key: string, cached: CachedSummary): string {
  const line: CacheLine = { key, identity: cached.identity, summary: cached.summary };
  if (cached.resume !== undefined) line.resume = cached.resume;
  return `${JSON.stringify(line)}\n`;
}

/**
 * Writes the cache atomically (temp file + rename in the cache directory), a chunk at a time:
 * `entries` is iterated lazily, so a caller can hand over a view of its index.
 */
export async function saveSummaryCache(file: string, root: string, entries: Iterable<[string, CachedSummary]>): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await fsp.open(temp, 'w');
  try {
    const head: CacheHead = { format: SUMMARY_CACHE_FORMAT, root };
    let chunk = `${JSON.stringify(head)}\n`;
    let count = 0;
    for (const [key, cached] of entries) {
      chunk += cacheLine(key, cached);
      count++;
      if (chunk.length >= WRITE_CHUNK_CHARS) {
        await handle.writeFile(chunk);
        chunk = '';
      }
    }
    const trailer: CacheTrailer = { end: true, entries: count };
    await handle.writeFile(`${chunk}${JSON.stringify(trailer)}\n`);
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
