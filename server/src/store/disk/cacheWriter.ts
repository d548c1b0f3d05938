/**
 * Cache writing: the persistent index cache of the attached root is read before the first
 * index and rewritten, a while after a change and never while indexing, only when the index
 * differs from it. Whether it differs is the writer's own bookkeeping: the scanner asks it for
 * cached entries, and the store tells it what left or was re-read in the index.
 */
import path from 'node:path';
import { storeWorkSlices } from '../concurrency';
import type { IndexFormat } from '../formats/adapter';
import { cacheDirInside, loadSummaryCache, removeStaleTempFiles, saveSummaryCache, summaryCacheFile, type CachedSummary } from '../summaryCache';
import { sameIdentity, type FileIdentity } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';
import type { ResumeState } from '../summarize/summarizeFile';
import type { TimerSlot } from './clock';
import type { Attached, IndexView, StoreState } from './state';

/**
 * The index as cache entries, produced as the writer asks for them (never a 100,000-entry
 * array). Resume states (when the format keeps them) are those the index keeps: the most recently
 * written transcripts'.
 */
function* cachedSummaries(index: IndexView, keepsResume: boolean): Generator<[string, CachedSummary]> {
  for (const entry of index.all()) {
    if (!entry.identity || !entry.summary || entry.readFailed) continue;
    const cached: CachedSummary = { identity: entry.identity, summary: entry.summary };
    // A format whose cache keeps fold states folds dsh's (`CacheRule.keepsResume`).
    const resume = keepsResume ? (index.savedState(entry.location.key) as ResumeState | undefined) : undefined;
    if (resume) cached.resume = resume;
    yield [entry.location.key, cached];
  }
}

/** The cache bookkeeping of one attached root, which only the cache writer reads and writes. */
interface RootCache {
  readonly attached: Attached;
  /** The cache file being read (settles once its entries are here, or it failed), awaited before summaries are adopted. */
  loading?: Promise<void>;
  /** What the cache is named by (`CacheRule.rootName`) and its file. */
  name?: string;
  file?: string;
  /** Summaries from the cache file, consulted while the first index is built. */
  entries?: Map<string, CachedSummary>;
  /**
   * Identities of the entries the cache file holds without a summary (too long for a line):
   * re-reading such an unchanged transcript leaves the file as it is.
   */
  omitted?: Map<string, FileIdentity>;
  /** How many cached summaries were adopted. */
  adopted: number;
  /**
   * Whether the index differs from the cache file: a restart that changed nothing writes no
   * new cache (at 100k that would be 50 MB of strings for nothing).
   */
  stale: boolean;
}

export class CacheWriter {
  private readonly cacheDir?: string;
  private readonly saveTimer: TimerSlot;
  /** The cache write in progress (writes never overlap, so an older snapshot cannot win the rename). */
  private saving: Promise<void> | undefined;
  private failureLogged = false;
  private root: RootCache | undefined;

  constructor(
    private readonly state: StoreState,
    cacheDir: string | undefined,
    /** The format: how its cache is named and what a line keeps. */
    private readonly format: IndexFormat<TranscriptSummary, unknown>,
  ) {
    this.cacheDir = cacheDir === undefined ? undefined : path.resolve(cacheDir);
    this.saveTimer = state.timer();
  }

  /** Starts reading the cache file of a root just attached (none when there is no usable cache directory). */
  load(attached: Attached): void {
    const root: RootCache = (this.root = { attached, adopted: 0, stale: false });
    root.loading = this.read(root).catch((error: unknown) => {
      this.state.log(`cannot read the index cache: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  /** Settles once the cache of `attached` is read (or there is none to read). */
  loaded(attached: Attached): Promise<void> | undefined {
    return this.rootOf(attached)?.loading;
  }

  private async read(root: RootCache): Promise<void> {
    const { cacheDir, state } = this;
    const { attached } = root;
    if (cacheDir === undefined) return;
    if (await cacheDirInside(cacheDir, [attached.realRoot, state.root], (dir) => state.tuning.directories.realpath(dir))) {
      state.log(`index cache directory ${cacheDir} is inside the sessions root; not using a persistent cache`);
      return;
    }
    root.name = this.format.cache.rootName(attached.realRoot);
    root.file = summaryCacheFile(cacheDir, root.name);
    // Killed writes' leftovers (of any root) go; a write in progress elsewhere stays.
    state.background(removeStaleTempFiles(cacheDir));
    root.omitted = new Map();
    root.entries = await loadSummaryCache(root.file, root.name, root.omitted);
  }

  /** The bookkeeping of `attached`, if it is the root the writer knows. */
  private rootOf(attached: Attached): RootCache | undefined {
    return this.root?.attached === attached ? this.root : undefined;
  }

  /** The cached summary of `key`, while the first index is built; one taken counts as adopted. */
  adopt(attached: Attached, key: string): CachedSummary | undefined {
    const root = this.rootOf(attached);
    const cached = root?.entries?.get(key);
    if (root && cached) root.adopted++;
    return cached;
  }

  /** Transcripts left the index: the file holds sessions that are gone. */
  entriesRemoved(attached: Attached): void {
    const root = this.rootOf(attached);
    if (root) root.stale = true;
  }

  /**
   * A transcript was re-read: the file is stale, unless the read failed (a failure is never
   * cached) or the file holds it as omitted at this identity.
   */
  reread(attached: Attached, key: string): void {
    const root = this.rootOf(attached);
    if (!root) return;
    const entry = attached.index.get(key);
    if (entry?.readFailed) return;
    const omitted = root.omitted?.get(key);
    if (omitted && entry?.identity && sameIdentity(omitted, entry.identity)) {
      root.omitted?.delete(key);
      return;
    }
    root.stale = true;
  }

  /** The first index is built: cached sessions that are gone (or no cache at all) make the file worth rewriting. */
  firstIndexBuilt(attached: Attached): void {
    const root = this.rootOf(attached);
    if (!root) return;
    if (root.adopted !== (root.entries?.size ?? -1)) root.stale = true;
    root.entries = root.omitted = undefined;
  }

  /**
   * Rewrites the cache after `delayMs` if it is stale by then (at most one write pending or
   * running), in a quiet moment: while requests are in progress it waits, up to the tuning's
   * `backgroundMaxWaitMs` (at 100,000 sessions a write is ~50 MB of JSON on the main thread).
   */
  scheduleSave(attached: Attached, delayMs: number, since = this.state.clock.now()): void {
    const { state } = this;
    if (!this.rootOf(attached)?.file || state.indexing || this.saveTimer.active || state.disposed) return;
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
    if (!this.rootOf(attached)?.file || state.indexing || state.disposed) return;
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
    const root = this.rootOf(attached);
    const cacheFile = root?.file;
    if (!state.isCurrent(attached) || !root || !cacheFile || root.name === undefined || !root.stale) return undefined;
    root.stale = false;
    const entries = cachedSummaries(attached.index, this.format.cache.keepsResume);
    const write = saveSummaryCache(cacheFile, root.name, this.untilDisposed(entries))
      .catch((error) => {
        root.stale = true;
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
