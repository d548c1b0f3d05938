/**
 * Freshness scheduling: what keeps the index true to the disk once built. Directory watches
 * (as many as the cap allows, most recently written first) queue scopes for a debounced
 * re-read; a sweep re-stats, a batch per tick, the transcripts no watch covers (and retries
 * failed reads); a full rescan, spaced by its own cost, catches whatever both missed.
 */
import { keyPath, scopeOfChange, type DiscoveryScope } from '../discovery';
import { PendingScopes } from '../pendingScopes';
import { sameIdentity } from '../transcriptFiles';
import type { TimerSlot } from './clock';
import type { Attached, StoreState } from './state';

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

/** What freshness needs from the rest of the store. */
export interface FreshnessDeps {
  scan(attached: Attached, scope: DiscoveryScope): Promise<void>;
  refresh(attached: Attached, key: string): Promise<unknown>;
  /** Whether the attached root is still the same directory; when not, `detach` is called. */
  rootStillAttached(attached: Attached): Promise<boolean>;
  detach(): void;
  /** A re-read finished: listeners may hear of its changes now. */
  notifyNow(): void;
}

export class Freshness {
  private readonly pending = new PendingScopes();
  private pendingSince = 0;
  private readonly flushTimer: TimerSlot;
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
  /** Full rescans (re-reads of the root scope) completed, for tests that wait for one. */
  private rescans = 0;

  constructor(
    private readonly state: StoreState,
    private readonly deps: FreshnessDeps,
  ) {
    this.flushTimer = state.timer();
    this.sweepTimer = state.timer();
    this.rescanTimer = state.timer();
  }

  /** How many full rescans have completed. */
  get completedRescans(): number {
    return this.rescans;
  }

  /** A watch of generation `generation` saw a change in `dir` (to `name`, if known). */
  onWatchEvent(generation: number, dir: string, name: string | undefined): void {
    if (generation === this.state.generation && !this.state.disposed) this.markDirty(scopeOfChange(dir, name));
  }

  /** Queues a scope for re-reading after a short quiet time (a burst is read once). */
  markDirty(scope: DiscoveryScope): void {
    const { state } = this;
    if (state.disposed) return;
    this.pending.add(scope);
    // Nothing competes with the first index: it ends by re-reading the whole root, which covers this.
    if (state.indexing && state.attached) return;
    const now = state.clock.now();
    if (!this.flushTimer.active) this.pendingSince = now;
    const wait = Math.max(0, Math.min(state.tuning.debounceMs, this.pendingSince + state.tuning.maxDebounceMs - now));
    this.flushTimer.set(() => state.background(this.flush()), wait);
  }

  private async flush(): Promise<void> {
    const { state } = this;
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    try {
      const attached = state.attached;
      const root = this.pending.includesRoot;
      const scopes = this.pending.take();
      if (!attached || !state.isCurrent(attached)) return;
      if (!(await this.deps.rootStillAttached(attached))) {
        if (state.isCurrent(attached)) this.deps.detach();
        return;
      }
      const started = state.clock.now();
      const cpuStarted = state.clock.cpuMs();
      await Promise.all(scopes.map((scope) => this.deps.scan(attached, scope)));
      if (!state.isCurrent(attached)) return;
      if (root) {
        this.updateWatches(attached);
        this.scheduleRescan(attached, state.clock.now() - started, state.clock.cpuMs() - cpuStarted);
      }
      this.deps.notifyNow();
      if (root) this.rescans++;
    } finally {
      this.flushing = false;
      if (this.flushAgain) {
        this.flushAgain = false;
        state.background(this.flush());
      }
    }
  }

  /** Watches project directories, then session directories, newest transcript first. */
  updateWatches(attached: Attached): void {
    const { state } = this;
    if (!state.isCurrent(attached)) return;
    const maxWatches = state.tuning.maxWatches;
    // Everything fits under the cap: no need to rank directories.
    if (attached.directories.size < maxWatches) return attached.watches.update(attached.directories);
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
        Promise.all(batch.map((key) => this.deps.refresh(attached, key))).finally(() => {
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
      if (!seen.has(key) && !attached.watches.isWatched(sessionDirOf(key))) keys.push(key);
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

  /** The root went: its sweep and rescan stop (a new root starts its own). */
  forgetRoot(): void {
    this.sweepTimer.clear();
    this.rescanTimer.clear();
    this.sweepQueue = [];
    this.sweepPassStart = 0;
  }
}
