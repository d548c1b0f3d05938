/**
 * Another agent's home as a `ForeignSessionStore`: a view of the disk engine (`../diskStore.ts`)
 * whose root is the home and whose format is the agent's adapter made an engine format
 * (`homeFormat.ts`). The engine walks, watches, sweeps, rescans, caches and lists the home as it
 * does dsh's root; the view waits for the first index before the first listing, finds the file
 * listed for an id (a session not listed yet: what the watches reported looked at now, and the
 * whole home at most every `missRescanMs`), and tells its listeners with the agent's keys, each
 * kind of change spaced by `notifyThrottleMs`, none for the first listing (the caller's answer).
 */
import path from 'node:path';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { raceWithSignal } from '../../resolver';
import type { AgentSessionLog, SessionKey, SessionSurface, StoredSessionSummary } from '../../resolver/sessionStore';
import type { TimerHandle } from '../disk/clock';
import { DEFAULT_TUNING, type DiskStoreTuning } from '../disk/tuning';
import { nodeDirectoryFiles } from '../directoryFiles';
import { DiskSessionStore } from '../diskStore';
import { Emitter } from '../emitter';
import type { FormatAdapter } from '../formats/adapter';
import type { Subscription } from '../service';
import { DEFAULT_FOREIGN_TUNING, type ForeignSessionStore, type ForeignStoreOptions, type ForeignStoreTuning } from './foreignStore';
import { homeFormat, type HomeFormat } from './homeFormat';

/**
 * The engine's knobs for a home. A home's sweep period (and cost factor) spaces the full rescan
 * as well, the first one (the catch-up after the first index) included: every change is seen
 * within that period even where no watch is (a new file beside others in an unwatched folder); the
 * first index is read in the main thread; the first cache is written as
 * soon as the first index is built; the view spaces the notifications itself.
 */
function engineTuning(tuning: ForeignStoreTuning): Partial<DiskStoreTuning> {
  return {
    clock: tuning.clock,
    indexWorkers: 0,
    maxWatches: tuning.maxWatches,
    debounceMs: tuning.debounceMs,
    maxDebounceMs: Math.max(tuning.debounceMs, DEFAULT_TUNING.maxDebounceMs),
    refreshCostFactor: tuning.refreshCostFactor,
    sweepIntervalMs: Math.min(DEFAULT_TUNING.sweepIntervalMs, tuning.sweepPeriodMs),
    sweepPeriodMs: tuning.sweepPeriodMs,
    sweepCostFactor: tuning.sweepCostFactor,
    rescanMinIntervalMs: tuning.sweepPeriodMs,
    rescanCostFactor: tuning.sweepCostFactor,
    rescanCpuFactor: 0,
    // The rescan's own quiet time (the debounce) included.
    catchUpDelayMs: Math.max(0, tuning.sweepPeriodMs - tuning.debounceMs),
    rootPollMs: tuning.sweepPeriodMs,
    notifyThrottleMs: 0,
    cacheSaveDelayMs: tuning.cacheSaveDelayMs,
    firstCacheSaveDelayMs: 0,
    ...(tuning.watchFactory === undefined ? {} : { directories: { ...nodeDirectoryFiles, watch: tuning.watchFactory } }),
  };
}

/** A throttled notification: fires at most every `notifyThrottleMs`, the first at once. */
class Spaced {
  private timer: TimerHandle;
  private lastAt = -Infinity;

  constructor(
    private readonly tuning: ForeignStoreTuning,
    private readonly fire: () => void,
  ) {}

  get pending(): boolean {
    return this.timer !== undefined;
  }

  schedule(): void {
    if (this.timer !== undefined) return;
    const { clock, notifyThrottleMs } = this.tuning;
    this.timer = clock.setTimeout(() => {
      this.timer = undefined;
      this.lastAt = clock.monotonic();
      this.fire();
    }, Math.max(0, this.lastAt + notifyThrottleMs - clock.monotonic()));
  }

