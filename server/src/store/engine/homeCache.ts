/**
 * The persistent cache of one agent home: read into the home's index before the first walk, and
 * rewritten from it after a quiet time when it differs (one write at a time).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { CacheRule, FormatAdapter } from '../formats/adapter';
import { cacheDirInside, loadSummaryCache, removeStaleTempFiles, saveSummaryCache, summaryCacheFile, type CachedSummary } from '../summaryCache';
import type { HomeIndex } from './homeIndex';

/** Whether a cache key names a session file where the format keeps them (a cache line is never trusted). */
function isSessionKey(format: FormatAdapter, key: string): boolean {
  const parts = key.split('/');
  if (parts.length !== format.leafDepth + 2 || parts[0] !== format.base) return false;
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('\\'))) return false;
  if (format.leafName !== undefined && parts[parts.length - 2] !== format.leafName) return false;
  return format.isSessionFile(parts[parts.length - 1]!);
}

/**
 * The index's entries as cache lines: the listed files first, in store order (a restart loads the
 * entries in that order, so its first listing is built already sorted), then the others.
 */
function* cachedEntries(index: HomeIndex): Generator<[string, CachedSummary]> {
  const written = new Set<string>();
  for (const summary of index.listing) {
    const key = index.keyOf(summary.id);
    const entry = key === undefined ? undefined : index.entries.get(key);
    if (key === undefined || entry === undefined || entry.readFailed === true || written.has(key)) continue;
    written.add(key);
    yield [key, { identity: entry.identity, summary: entry.summary }];
  }
  for (const [key, entry] of index.entries) {
    if (entry.readFailed === true || written.has(key)) continue;
    yield [key, { identity: entry.identity, summary: entry.summary }];
  }
}

/** One home's cache file: where it is, whether a write is in progress, and the write itself. */
export class HomeCache {
  private saving = false;
  private failureLogged = false;
  private disposed = false;

  private constructor(
    private readonly agent: string,
    private readonly file: string,
    private readonly root: string,
    private readonly index: HomeIndex,
    private readonly log: (message: string) => void,
  ) {}

  /**
   * The cache of `home` in `cacheDir`, named by `rule`, its entries adopted by `index` (a file still of the same
   * identity is not read again); undefined when there is no cache directory, or it lies inside the home.
   */
  static async open(format: FormatAdapter, rule: CacheRule, home: string, cacheDir: string | undefined, index: HomeIndex, log: (message: string) => void): Promise<HomeCache | undefined> {
    if (cacheDir === undefined) return undefined;
    const resolvedHome = path.resolve(home);
    const realHome = await fsp.realpath(resolvedHome).catch(() => resolvedHome);
    if (await cacheDirInside(cacheDir, [resolvedHome, realHome])) {
      log(`${format.agent} store: cache directory ${cacheDir} is inside ${home}; not using a persistent cache`);
      return undefined;
    }
    const root = rule.rootName(realHome);
    const cache = new HomeCache(format.agent, summaryCacheFile(cacheDir, root), root, index, log);
    // Killed writes' leftovers go; a write in progress elsewhere stays.
    void removeStaleTempFiles(cacheDir).catch(() => undefined);
    const cached = await loadSummaryCache(cache.file, root);
    for (const [key, entry] of cached) {
      if (isSessionKey(format, key)) index.adopt(key, { identity: entry.identity, summary: entry.summary });
    }
    return cache;
  }

  /** Whether a write is in progress. */
  get writing(): boolean {
    return this.saving;
  }

  /**
   * Starts writing the index now; resolves when written (or failed: the index stays stale). A write
   * in progress finishes even when the store is disposed meanwhile (a CLI disposes its stores as soon
   * as it answered; a few thousand lines take milliseconds), and processes wait for it with
   * `cacheWritesSettled` (summaryCache.ts). The entries are iterated lazily while the index may change:
   * a change made meanwhile marks it stale again, and the next save writes it.
   */
  save(): Promise<void> {
    const { index } = this;
    index.cacheStale = false;
    this.saving = true;
    const write = saveSummaryCache(this.file, this.root, cachedEntries(index))
      .catch((error: unknown) => {
        index.cacheStale = true;
        if (this.disposed || this.failureLogged) return;
        this.failureLogged = true;
        this.log(`${this.agent} store: cannot write the cache ${this.file}: ${(error as Error).message}`);
      })
      .finally(() => {
        this.saving = false;
      });
    return write;
  }

  /** The store is closed: a failure of the write in progress is not logged. */
  dispose(): void {
    this.disposed = true;
  }
}
