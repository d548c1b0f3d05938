/**
 * Cache writing: the persistent index cache of the attached root is read before the first
 * index and rewritten, a while after a change and never while indexing, only when the index
 * differs from it.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { storeWorkSlices } from '../concurrency';
import { nodeDirectoryFiles } from '../directoryFiles';
import { TRANSCRIPT_FILE_NAMES } from '../discovery';
import { EarlyLookups } from '../lookups/earlyLookups';
import { isWithin, loadSummaryCache, removeStaleTempFiles, saveSummaryCache, summaryCacheFile, type CachedSummary } from '../summaryCache';
import type { TranscriptIndex } from '../transcriptIndex';
import type { TimerSlot } from './clock';
import type { Attached, StoreState } from './state';

/**
 * The index as cache entries, produced as the writer asks for them (never a 100,000-entry
 * array). Resume states are those the index keeps: the most recently written transcripts'.
 */
function* cachedSummaries(index: TranscriptIndex): Generator<[string, CachedSummary]> {
  for (const entry of index.all()) {
    if (!entry.identity || !entry.summary || entry.readFailed) continue;
    const cached: CachedSummary = { identity: entry.identity, summary: entry.summary };
    const resume = index.savedState(entry.location.key);
    if (resume) cached.resume = resume;
    yield [entry.location.key, cached];
  }
}

export class CacheWriter {
  private readonly cacheDir?: string;
  private readonly saveTimer: TimerSlot;
  /** The cache write in progress (writes never overlap, so an older snapshot cannot win the rename). */
  private saving: Promise<void> | undefined;
  private failureLogged = false;

  constructor(
    private readonly state: StoreState,
    cacheDir: string | undefined,
  ) {
    this.cacheDir = cacheDir === undefined ? undefined : path.resolve(cacheDir);
    this.saveTimer = state.timer();
  }

  /** Reads the cache file of the attached root into `attached.cache` (none when there is no usable cache directory). */
  async load(attached: Attached): Promise<void> {
    const { cacheDir, state } = this;
    if (cacheDir === undefined) return;
    const realCacheDir = await state.tuning.directories.realpath(cacheDir).catch(() => cacheDir);
    if ([cacheDir, realCacheDir].some((dir) => isWithin(dir, attached.realRoot) || isWithin(dir, state.root))) {
      state.log(`index cache directory ${cacheDir} is inside the sessions root; not using a persistent cache`);
      return;
    }
    attached.cacheFile = summaryCacheFile(cacheDir, attached.realRoot);
    await this.lookUpEarlyIfLarge(attached, attached.cacheFile);
    // Killed writes' leftovers (of any root) go; a write in progress elsewhere stays.
    state.background(removeStaleTempFiles(cacheDir));
    attached.omitted = new Map();
    attached.cache = await loadSummaryCache(attached.cacheFile, attached.realRoot, attached.omitted);
  }

  /**
   * A large cache is a restart of a large store: its first lookups are made in a worker while the
   * cache loads (see earlyLookups.ts). Only through the real file system (tests replace it).
   */
  private async lookUpEarlyIfLarge(attached: Attached, cacheFile: string): Promise<void> {
    const { state } = this;
    const { tuning } = state;
    if (tuning.lookupWorkerFile === undefined || tuning.directories !== nodeDirectoryFiles) return;
    const bytes = (await fsp.stat(cacheFile).catch(() => undefined))?.size ?? -1;
    if (bytes < tuning.earlyLookupsCacheBytes || !state.isCurrent(attached)) return;
    attached.lookups = EarlyLookups.start({ root: attached.realRoot, leafNames: TRANSCRIPT_FILE_NAMES }, tuning.lookupWorkerFile, state.log);
  }

  /**
   * Rewrites the cache after `delayMs` if it is stale by then (at most one write pending or
   * running), in a quiet moment: while requests are in progress it waits, up to the tuning's
   * `backgroundMaxWaitMs` (at 100,000 sessions a write is ~50 MB of JSON on the main thread).
   */
  scheduleSave(attached: Attached, delayMs: number, since = this.state.clock.now()): void {
    const { state } = this;
    if (!attached.cacheFile || state.indexing || this.saveTimer.active || state.disposed) return;
    this.saveTimer.set(() => {
      if (this.saving !== undefined) return this.scheduleSave(attached, Math.max(delayMs, state.tuning.cacheSaveDelayMs));
      const wait = state.quietWaitMs(since);
      if (wait > 0) return this.scheduleSave(attached, wait, since);
      void this.write(attached);
    }, delayMs);
  }

  /** Rewrites the cache now if it is stale (after a write in progress), and resolves when done. */
  async saveNow(attached: Attached): Promise<void> {
    const { state } = this;
    if (!attached.cacheFile || state.indexing || state.disposed) return;
    this.saveTimer.clear();
    // Someone waits for this write: its slices do not wait for the foreground.
    const urgent = storeWorkSlices.urgent();
    try {
      while (this.saving !== undefined) await this.saving;
      await this.write(attached);
    } finally {
      urgent();
    }
  }

  /** Starts a write of the current index when the cache is stale; the write, or undefined when there is none. */
  private write(attached: Attached): Promise<void> | undefined {
    const { state } = this;
    const cacheFile = attached.cacheFile;
    if (!state.isCurrent(attached) || !cacheFile || !attached.cacheStale) return undefined;
    attached.cacheStale = false;
    const write = saveSummaryCache(cacheFile, attached.realRoot, this.untilDisposed(cachedSummaries(attached.index)))
      .catch((error) => {
        attached.cacheStale = true;
        if (state.disposed) return;
        if (!this.failureLogged) state.log(`cannot write the index cache ${cacheFile}: ${(error as Error).message}`);
        this.failureLogged = true;
      })
      .finally(() => {
        this.saving = undefined;
      });
    this.saving = write;
    state.background(write);
    return write;
  }

  /** The root went: no save of it is pending any more. */
  cancel(): void {
    this.saveTimer.clear();
  }

  /** `entries` until the store is disposed: then a throw, which makes the cache writer remove its temp file. */
  private *untilDisposed<T>(entries: Iterable<T>): Generator<T> {
    for (const entry of entries) {
      if (this.state.disposed) throw new Error('the store was closed');
      yield entry;
    }
  }
}