  clear(): void {
    if (this.timer !== undefined) this.tuning.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** `adapter`'s store of `home` (see `openForeignStore`). */
export function openHomeStore(adapter: FormatAdapter, home: string, options: ForeignStoreOptions): ForeignSessionStore {
  return new HomeStore(adapter, home, options, { ...DEFAULT_FOREIGN_TUNING, ...options.tuning });
}

class HomeStore implements ForeignSessionStore {
  readonly agent: ForeignAgent;
  private readonly root: string;
  private readonly format: HomeFormat;
  private readonly disk: DiskSessionStore;
  private readonly tuning: ForeignStoreTuning;
  /** Whether the first index is built (notifications before it are the first listing's, not changes). */
  private firstListed = false;
  private disposed = false;
  private lastMissRescanAt = -Infinity;
  private readonly changes: Emitter<void>;
  private readonly contents: Emitter<readonly SessionKey[]>;
  /** Sessions read again since content listeners were last told. */
  private rereadIds = new Set<string>();
  private readonly changeNotice: Spaced;
  private readonly contentNotice: Spaced;

  constructor(
    adapter: FormatAdapter,
    readonly home: string,
    options: ForeignStoreOptions,
    tuning: ForeignStoreTuning,
  ) {
    this.agent = adapter.agent;
    this.tuning = tuning;
    this.root = path.resolve(home);
    const log = options.log ?? (() => undefined);
    this.format = homeFormat(adapter, options.files);
    this.disk = new DiskSessionStore({ root: home, log, ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }) }, engineTuning(tuning), this.format);
    const onListenerError = (error: unknown) => log(`${this.agent} store: listener failed: ${String(error)}`);
    this.changes = new Emitter(onListenerError);
    this.contents = new Emitter(onListenerError);
    this.changeNotice = new Spaced(tuning, () => this.changes.fire());
    this.contentNotice = new Spaced(tuning, () => {
      const sessions = [...this.rereadIds].map((id): SessionKey => ({ agent: this.agent, id }));
      this.rereadIds = new Set();
      this.contents.fire(sessions);
    });
    void this.disk.whenIndexed().then(() => {
      this.firstListed = true;
    });
    this.disk.onDidChange(() => {
      if (this.firstListed && !this.disposed) this.changeNotice.schedule();
    });
    this.disk.onDidChangeContent((sessions) => {
      if (!this.firstListed || this.disposed) return;
      for (const { id } of sessions) this.rereadIds.add(id);
      this.contentNotice.schedule();
    });
  }

  /** Reads that folded only the appended bytes (for tests and figures). */
  get resumedReads(): number {
    return this.format.resumedReads;
  }

  onDidChange(listener: () => void): Subscription {
    return this.changes.on(listener);
  }

  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription {
    return this.contents.on(listener);
  }

  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    signal?.throwIfAborted();
    await this.disk.whenIndexed(signal);
    return this.disk.listSessions(signal);
  }

  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    await this.findListed(sessionId, signal);
    return this.disk.readSurface(sessionId, signal);
  }

  async readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog> {
    await this.findListed(sessionId, signal);
    return this.format.readLog(this.root, sessionId, signal);
  }

  /** Writes the persistent cache now (the process is about to end). */
  saveCache(): Promise<void> {
    return this.disk.saveCache();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.disk.dispose();
    this.changeNotice.clear();
    this.contentNotice.clear();
    this.changes.clear();
    this.contents.clear();
  }

  /** Live handles (for leak tests): folder watches and pending timers. */
  handles(): { watches: number; timers: number } {
    const { watches, timers } = this.disk.handles();
    return { watches, timers: timers + (this.changeNotice.pending ? 1 : 0) + (this.contentNotice.pending ? 1 : 0) };
  }

  /**
   * After the first listing, makes sure the listing's keys are current for `sessionId`: one not
   * listed (maybe a session that just appeared) after what the watches reported, and (at most
   * every `missRescanMs`) a rescan of the home for what they did not.
   */
  private async findListed(sessionId: string, signal?: AbortSignal): Promise<void> {
    await this.listSessions(signal);
    if (this.format.keyOf(sessionId) !== undefined) return;
    const { clock, missRescanMs } = this.tuning;
    const wholeRoot = clock.monotonic() - this.lastMissRescanAt >= missRescanMs;
    if (wholeRoot) this.lastMissRescanAt = clock.monotonic();
    await raceWithSignal(this.disk.lookAgain(wholeRoot), signal);
    await this.disk.listSessions(signal);
  }
}
