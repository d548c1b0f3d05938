/**
 * Freshness scheduling: what keeps the index true to the disk once built. Directory watches
 * (as many as the cap allows, most recently written first) queue scopes for a debounced
 * re-read; a sweep re-stats, a batch per tick, the transcripts no watch covers (and retries
 * failed reads); a full rescan, spaced by its own cost, catches whatever both missed. The looks
 * themselves are the scanner's, awaited; what freshness finds it reports on the event stream.
 */
import { keyPath } from '../discovery';
import type { SessionLayout } from '../formats/adapter';
import { baseDepthOf, isLeafFolder, parentKey, scopeOfChange, type DiscoveryScope } from '../layoutScopes';
import { PendingScopes } from '../pendingScopes';
import { sameIdentity } from '../transcriptFiles';
import type { TimerSlot } from './clock';
import type { StoreEvents } from './events';
import type { Scanner } from './scanning';
import type { Attached, StoreState } from './state';

/** How long the first index's watches wait at most for the answers that waited for the index (ms)… */
const WATCH_WAIT_MAX_MS = 5000;
/** …looking this often whether those answers are out. */
const WATCH_POLL_MS = 5;

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

/** The looks at the disk freshness asks for and awaits: scans, re-reads, whether the root is still the same directory. */
export type FreshnessLooks = Pick<Scanner, 'scan' | 'refresh' | 'rootStillAttached'>;

export class Freshness {
  private readonly pending = new PendingScopes();
  private pendingSince = 0;
  private readonly flushTimer: TimerSlot;
  /** When the last look at what the watches reported (no full rescan) ended, and how long it took. */
  private lastLookEnd = -Infinity;
  private lastLookMs = 0;
  private flushing = false;
  private flushAgain = false;

  private readonly sweepTimer: TimerSlot;
  private sweepQueue: string[] = [];
  private sweeping = false;
  /** Keys per sweep tick in the current pass, its start, and the synchronous time it took so far. */
  private sweepBatch = 0;
  private sweepPassStart = 0;
  private sweepPassCostMs = 0;
  /** Keys the current pass has visited, of how many. */
  private sweepPassVisited = 0;
  private sweepPassKeys = 0;
  private readonly rescanTimer: TimerSlot;
  private readonly catchUpTimer: TimerSlot;
  private readonly watchTimer: TimerSlot;
  /** Full rescans (re-reads of the root scope) completed, for tests that wait for one. */
  private rescans = 0;
  /** The attached root, as root attachment last reported it. */
  private attached: Attached | undefined;

  constructor(
    private readonly state: StoreState,
    private readonly events: StoreEvents,
    private readonly looks: FreshnessLooks,
    /** Where the root's sessions lie. */
    private readonly layout: SessionLayout,
  ) {
    this.flushTimer = state.timer();
    this.sweepTimer = state.timer();
    this.rescanTimer = state.timer();
    this.catchUpTimer = state.timer();
    this.watchTimer = state.timer();
  }

  /** How many full rescans have completed. */
  get completedRescans(): number {
    return this.rescans;
  }

  /**
   * The first index is built: its directories are watched and the sweep starts. Fewer
   * directories than watches are all watched at once, before the answers that waited. Deferred,
   * a change between those answers and the watches was seen only by the catch-up rescan, which
   * waits for 500 ms without requests: a client polling faster gives none.
   */
  watchFirstIndex(attached: Attached): void {
    if (attached.directories.size < this.state.tuning.maxWatches) this.keepFresh(attached);
    else this.watchOnceAnswered(attached, this.state.clock.now());
  }

  /**
   * Catches up with what changed while the first index was built, before its directories were
   * watched, in a quiet moment (see the tuning). An answer meanwhile is as fresh as one given
   * during the rescan would be: listings never wait for a rescan.
   */
  catchUpWithFirstIndex(attached: Attached): void {
    const { state } = this;
    const since = state.clock.now();
    const catchUp = (delayMs: number): void =>
      this.catchUpTimer.set(() => {
        if (!state.isCurrent(attached)) return;
        const wait = state.quietWaitMs(since);
        if (wait > 0) return catchUp(wait);
        // The rescan covers what changed before the directories were watched: they are, first.
        if (this.watchTimer.active) {
          this.watchTimer.clear();
          this.keepFresh(attached);
        }
        this.markDirty({ kind: 'root' });
      }, delayMs);
    catchUp(state.tuning.catchUpDelayMs);
  }

  /**
   * Watches the first index's directories (more than the watches allow) and starts the sweep of
   * those not watched, once the answers that waited for that index are out: ranking 100,000
   * directories and adding the first watches held those answers. After {@link WATCH_WAIT_MAX_MS}
   * at the latest. Whatever changes meanwhile the catch-up rescan covers, as it covers what
   * changed during the index and while the watches are added a batch at a time: it starts after
   * the watches.
   */
  private watchOnceAnswered(attached: Attached, since: number): void {
    const { state } = this;
    if (state.tuning.foreground.quietForMs() > 0 || state.clock.now() - since >= WATCH_WAIT_MAX_MS) {
      this.keepFresh(attached);
      return;
    }
    this.watchTimer.set(() => {
      if (state.isCurrent(attached)) this.watchOnceAnswered(attached, since);
    }, WATCH_POLL_MS);
  }

