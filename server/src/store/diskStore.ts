/**
 * The on-disk `SessionStoreService`: discovery + index + listing, kept fresh by directory
 * watches, a sweep of unwatched sessions and an adaptive full rescan, all strictly read-only.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { SessionsRootProblem } from '@dsh-session-ls/shared';
import type { SessionSurface, StoredSessionSummary } from '../resolver/sessionStore';
import { forEachConcurrently, throwIfAborted } from './concurrency';
import { DirectoryWatches, type WatchFactory } from './directoryWatches';
import {
  discover,
  discoverRootLevel,
  inScope,
  keyPath,
  scopeOfChange,
  sessionScopeOf,
  toStoreProblem,
  type DiscoveryProblem,
  type DiscoveryScope,
} from './discovery';
import { Emitter } from './emitter';
import { buildListing, patchListing, type Listing } from './listing';
import { readSessionSurface } from './lookup';
import { PendingScopes } from './pendingScopes';
import { ScopedKeys } from './scopedKeys';
import type { OpenSessionStoreOptions, SessionStoreService, StoreProblem, StoreStatus, Subscription } from './service';
import { defaultIndexWorkers, SummarizePool } from './summarize/pool';
import { isWithin, loadSummaryCache, removeStaleTempFiles, saveSummaryCache, summaryCacheFile, type CachedSummary } from './summaryCache';
import { fileIdentity, nodeTranscriptFiles, sameIdentity, type FileIdentity, type TranscriptFiles } from './transcriptFiles';
import { TranscriptIndex, type IndexedTranscript, type RefreshOutcome } from './transcriptIndex';

/** Knobs with production defaults; tests shorten or observe them. */
export interface DiskStoreTuning {
  /** File access (injectable to observe reads). */
  files: TranscriptFiles;
  /** Transcripts read at once while indexing. */
  concurrency: number;
  /** Worker threads that read and fold transcripts (0: the main thread does). */
  indexWorkers: number;
  /** Bytes a burst of reads summarizes in the main thread before workers start (see SummarizePool). */
  inlineIndexBytes: number;
  /** Directory watches at most (root + project directories + most recent session directories). */
  maxWatches: number;
  watchFactory?: WatchFactory;
  /** Quiet time after a change before re-reading, and the longest a burst may postpone it. */
  debounceMs: number;
  maxDebounceMs: number;
  /**
   * The sweep re-stats the transcripts no watch covers (and retries failed reads): one pass
   * takes at least `sweepPeriodMs` (and `sweepCostFactor` × the time the pass's own batches took),
   * spread in batches at most every `sweepIntervalMs`.
   */
  sweepIntervalMs: number;
  sweepPeriodMs: number;
  /**
   * Default 400 (≤ 0.25 % of a core). Tests set 0: on a loaded machine a batch of two lstats can
   * take a descheduled 25 ms, which ×400 stalls the sweep past any test's deadline.
   */
  sweepCostFactor: number;
  /** Full rescans run at least this far apart, and at least 200× their duration apart. */
  rescanMinIntervalMs: number;
  /**
   * …and at least this many times the process CPU time the last one took (default 1000: ≤ 0.1 %
   * of a core on average; at 10,000 sessions a rescan costs ~1.5 s of CPU, which at 200× its
   * duration alone was ~0.4 %). Tests set 0: their process CPU is mostly other work.
   */
  rescanCpuFactor: number;
  /** How often a missing root is looked for. */
  rootPollMs: number;
  /** Minimum spacing of `onStatus` / `onDidChange` notifications. */
  notifyThrottleMs: number;
  /** Delay before the persistent cache is rewritten after a change. */
  cacheSaveDelayMs: number;
}

/**
 * Transcripts of up to this many bytes in all (on disk) are summarized in the main thread: below
 * it, starting index workers costs more wall time than they save (bench/ANALYSIS.md, "Start").
 */
export const INLINE_INDEX_BYTES = 1024 * 1024;

/** Production defaults. */
export const DEFAULT_TUNING: DiskStoreTuning = {
  files: nodeTranscriptFiles,
  concurrency: 16,
  indexWorkers: defaultIndexWorkers(),
  inlineIndexBytes: INLINE_INDEX_BYTES,
  maxWatches: 4096,
  debounceMs: 30,
  maxDebounceMs: 200,
  sweepIntervalMs: 1000,
  sweepPeriodMs: 30_000,
  rescanMinIntervalMs: 300_000,
  rescanCpuFactor: 1000,
  sweepCostFactor: 400,
  rootPollMs: 500,
  notifyThrottleMs: 100,
  cacheSaveDelayMs: 5000,
};

/**
 * A full rescan (every directory listed, every transcript stat'ed) is a safety net behind the
 * watches and the sweep (a lost watch event, a transcript added beside another in an unwatched
 * directory): at most 1/200 of the time goes to it.
 */
const RESCAN_COST_FACTOR = 200;

