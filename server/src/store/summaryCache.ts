/**
 * The persistent index cache: summaries keyed by root-relative path with the file identity
 * they describe, so a restart re-reads only transcripts that changed. Lives outside the root;
 * a missing, foreign or corrupt cache is simply an empty one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { SessionLogSummarizerJSON } from './log';
import type { FileIdentity } from './transcriptFiles';
import type { TranscriptSummary } from './transcriptIndex';

/** Bump when the summary shape or the decoder's title/damage semantics change. */
export const SUMMARY_CACHE_FORMAT = 2;

/** One cached summary. */
export interface CachedSummary {
  identity: FileIdentity;
  summary: TranscriptSummary;
  /** Summarizer state, kept for recently written transcripts so an append after a restart resumes. */
  resume?: SessionLogSummarizerJSON;
}

interface CacheFile {
  format: number;
  root: string;
  entries: Record<string, CachedSummary>;
}

/** The cache file for a root inside a cache directory (one file per root). */
export function summaryCacheFile(cacheDir: string, root: string): string {
  const digest = createHash('sha256').update(root).digest('hex').slice(0, 16);
  return path.join(cacheDir, `session-index-${digest}.json`);
}

/** Whether `candidate` is `dir` itself or lies below it (both absolute). */
export function isWithin(candidate: string, dir: string): boolean {
  const rel = path.relative(dir, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function isCachedSummary(value: unknown): value is CachedSummary {
  if (typeof value !== 'object' || value === null) return false;
  const { identity, summary } = value as Partial<CachedSummary>;
  if (typeof identity !== 'object' || identity === null) return false;
  if (![identity.size, identity.mtimeMs, identity.ino, identity.dev].every(isNumber)) return false;
  if (typeof summary !== 'object' || summary === null) return false;
  if (summary.capturedThroughSeq !== null && !isNumber(summary.capturedThroughSeq)) return false;
  if (summary.title !== undefined && typeof summary.title !== 'string') return false;
  if (summary.headerProblem !== undefined && typeof summary.headerProblem !== 'string') return false;
  if (summary.header !== undefined) {
    const { id, cwd, createdAt } = summary.header;
    if (typeof id !== 'string' || !isNumber(createdAt) || (cwd !== undefined && typeof cwd !== 'string')) return false;
  } else if (summary.headerProblem === undefined) {
    return false;
  }
  const { resume } = value as Partial<CachedSummary>;
  if (resume !== undefined && (typeof resume !== 'object' || resume === null)) return false;
  if (summary.bodyError !== undefined) {
    const { reason, message } = summary.bodyError;
    if (typeof reason !== 'string' || typeof message !== 'string') return false;
  }
  return true;
}

/** Reads the cached summaries for `root`; anything unreadable is dropped. */
export async function loadSummaryCache(file: string, root: string): Promise<Map<string, CachedSummary>> {
  const cached = new Map<string, CachedSummary>();
  let parsed: Partial<CacheFile>;
  try {
    parsed = JSON.parse(await fsp.readFile(file, 'utf8')) as Partial<CacheFile>;
  } catch {
    return cached;
  }
  if (parsed?.format !== SUMMARY_CACHE_FORMAT || parsed.root !== root) return cached;
  if (typeof parsed.entries !== 'object' || parsed.entries === null) return cached;
  for (const [key, value] of Object.entries(parsed.entries)) {
    if (isCachedSummary(value)) cached.set(key, value);
  }
  return cached;
}

/** Writes the cache atomically (temp file + rename in the cache directory). */
export async function saveSummaryCache(file: string, root: string, entries: Iterable<[string, CachedSummary]>): Promise<void> {
  const content: CacheFile = { format: SUMMARY_CACHE_FORMAT, root, entries: Object.fromEntries(entries) };
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await fsp.writeFile(temp, JSON.stringify(content));
    await fsp.rename(temp, file);
  } catch (error) {
    await fsp.rm(temp, { force: true });
    throw error;
  }
}