  /** Directory watches, and the sweep of the transcripts they leave unwatched. */
  private keepFresh(attached: Attached): void {
    this.updateWatches(attached);
    this.scheduleSweep(attached);
  }

  /** The root attached now (undefined: none): what the looks are at. */
  setRoot(attached: Attached | undefined): void {
    this.attached = attached;
  }

  /** A watch of `attached` saw a change in `dir` (to `name`, if known). */
  onWatchEvent(attached: Attached, dir: string, name: string | undefined): void {
    if (!this.state.isCurrent(attached)) return;
    const scope = scopeOfChange(this.layout, dir, name);
    if (scope !== undefined) this.markDirty(scope);
  }

  /** Queues a scope for re-reading after a short quiet time (a burst is read once). */
  markDirty(scope: DiscoveryScope): void {
    const { state } = this;
    if (state.disposed) return;
    this.pending.add(scope);
    // Nothing competes with the first index: it ends by re-reading the whole root, which covers this.
    if (state.indexing && this.attached) return;
    const now = state.clock.now();
    if (!this.flushTimer.active) this.pendingSince = now;
    const debounced = Math.min(state.tuning.debounceMs, this.pendingSince + state.tuning.maxDebounceMs - now);
    // A look that cost much (a large file written continuously, read again at each) spaces the next.
    const spaced = state.tuning.refreshCostFactor * this.lastLookMs - (now - this.lastLookEnd);
    this.flushTimer.set(() => state.background(this.flush()), Math.max(0, debounced, spaced));
  }

  /** Looks at the scopes queued at once, instead of after their quiet time; settles when that look ends. */
  async flushNow(): Promise<void> {
    if (!this.flushTimer.active) return;
    this.flushTimer.clear();
    await this.flush();
  }

  private async flush(): Promise<void> {
    const { state } = this;
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    try {
      const attached = this.attached;
      const root = this.pending.includesRoot;
      const scopes = this.pending.take();
      if (!attached || !state.isCurrent(attached)) return;
      if (!(await this.looks.rootStillAttached(attached))) {
        if (state.isCurrent(attached)) this.events.emit({ type: 'rootReplaced', attached });
        return;
      }
      const started = state.clock.now();
      const cpuStarted = state.clock.cpuMs();
      await Promise.all(scopes.map((scope) => this.looks.scan(attached, scope)));
      if (!state.isCurrent(attached)) return;
      if (!root) {
        this.lastLookEnd = state.clock.now();
        this.lastLookMs = this.lastLookEnd - started;
      }
      if (root) {
        this.updateWatches(attached);
        this.scheduleRescan(attached, state.clock.now() - started, state.clock.cpuMs() - cpuStarted);
      }
      this.events.emit({ type: 'settled' });
      if (root) this.rescans++;
    } finally {
      this.flushing = false;
      if (this.flushAgain) {
        this.flushAgain = false;
        state.background(this.flush());
      }
    }
  }

  /**
   * Watches the base and the folders above the leaf folders (dsh: project folders), then leaf
   * folders (dsh: session folders), newest transcript first.
   */
  updateWatches(attached: Attached): void {
    const { state } = this;
    if (!state.isCurrent(attached)) return;
    const maxWatches = state.tuning.maxWatches;
    // Everything fits under the cap: no need to rank directories.
    if (attached.directories.size < maxWatches) return attached.watches.update(attached.directories);
    const recency = new Map<string, number>();
    for (const entry of attached.index.all()) {
      const dir = parentKey(entry.location.key);
      recency.set(dir, Math.max(recency.get(dir) ?? -Infinity, entry.identity?.mtimeMs ?? Infinity));
    }
    const projects: string[] = [];
    const sessions: string[] = [];
    const baseDepth = baseDepthOf(this.layout);
    for (const dir of attached.directories) (isLeafFolder(this.layout, baseDepth, dir) ? sessions : projects).push(dir);
    // A leaf folder without a transcript yet is about to get one: watch it first.
    const recencyOf = (dir: string) => recency.get(dir) ?? Infinity;
    const chosen = mostRecent(sessions, recencyOf, maxWatches - 1 - projects.length);
    chosen.sort((a, b) => recencyOf(b) - recencyOf(a) || (a < b ? -1 : 1));
    attached.watches.update([...projects, ...chosen]);
  }