/** Process CPU time (user + system, every thread) in ms. */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** While indexing, `onDidChange` is spaced this many times further apart than usual. */
const INDEXING_NOTIFY_SPACING = 5;

/**
 * While indexing, `onDidChange` is also spaced at least this many times the last listing
 * rebuild's duration apart, so rebuilding a large listing takes little of the indexing time.
 */
const INDEXING_REBUILD_COST_FACTOR = 100;

/** Beyond this many re-read transcripts, the listing is rebuilt rather than patched. */
const MAX_PATCHED_TRANSCRIPTS = 256;

/** Project directories scanned at once during a root scan (their listings overlap the reads). */
const PROJECT_SCANS_IN_FLIGHT = 4;

/** Long synchronous loops (a root scope at 100,000 sessions) give the event loop a turn this often. */
const ITEMS_PER_SLICE = 2048;

/** Lets answers and I/O callbacks run between slices of a long loop. */
function nextSlice(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

type Timer = ReturnType<typeof setTimeout>;

function sameSessions(a: readonly StoredSessionSummary[], b: readonly StoredSessionSummary[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.id !== y.id || x.createdAt !== y.createdAt || x.cwd !== y.cwd || x.title !== y.title) return false;
  }
  return true;
}

/**
 * The `count` items with the highest `score` (more on ties), unordered: only the few thousand
 * that get a watch are sorted, not 100,000 session directories (a sort that long would hold
 * answers back).
 */
function mostRecent<T>(items: T[], score: (item: T) => number, count: number): T[] {
  if (count <= 0) return [];
  if (items.length <= count) return [...items];
  const scores = Float64Array.from(items, score);
  const threshold = scores.slice().sort()[items.length - count];
  return items.filter((_, i) => scores[i] >= threshold);
}

/** The session directory (`<projectDir>/<sessionDir>`) a transcript key lies in. */
function sessionDirOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/'));
}

/** State that belongs to one attached (existing, resolved) root. */
interface Attached {
  generation: number;
  realRoot: string;
  rootIdentity: { dev: number; ino: number };
  index: TranscriptIndex;
  watches: DirectoryWatches;
  discoveryProblems: Map<string, DiscoveryProblem>;
  directories: ScopedKeys;
  cacheFile?: string;
  /** The persistent cache being read (set once its file is known), awaited before summaries are adopted. */
  cacheLoading?: Promise<void>;
  /** Summaries from the persistent cache, consulted while the first index is built. */
  cache?: Map<string, CachedSummary>;
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
  cacheStale: boolean;
}

/** A dsh sessions root on disk, served read-only and kept fresh. */
/** Why a failed look at the root failed: nothing there, something that is not a directory, or no access. */
function rootProblemOf(error: unknown): SessionsRootProblem {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return 'missing';
  if (code === 'ENOTDIR') return 'not-a-directory';
  return 'inaccessible';
}

export class DiskSessionStore implements SessionStoreService {
  readonly root: string;
  private readonly tuning: DiskStoreTuning;
  private readonly log: (message: string) => void;
  private readonly cacheDir?: string;
  private readonly pool: SummarizePool;

  private attached?: Attached;
  private generation = 0;
  private disposed = false;
  private indexing = true;

  private listing: Listing = { sessions: Object.freeze([]), problems: [] };
  private listingDirty = false;
  /**
   * When only re-read transcripts made the listing stale, their keys (the listing may then be
   * patched); undefined when it must be rebuilt.
   */
  private rereadKeys?: Set<string>;
  private listingRebuildMs = 0;
  private listingRebuiltAt = 0;
  private listingVersion = 0;
  private notifiedVersion = 0;
  private readonly reported = new Set<string>();

  private readonly pending = new PendingScopes();
  private pendingSince = 0;
  private flushTimer?: Timer;
  private flushing = false;
  private flushAgain = false;
  /** Discovery and reconciliation run one at a time so scopes never undo each other. */
  private reconciling: Promise<unknown> = Promise.resolve();

  private sweepTimer?: Timer;
  private sweepQueue: string[] = [];
  private sweeping = false;
  /** Keys per sweep tick in the current pass, its start, and the synchronous time it took so far. */
  private sweepBatch = 0;
  private sweepPassStart = 0;
  private sweepPassCostMs = 0;
  private rescanTimer?: Timer;
  private rootPollTimer?: Timer;
  /** Why the root is not read, while it is not (see StoreStatus.rootProblem). */
  private rootProblem: SessionsRootProblem | undefined;
  private notifyTimer?: Timer;
  private lastNotifyAt = 0;
  private statusTimer?: Timer;
  private lastStatusAt = 0;
  private cacheTimer?: Timer;
  /** A cache write in progress (writes never overlap, so an older snapshot cannot win the rename). */
  private cacheSaving = false;
  private cacheFailureLogged = false;

  private readonly indexedWaiters = new Set<() => void>();
  private readonly changeEmitter: Emitter<void>;
  private readonly problemEmitter: Emitter<StoreProblem>;
  private readonly statusEmitter: Emitter<StoreStatus>;