  /**
   * Re-stats the transcripts whose directories are not watched, and those whose last read
   * failed, round robin: one pass per sweep period, a batch per tick. An unchanged file costs one
   * synchronous lstat; only a changed (or failed) one is refreshed.
   */
  scheduleSweep(attached: Attached, delayMs = this.state.tuning.sweepIntervalMs): void {
    const { state } = this;
    const { tuning, clock } = state;
    this.sweepTimer.set(() => {
      if (!state.isCurrent(attached)) return;
      if (this.sweeping) return this.scheduleSweep(attached);
      if (this.sweepQueue.length === 0) {
        const now = clock.now();
        // A pass takes its period, or its cost factor times what the last pass cost, whichever is longer.
        const passMs = Math.max(tuning.sweepPeriodMs, tuning.sweepCostFactor * this.sweepPassCostMs);
        const nextPass = this.sweepPassStart + passMs;
        if (this.sweepPassStart > 0 && now < nextPass) return this.scheduleSweep(attached, nextPass - now);
        this.sweepQueue = this.sweepKeys(attached);
        this.sweepPassStart = now;
        this.sweepPassCostMs = 0;
        this.sweepPassVisited = 0;
        this.sweepPassKeys = this.sweepQueue.length;
        // Its batches spread over all of that time, so no stretch of it costs more than the average.
        this.spreadSweep(passMs);
        // Nothing to sweep: look again next period.
        if (this.sweepQueue.length === 0) return this.scheduleSweep(attached, tuning.sweepPeriodMs);
      }
      const started = clock.monotonic();
      const visited = this.sweepQueue.splice(0, this.sweepBatch);
      const batch = visited.filter((key) => this.mayHaveChanged(attached, key));
      this.sweepPassCostMs += clock.monotonic() - started;
      this.sweepPassVisited += visited.length;
      this.resizeSweepBatch();
      if (batch.length === 0) return this.scheduleSweep(attached);
      this.sweeping = true;
      state.background(
        Promise.all(batch.map((key) => this.looks.refresh(attached, key))).finally(() => {
          this.sweeping = false;
          if (state.isCurrent(attached)) this.scheduleSweep(attached);
        }),
      );
    }, delayMs);
  }

  /**
   * Re-spreads the rest of the pass once its batches show what a visit costs: the pass is
   * stretched to its cost factor times its projected cost, as the next pass would be. Without
   * this the first pass (no earlier cost known) ran in one sweep period; at 100,000 unwatched
   * transcripts that was ~0.5 s of lstat in 30 s, right after every start.
   */
  private resizeSweepBatch(): void {
    const { tuning, clock } = this.state;
    if (this.sweepPassVisited === 0 || this.sweepQueue.length === 0) return;
    const projectedCostMs = (this.sweepPassCostMs / this.sweepPassVisited) * this.sweepPassKeys;
    const passMs = Math.max(tuning.sweepPeriodMs, tuning.sweepCostFactor * projectedCostMs);
    this.spreadSweep(this.sweepPassStart + passMs - clock.now());
  }

  /** Sizes the batches so the keys left in the pass take `ms`, a batch per sweep tick. */
  private spreadSweep(ms: number): void {
    const ticks = Math.max(1, Math.floor(ms / Math.max(1, this.state.tuning.sweepIntervalMs)));
    this.sweepBatch = Math.max(1, Math.ceil(this.sweepQueue.length / ticks));
  }

  /** What a sweep pass visits: failed reads first, then every transcript no watch covers. */
  private sweepKeys(attached: Attached): string[] {
    const failed = attached.index.failedKeys();
    const seen = new Set(failed);
    const keys = failed;
    for (const key of attached.index.keys()) {
      if (!seen.has(key) && !attached.watches.isWatched(parentKey(key))) keys.push(key);
    }
    return keys;
  }

  /** Whether a transcript needs a refresh: its last read failed, or a synchronous lstat sees another version. */
  private mayHaveChanged(attached: Attached, key: string): boolean {
    const entry = attached.index.get(key);
    if (!entry) return false;
    const files = this.state.tuning.files;
    if (entry.readFailed || !entry.identity || !files.lstatSync) return true;
    try {
      const stats = files.lstatSync(keyPath(attached.realRoot, key));
      // The Stats themselves hold the identity's fields: no copy per visit.
      return !stats.isFile() || !sameIdentity(entry.identity, stats);
    } catch {
      return true; // gone or unreadable: the refresh says which
    }
  }

  /**
   * The periodic full rescan (every directory listed, every transcript stat'ed): catches what the
   * watches and the sweep missed (a lost watch event, a transcript added beside another in an
   * unwatched directory), spaced by its own cost.
   */
  private scheduleRescan(attached: Attached, lastDurationMs: number, lastCpuMs: number): void {
    const { state } = this;
    const { tuning } = state;
    const delay = Math.max(tuning.rescanMinIntervalMs, tuning.rescanCostFactor * lastDurationMs, tuning.rescanCpuFactor * lastCpuMs);
    this.rescanTimer.set(() => {
      if (state.isCurrent(attached)) this.markDirty({ kind: 'root' });
    }, delay);
  }

  /** The root went, or the server winds down: watching, sweep and rescans stop (a new root starts its own). */
  forgetRoot(): void {
    this.catchUpTimer.clear();
    this.watchTimer.clear();
    this.sweepTimer.clear();
    this.rescanTimer.clear();
    this.sweepQueue = [];
    this.sweepPassStart = 0;
  }
}