  constructor(options: OpenSessionStoreOptions, tuning: Partial<DiskStoreTuning> = {}) {
    this.root = path.resolve(options.root);
    this.tuning = { ...DEFAULT_TUNING, ...tuning };
    this.log = options.log ?? (() => undefined);
    this.pool = new SummarizePool({
      size: this.tuning.indexWorkers,
      inlineBytes: this.tuning.inlineIndexBytes,
      files: this.tuning.files,
      log: this.log,
    });
    this.cacheDir = options.cacheDir === undefined ? undefined : path.resolve(options.cacheDir);
    const onListenerError = (error: unknown) => this.log(`session store listener failed: ${String(error)}`);
    this.changeEmitter = new Emitter(onListenerError);
    this.problemEmitter = new Emitter(onListenerError);
    this.statusEmitter = new Emitter(onListenerError);
    this.background(this.attach());
  }

  // ---- SessionStore -------------------------------------------------------------------------

  /** The cached, sorted listing; rebuilt only when something changed. */
  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    throwIfAborted(signal);
    return this.currentListing().sessions;
  }

  /** A fresh snapshot of one session's surface, read directly from disk. */
  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    const attached = this.attached;
    if (attached) {
      const knownFailure = (key: string, identity: FileIdentity) => attached.index.knownFailure(key, identity);
      return readSessionSurface(attached.realRoot, sessionId, this.tuning.files, signal, knownFailure);
    }
    const root = await fsp.realpath(this.root).catch(() => undefined);
    return readSessionSurface(root, sessionId, this.tuning.files, signal);
  }

  // ---- service ------------------------------------------------------------------------------

  status(): StoreStatus {
    const index = this.attached?.index;
    return {
      indexing: this.indexing,
      indexed: index?.summarized ?? 0,
      discovered: index?.size ?? 0,
      rootExists: this.attached !== undefined,
      ...(this.attached === undefined && this.rootProblem !== undefined ? { rootProblem: this.rootProblem } : {}),
    };
  }

  onDidChange(listener: () => void): Subscription {
    return this.changeEmitter.on(listener);
  }

  onProblem(listener: (problem: StoreProblem) => void): Subscription {
    return this.problemEmitter.on(listener);
  }

  onStatus(listener: (status: StoreStatus) => void): Subscription {
    return this.statusEmitter.on(listener);
  }

  whenIndexed(signal?: AbortSignal): Promise<void> {
    if (!this.indexing || this.disposed) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.indexedWaiters.delete(done);
        reject(signal?.reason);
      };
      this.indexedWaiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.generation++;
    this.attached?.watches.dispose();
    this.attached = undefined;
    for (const timer of [this.flushTimer, this.sweepTimer, this.rescanTimer, this.rootPollTimer, this.notifyTimer, this.statusTimer, this.cacheTimer]) {
      if (timer) clearTimeout(timer);
    }
    this.flushTimer = this.sweepTimer = this.rescanTimer = this.rootPollTimer = undefined;
    this.notifyTimer = this.statusTimer = this.cacheTimer = undefined;
    this.finishIndexing();
    this.changeEmitter.clear();
    this.problemEmitter.clear();
    this.statusEmitter.clear();
    void this.pool.dispose();
  }

  /** `entries` until the store is disposed: then a throw, which makes the cache writer remove its temp file. */
  private *untilDisposed<T>(entries: Iterable<T>): Generator<T> {
    for (const entry of entries) {
      if (this.disposed) throw new Error('the store was closed');
      yield entry;
    }
  }

  /** Live handles (for leak tests): directory watches and pending timers. */
  handles(): { watches: number; timers: number } {
    const timers = [this.flushTimer, this.sweepTimer, this.rescanTimer, this.rootPollTimer, this.notifyTimer, this.statusTimer, this.cacheTimer];
    const watches = this.attached?.watches;
    const pending = timers.filter((t) => t !== undefined).length + (watches?.adding ? 1 : 0);
    return { watches: watches?.count ?? 0, timers: pending };
  }

  // ---- attaching the root -------------------------------------------------------------------

  private background(work: Promise<unknown>): void {
    work.catch((error) => this.log(`session store: ${error instanceof Error ? error.stack ?? error.message : String(error)}`));
  }

  private timer(callback: () => void, ms: number): Timer {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return timer;
  }

  /** Resolves the root once (realpath) and builds the first index; a missing root is polled for. */
  private async attach(): Promise<void> {
    const generation = ++this.generation;
    let realRoot: string;
    let rootIdentity: Attached['rootIdentity'];
    try {
      realRoot = await fsp.realpath(this.root);
      const stats = await fsp.stat(realRoot);
      if (!stats.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      rootIdentity = { dev: stats.dev, ino: stats.ino };
    } catch (error) {
      if (generation === this.generation && !this.disposed) {
        this.noteRootProblem(rootProblemOf(error), error);
        this.waitForRoot();
      }
      return;
    }
    if (generation !== this.generation || this.disposed) return;
    const attached: Attached = {
      generation,
      realRoot,
      rootIdentity,
      index: new TranscriptIndex(realRoot, this.tuning.files, this.tuning.concurrency, this.pool),
      watches: new DirectoryWatches(
        realRoot,
        (dir, name) => this.onWatchEvent(generation, dir, name),
        this.tuning.maxWatches,
        this.log,
        this.tuning.watchFactory,
      ),
      discoveryProblems: new Map(),
      directories: new ScopedKeys(),
      adopted: 0,
      cacheStale: false,
    };
    this.attached = attached;
    this.rootProblem = undefined;
    this.indexing = true;
    // Watch the root before the first scan, so nothing created meanwhile goes unseen.
    attached.watches.update([]);
    this.emitStatus(true);
    try {
      // The cache is read while the root is listed (one is CPU, the other mostly waiting).
      attached.cacheLoading = this.loadCache(attached).catch((error: unknown) => {
        this.log(`cannot read the index cache: ${error instanceof Error ? error.message : String(error)}`);
      });
      await this.scan(attached, { kind: 'root' });
    } catch (error) {
      // Whatever failed, the store answers with what it has; the rescan tries again.
      this.log(`indexing ${realRoot} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!this.isCurrent(attached)) return;
    // Cached sessions that are gone (or no cache at all) make the file worth rewriting.
    if (attached.adopted !== (attached.cache?.size ?? -1)) attached.cacheStale = true;
    attached.cache = attached.omitted = undefined;
    this.updateWatches(attached);
    this.finishIndexing();
    this.emitStatus(true);
    this.notifyNow();
    this.scheduleSweep(attached);
    // Not at once: the first answers come now, and writing the cache would compete with them.
    this.scheduleCacheSave(attached, this.tuning.cacheSaveDelayMs);
    // Catch up with what changed while the first index was built, before its directories were watched.
    this.markDirty({ kind: 'root' });
  }

  private isCurrent(attached: Attached): boolean {
    return !this.disposed && this.attached === attached && attached.generation === this.generation;
  }

  /** No root (yet, or any more): an empty, indexed store that looks for the root periodically. */
  private waitForRoot(): void {
    this.finishIndexing();
    this.emitStatus(true);
    this.notifyNow();
    const poll = () => {
      this.rootPollTimer = undefined;
      this.background(
        fsp.stat(this.root).then(
          (stats) => {
            if (this.disposed || this.attached) return;
            if (stats.isDirectory()) return this.attach();
            this.reportRootProblem('not-a-directory');
            this.rootPollTimer = this.timer(poll, this.tuning.rootPollMs);
          },
          (error: unknown) => {
            if (this.disposed || this.attached) return;
            this.reportRootProblem(rootProblemOf(error), error);
            this.rootPollTimer = this.timer(poll, this.tuning.rootPollMs);
          },
        ),
      );
    };
    this.rootPollTimer = this.timer(poll, this.tuning.rootPollMs);
  }

  /**
   * Remember why the root is not read (the caller reports the status). Only an inaccessible root is
   * logged, for its error: the status names the other problems, and users of the store report them.
   */
  private noteRootProblem(problem: SessionsRootProblem, error?: unknown): boolean {
    if (problem === this.rootProblem) return false;
    this.rootProblem = problem;
    if (problem === 'inaccessible') this.log(`cannot open the sessions root ${this.root}: ${error instanceof Error ? error.message : String(error)}`);
    return true;
  }

  /** A changed root problem found while polling: status listeners hear of it at once. */
  private reportRootProblem(problem: SessionsRootProblem, error?: unknown): void {
    if (this.noteRootProblem(problem, error)) this.emitStatus(true);
  }

  /** The root vanished or was replaced: drop everything and look for it again. */
  private detach(): void {
    const attached = this.attached;
    if (!attached) return;
    this.generation++;
    attached.watches.dispose();
    this.attached = undefined;
    for (const timer of [this.sweepTimer, this.rescanTimer, this.cacheTimer]) if (timer) clearTimeout(timer);
    this.sweepTimer = this.rescanTimer = this.cacheTimer = undefined;
    this.sweepQueue = [];
    this.sweepPassStart = 0;
    this.rereadKeys = undefined;
    this.listingDirty = true;
    this.log(`sessions root ${this.root} is gone; waiting for it to appear`);
    this.waitForRoot();
  }

  private async rootStillAttached(attached: Attached): Promise<boolean> {
    try {
      const stats = await fsp.stat(attached.realRoot);
      return stats.isDirectory() && stats.dev === attached.rootIdentity.dev && stats.ino === attached.rootIdentity.ino;
    } catch {
      return false;
    }
  }

  private finishIndexing(): void {
    this.indexing = false;
    for (const done of [...this.indexedWaiters]) done();
    this.indexedWaiters.clear();
  }

  // ---- scanning ---------------------------------------------------------------------------------

  /** Discovers a scope, reconciles what is known about it, then refreshes its transcripts. */
  private async scan(attached: Attached, scope: DiscoveryScope): Promise<void> {
    if (scope.kind === 'root') return this.scanRoot(attached);
    const run = this.reconciling.then(() => this.reconcile(attached, scope));
    // Not `run.catch(…)`: that would keep the last scope's key list alive until the next scan.
    this.reconciling = run.then(
      () => undefined,
      () => undefined,
    );
    const keys = await run;
    if (!keys) return;
    // A fixed set of workers pulls the keys: 100,000 keys never become 100,000 pending refreshes.
    await forEachConcurrently(keys, this.tuning.concurrency, (key) => this.refresh(attached, key), (error) =>
      this.log(`refreshing a transcript failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /**
   * The whole root, one project directory at a time (a few in flight, so reading never waits
   * for the next listing): discovering 100,000 sessions at once held ~40 MB of locations, keys
   * and directory names besides the index, at every full rescan.
   */
  private async scanRoot(attached: Attached): Promise<void> {
    const run = this.reconciling.then(() => this.reconcileRootLevel(attached));
    this.reconciling = run.then(
      () => undefined,
      () => undefined,
    );
    const projects = await run;
    if (!projects) return;
    await forEachConcurrently(projects, PROJECT_SCANS_IN_FLIGHT, (projectDir) => this.scan(attached, { kind: 'project', projectDir }), (error) =>
      this.log(`scanning a project directory failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /**
   * Reconciles the root's own level: forgets what lay in project directories that are gone (or
   * are no longer real directories) and records the root's skipped entries; returns the
   * project directories to scan.
   */
  private async reconcileRootLevel(attached: Attached): Promise<string[] | undefined> {
    if (!this.isCurrent(attached)) return undefined;
    const found = await discoverRootLevel(attached.realRoot);
    await attached.cacheLoading;
    if (!this.isCurrent(attached)) return undefined;
    const projects = new Set(found.directories);
    const outside = (key: string) => {
      const slash = key.indexOf('/');
      return !projects.has(slash === -1 ? key : key.slice(0, slash));
    };
    // Root-level problems are replaced; deeper ones go with their project directory.
    const before = new Map<string, string>();
    for (const [key, problem] of attached.discoveryProblems) if (!key.includes('/') || outside(key)) before.set(key, problem.reason);
    for (const key of before.keys()) attached.discoveryProblems.delete(key);
    for (const problem of found.problems) attached.discoveryProblems.set(problem.key, problem);
    let changed = before.size !== found.problems.length || found.problems.some((p) => before.get(p.key) !== p.reason);
    let directoriesChanged = false;
    for (const project of attached.directories.projects()) {
      if (projects.has(project)) continue;
      for (const dir of attached.directories.inScope({ kind: 'project', projectDir: project })) attached.directories.delete(dir);
      directoriesChanged = true;
    }
    for (const project of projects) if (attached.directories.add(project)) directoriesChanged = true;
    for (const project of attached.index.projects()) {
      if (projects.has(project)) continue;
      for (const key of attached.index.keysIn({ kind: 'project', projectDir: project })) attached.index.delete(key);
      attached.cacheStale = changed = true;
    }
    if (changed) this.markListingDirty(attached);
    if (directoriesChanged && !this.indexing) this.updateWatches(attached);
    this.emitStatus(false);
    return found.directories;
  }

  private async reconcile(attached: Attached, scope: DiscoveryScope): Promise<string[] | undefined> {
    if (!this.isCurrent(attached)) return undefined;
    const found = await discover(attached.realRoot, scope);
    await attached.cacheLoading;
    if (!this.isCurrent(attached)) return undefined;
    const problemsBefore = new Map([...attached.discoveryProblems].filter(([key]) => inScope(key, scope)));
    for (const key of problemsBefore.keys()) attached.discoveryProblems.delete(key);
    for (const problem of found.problems) attached.discoveryProblems.set(problem.key, problem);
    let changed =
      problemsBefore.size !== found.problems.length ||
      found.problems.some((p) => problemsBefore.get(p.key)?.reason !== p.reason);
    // Only the scope's own keys are visited: a session-directory event costs no full pass.
    const before = attached.directories.inScope(scope);
    for (const dir of before) attached.directories.delete(dir);
    for (const dir of found.directories) attached.directories.add(dir);
    const directoriesChanged =
      before.length !== found.directories.length || before.some((dir) => !attached.directories.has(dir));
    const foundKeys = new Set(found.transcripts.map((t) => t.key));
    let visited = 0;
    for (const key of attached.index.keysIn(scope)) {
      if (!foundKeys.has(key)) {
        attached.index.delete(key);
        attached.cacheStale = changed = true;
      }
      if (++visited % ITEMS_PER_SLICE === 0) await nextSlice();
    }
    for (const location of found.transcripts) {
      if (++visited % ITEMS_PER_SLICE === 0) await nextSlice();
      if (!attached.index.add(location)) continue;
      changed = true;
      const cached = attached.cache?.get(location.key);
      if (cached) {
        attached.index.adopt(location.key, cached.identity, cached.summary, cached.resume);
        attached.adopted++;
      }
    }
    if (!this.isCurrent(attached)) return undefined;
    if (changed) this.markListingDirty(attached);
    // While the first index is built, watches wait for it (then ordered by recency).
    if (directoriesChanged && !this.indexing) this.updateWatches(attached);
    this.emitStatus(false);
    return found.transcripts.map((t) => t.key);
  }

  private async refresh(attached: Attached, key: string): Promise<RefreshOutcome> {
    const outcome = await attached.index.refresh(key);
    if (!this.isCurrent(attached)) return outcome;
    if (outcome === 'changed') {
      if (this.cacheOutdatedBy(attached, key)) attached.cacheStale = true;
      this.markListingDirty(attached, key);
    }
    if (outcome === 'gone') {
      // Let discovery decide what the path is now (deleted, replaced by a link, …).
      this.markDirty(sessionScopeOf(key));
    }
    this.emitStatus(false);
    return outcome;
  }

  /**
   * Whether a re-read transcript makes the cache file stale: not when the read failed (a failure
   * is never cached) nor when the file already holds it as omitted at this identity.
   */
  private cacheOutdatedBy(attached: Attached, key: string): boolean {
    const entry = attached.index.get(key);
    if (entry?.readFailed) return false;
    const omitted = attached.omitted?.get(key);
    if (omitted && entry?.identity && sameIdentity(omitted, entry.identity)) {
      attached.omitted?.delete(key);
      return false;
    }
    return true;
  }

  // ---- freshness --------------------------------------------------------------------------------

  private onWatchEvent(generation: number, dir: string, name: string | undefined): void {
    if (generation === this.generation && !this.disposed) this.markDirty(scopeOfChange(dir, name));
  }

  /** Queues a scope for re-reading after a short quiet time (a burst is read once). */
  private markDirty(scope: DiscoveryScope): void {
    if (this.disposed) return;
    this.pending.add(scope);
    // Nothing competes with the first index: it ends by re-reading the whole root, which covers this.
    if (this.indexing && this.attached) return;
    const now = Date.now();
    if (!this.flushTimer) this.pendingSince = now;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    const wait = Math.max(0, Math.min(this.tuning.debounceMs, this.pendingSince + this.tuning.maxDebounceMs - now));
    this.flushTimer = this.timer(() => {
      this.flushTimer = undefined;
      this.background(this.flush());
    }, wait);
  }

  private async flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    try {
      const attached = this.attached;
      const root = this.pending.includesRoot;
      const scopes = this.pending.take();
      if (!attached || !this.isCurrent(attached)) return;
      if (!(await this.rootStillAttached(attached))) {
        if (this.isCurrent(attached)) this.detach();
        return;
      }
      const started = Date.now();
      const cpuStarted = cpuMs();
      await Promise.all(scopes.map((scope) => this.scan(attached, scope)));
      if (!this.isCurrent(attached)) return;
      if (root) {
        this.updateWatches(attached);
        this.scheduleRescan(attached, Date.now() - started, cpuMs() - cpuStarted);
      }
      this.notifyNow();
    } finally {
      this.flushing = false;
      if (this.flushAgain) {
        this.flushAgain = false;
        this.background(this.flush());
      }
    }
  }

  /** Watches project directories, then session directories, newest transcript first. */
  private updateWatches(attached: Attached): void {
    if (!this.isCurrent(attached)) return;
    // Everything fits under the cap: no need to rank directories.
    if (attached.directories.size < this.tuning.maxWatches) return attached.watches.update(attached.directories);
    const recency = new Map<string, number>();
    for (const entry of attached.index.all()) {
      const dir = sessionDirOf(entry.location.key);
      recency.set(dir, Math.max(recency.get(dir) ?? -Infinity, entry.identity?.mtimeMs ?? Infinity));
    }
    const projects: string[] = [];
    const sessions: string[] = [];
    for (const dir of attached.directories) (dir.includes('/') ? sessions : projects).push(dir);
    // A session directory without a transcript yet is about to get one: watch it first.
    const recencyOf = (dir: string) => recency.get(dir) ?? Infinity;
    const chosen = mostRecent(sessions, recencyOf, this.tuning.maxWatches - 1 - projects.length);
    chosen.sort((a, b) => recencyOf(b) - recencyOf(a) || (a < b ? -1 : 1));
    attached.watches.update([...projects, ...chosen]);
  }

  /**
   * Re-stats the transcripts whose directories are not watched, and those whose last read
   * failed, round robin: one pass per sweep period, a batch per tick. An unchanged file costs one
   * synchronous lstat; only a changed (or failed) one is refreshed.
   */
  private scheduleSweep(attached: Attached, delayMs = this.tuning.sweepIntervalMs): void {
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepTimer = this.timer(() => {
      this.sweepTimer = undefined;
      if (!this.isCurrent(attached)) return;
      if (this.sweeping) return this.scheduleSweep(attached);
      if (this.sweepQueue.length === 0) {
        const now = Date.now();
        const nextPass = this.sweepPassStart + Math.max(this.tuning.sweepPeriodMs, this.tuning.sweepCostFactor * this.sweepPassCostMs);
        if (this.sweepPassStart > 0 && now < nextPass) return this.scheduleSweep(attached, nextPass - now);
        this.sweepQueue = this.sweepKeys(attached);
        this.sweepPassStart = now;
        this.sweepPassCostMs = 0;
        const ticks = Math.max(1, Math.floor(this.tuning.sweepPeriodMs / Math.max(1, this.tuning.sweepIntervalMs)));
        this.sweepBatch = Math.ceil(this.sweepQueue.length / ticks);
        // Nothing to sweep: look again next period.
        if (this.sweepQueue.length === 0) return this.scheduleSweep(attached, this.tuning.sweepPeriodMs);
      }
      const started = performance.now();
      const batch = this.sweepQueue.splice(0, this.sweepBatch).filter((key) => this.mayHaveChanged(attached, key));
      this.sweepPassCostMs += performance.now() - started;
      if (batch.length === 0) return this.scheduleSweep(attached);
      this.sweeping = true;
      this.background(
        Promise.all(batch.map((key) => this.refresh(attached, key))).finally(() => {
          this.sweeping = false;
          if (this.isCurrent(attached)) this.scheduleSweep(attached);
        }),
      );
    }, delayMs);
  }

  /** What a sweep pass visits: failed reads first, then every transcript no watch covers. */
  private sweepKeys(attached: Attached): string[] {
    const failed = attached.index.failedKeys();
    const seen = new Set(failed);
    const keys = failed;
    for (const key of attached.index.keys()) {
      if (!seen.has(key) && !attached.watches.isWatched(sessionDirOf(key))) keys.push(key);
    }
    return keys;
  }

  /** Whether a transcript needs a refresh: its last read failed, or a synchronous lstat sees another version. */
  private mayHaveChanged(attached: Attached, key: string): boolean {
    const entry = attached.index.get(key);
    if (!entry) return false;
    const files = this.tuning.files;
    if (entry.readFailed || !entry.identity || !files.lstatSync) return true;
    try {
      const stats = files.lstatSync(keyPath(attached.realRoot, key));
      return !stats.isFile() || !sameIdentity(entry.identity, fileIdentity(stats));
    } catch {
      return true; // gone or unreadable: the refresh says which
    }
  }

  /** The periodic full rescan: catches anything the watches missed, spaced by its own cost. */
  private scheduleRescan(attached: Attached, lastDurationMs: number, lastCpuMs: number): void {
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    const delay = Math.max(this.tuning.rescanMinIntervalMs, RESCAN_COST_FACTOR * lastDurationMs, this.tuning.rescanCpuFactor * lastCpuMs);
    this.rescanTimer = this.timer(() => {
      this.rescanTimer = undefined;
      if (this.isCurrent(attached)) this.markDirty({ kind: 'root' });
    }, delay);
  }

  // ---- listing and notifications ------------------------------------------------------------

  /**
   * The listing, rebuilt if stale. While the first index is built it is stale after every
   * read, so a request rebuilds it only as often as notifications do: otherwise each
   * completion during a 100k index would pay for a full rebuild.
   */
  private currentListing(): Listing {
    if (this.listingDirty && !(this.indexing && Date.now() - this.listingRebuiltAt < this.indexingSpacing())) {
      this.rebuildListing();
    }
    return this.listing;
  }

  /** How far apart listing rebuilds and change notifications are spaced while indexing. */
  private indexingSpacing(): number {
    return Math.max(INDEXING_NOTIFY_SPACING * this.tuning.notifyThrottleMs, INDEXING_REBUILD_COST_FACTOR * this.listingRebuildMs);
  }

  private rebuildListing(): void {
    this.listingDirty = false;
    const rereadKeys = this.rereadKeys;
    this.rereadKeys = undefined;
    const attached = this.attached;
    const started = performance.now();
    const next =
      (attached && rereadKeys && patchListing(this.listing, transcriptsOf(attached.index, rereadKeys))) ??
      (attached ? buildListing(attached.index.all()) : { sessions: Object.freeze([]), problems: [] });
    this.listingRebuildMs = performance.now() - started;
    this.listingRebuiltAt = Date.now();
    if (sameSessions(this.listing.sessions, next.sessions)) {
      this.listing = { sessions: this.listing.sessions, problems: next.problems };
    } else {
      this.listing = next;
      this.listingVersion++;
    }
    if (attached) this.reportProblems(attached, [...attached.discoveryProblems.values(), ...next.problems]);
  }

  private reportProblems(attached: Attached, problems: DiscoveryProblem[]): void {
    for (const problem of problems) {
      const reported = toStoreProblem(attached.realRoot, problem);
      const id = `${reported.path}\u0000${reported.reason}`;
      if (this.reported.has(id)) continue;
      this.reported.add(id);
      this.log(`skipping ${reported.path}: ${reported.reason}`);
      this.problemEmitter.fire(reported);
    }
  }

  /** The listing is stale: because `rereadKey` was re-read, or (no key) for any other reason. */
  private markListingDirty(attached: Attached, rereadKey?: string): void {
    if (rereadKey === undefined) this.rereadKeys = undefined;
    else if (!this.listingDirty) this.rereadKeys = new Set([rereadKey]);
    else if (this.rereadKeys && this.rereadKeys.size < MAX_PATCHED_TRANSCRIPTS) this.rereadKeys.add(rereadKey);
    else this.rereadKeys = undefined;
    this.listingDirty = true;
    if (this.disposed) return;
    this.scheduleCacheSave(attached, this.tuning.cacheSaveDelayMs);
    if (this.notifyTimer) return;
    // While indexing, the listing changes constantly; listeners hear about it less often.
    const spacing = this.indexing ? this.indexingSpacing() : this.tuning.notifyThrottleMs;
    const wait = Math.max(0, this.lastNotifyAt + spacing - Date.now());
    this.notifyTimer = this.timer(() => {
      this.notifyTimer = undefined;
      this.notifyNow();
    }, wait);
  }

  /** Rebuilds the listing if needed and tells listeners when its answer changed. */
  private notifyNow(): void {
    if (this.disposed) return;
    this.currentListing();
    this.lastNotifyAt = Date.now();
    if (this.listingVersion === this.notifiedVersion) return;
    this.notifiedVersion = this.listingVersion;
    this.changeEmitter.fire();
  }

  private emitStatus(force: boolean): void {
    if (this.disposed) return;
    const wait = this.lastStatusAt + this.tuning.notifyThrottleMs - Date.now();
    if (force || wait <= 0) {
      if (this.statusTimer) clearTimeout(this.statusTimer);
      this.statusTimer = undefined;
      this.lastStatusAt = Date.now();
      this.statusEmitter.fire(this.status());
    } else if (!this.statusTimer) {
      this.statusTimer = this.timer(() => {
        this.statusTimer = undefined;
        this.emitStatus(true);
      }, wait);
    }
  }

  // ---- persistent cache -----------------------------------------------------------------------

  private async loadCache(attached: Attached): Promise<void> {
    if (this.cacheDir === undefined) return;
    const realCacheDir = await fsp.realpath(this.cacheDir).catch(() => this.cacheDir as string);
    if ([this.cacheDir, realCacheDir].some((dir) => isWithin(dir, attached.realRoot) || isWithin(dir, this.root))) {
      this.log(`index cache directory ${this.cacheDir} is inside the sessions root; not using a persistent cache`);
      return;
    }
    attached.cacheFile = summaryCacheFile(this.cacheDir, attached.realRoot);
    // Killed writes' leftovers (of any root) go; a write in progress elsewhere stays.
    this.background(removeStaleTempFiles(this.cacheDir));
    attached.omitted = new Map();
    attached.cache = await loadSummaryCache(attached.cacheFile, attached.realRoot, attached.omitted);
  }

  private scheduleCacheSave(attached: Attached, delayMs: number): void {
    if (!attached.cacheFile || this.indexing || this.cacheTimer || this.disposed) return;
    this.cacheTimer = this.timer(() => {
      this.cacheTimer = undefined;
      const cacheFile = attached.cacheFile;
      if (!this.isCurrent(attached) || !cacheFile) return;
      if (this.cacheSaving) return this.scheduleCacheSave(attached, Math.max(delayMs, this.tuning.cacheSaveDelayMs));
      if (!attached.cacheStale) return;
      attached.cacheStale = false;
      this.cacheSaving = true;
      const write = saveSummaryCache(cacheFile, attached.realRoot, this.untilDisposed(cachedSummaries(attached.index)))
        .catch((error) => {
          attached.cacheStale = true;
          if (this.disposed) return;
          if (!this.cacheFailureLogged) this.log(`cannot write the index cache ${cacheFile}: ${(error as Error).message}`);
          this.cacheFailureLogged = true;
        })
        .finally(() => {
          this.cacheSaving = false;
          cacheWrites.delete(write);
        });
      cacheWrites.add(write);
      this.background(write);
    }, delayMs);
  }
}

/** Index-cache writes in progress, of every store (see {@link cacheWritesSettled}). */
const cacheWrites = new Set<Promise<void>>();

/**
 * Resolves once no index-cache write is in progress: a write of a disposed store stops at its next entry
 * and removes its temp file, so a process that waits for this before exiting leaves no `.tmp` behind.
 */
export async function cacheWritesSettled(): Promise<void> {
  while (cacheWrites.size > 0) await Promise.allSettled([...cacheWrites]);
}

/** The indexed transcripts behind some keys (keys no longer indexed are skipped). */
function* transcriptsOf(index: TranscriptIndex, keys: Iterable<string>): Generator<IndexedTranscript> {
  for (const key of keys) {
    const entry = index.get(key);
    if (entry) yield entry;
  }
}

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
