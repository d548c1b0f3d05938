import { promises as fsp } from 'node:fs';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { raceWithSignal } from '../../resolver';
import { SessionReadError, type SessionStore, type SessionSurface, type StoredSessionSummary } from '../../resolver/sessionStore';
import type { AgentSessionLog, SessionKey } from '../../resolver/sessionStore';
import { systemClock, type Clock, type TimerHandle } from '../disk/clock';
import { DirectoryWatches } from '../directoryWatches';
import { Emitter } from '../emitter';
import type { Subscription } from '../service';
import { nodeDirectoryFiles, type WatchFactory } from '../directoryFiles';
import { HomeCache } from '../engine/homeCache';
import { HomeIndex, parentOf } from '../engine/homeIndex';
import { HomeWalk } from '../engine/homeWalk';
import { MAX_FOREIGN_FILE_BYTES, type FormatAdapter } from '../formats/adapter';
import { PlaintextTooLarge } from '../formats/compressed';
import type { JsonlRecord } from '../formats/records';
import { formatOf } from '../formats/registry';
import { isDatabaseAdapter } from '../formats/database';
import { openDatabaseStore } from './databaseStore';
import type { ForeignFiles } from './foreignRead';
import { readForeignRecords } from './foreignRecords';

export { MAX_FOREIGN_FILE_BYTES } from '../formats/adapter';

/** Another agent's store: read-only, listing and surfaces in the resolver's shapes. */
export interface ForeignSessionStore extends SessionStore {
  readonly agent: ForeignAgent;
  readonly home: string;
  /** The whole session as the user saw it (for a transcript); rejects as `readSurface` does. */
  readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog>;
  /**
   * Fires when the listing changed after the first one (a session created, deleted, renamed, or
   * written so that its row changed), at most every `notifyThrottleMs` as dsh's store does.
   */
  onDidChange(listener: () => void): Subscription;
  /** Fires, throttled with `onDidChange`, with the sessions whose files were read again after the first listing (rows changed or not). */
  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription;
  /** Stops watching and sweeping; no cache write starts after (one in progress finishes). */
  dispose(): void;
}

/** How the store keeps its listing fresh and its cache written. */
export interface ForeignStoreTuning {
  /** Quiet time after a watch event before the folder (or file) it names is looked at again. */
  debounceMs: number;
  /**
   * …and at least this many times the last such look took, since it ended: a session being written
   * is read again at each look (its bytes before the last read's end hashed, only the new ones
   * folded; a compressed one decoded whole), so a large one written continuously costs at most
   * ~1/(1+factor) of a core (default 10).
   */
  refreshCostFactor: number;
  /**
   * The sweep: a full walk of the home (every folder listed, every session file stat'ed) behind the
   * watches, for lost events and folders past `maxWatches`; passes at least `sweepPeriodMs` and
   * `sweepCostFactor` × the last walk's duration apart.
   */
  sweepPeriodMs: number;
  sweepCostFactor: number;
  /** Folder watches at most (the home, the session folders' parents, then the most recent session folders). */
  maxWatches: number;
  watchFactory?: WatchFactory;
  /** Delay before the persistent cache is rewritten after a change. */
  cacheSaveDelayMs: number;
  /** A read of an id that is not listed walks the home first, at most this often. */
  missRescanMs: number;
  /** Minimum spacing of `onDidChange` notifications (dsh's store: 100 ms). */
  notifyThrottleMs: number;
  /** Time (tests pass a fake clock): what the spacing above is measured and waited in. */
  clock: Clock;
}

export const DEFAULT_FOREIGN_TUNING: ForeignStoreTuning = {
  debounceMs: 30,
  refreshCostFactor: 10,
  sweepPeriodMs: 30_000,
  sweepCostFactor: 400,
  maxWatches: 1024,
  cacheSaveDelayMs: 5000,
  missRescanMs: 1000,
  notifyThrottleMs: 100,
  clock: systemClock,
};

export interface ForeignStoreOptions {
  /** Diagnostic logging (files skipped, refreshes that failed). */
  log?: (message: string) => void;
  /**
   * Where the persistent summary cache lives (one file per agent home; the dsh store's cache
   * directory). Absent, or inside the agent's home: no persistent cache.
   */
  cacheDir?: string;
  /** Opens session files for the listing's reads (tests count reads); default: the file system. */
  files?: ForeignFiles;
  tuning?: Partial<ForeignStoreTuning>;
}

/**
 * Open another agent's store under `home`, strictly read-only. The first listing walks the home
 * (folders listed, session files stat'ed) and reads only the files the persistent cache does not
 * describe by the same identity (size, modification and change time, inode); later listings are
 * answered from memory at once, without touching the disk. Folder watches on the home, the parents
 * of the session folders and the most recent session folders report new, renamed, deleted and
 * written sessions: the folder (or the one file) named is looked at again after a short quiet time,
 * and only a file whose identity changed is read again (one that grew: only its new bytes folded,
 * see `foreignRead.ts`). A slow sweep walks the whole home behind the watches. While nothing changes
 * the listing is the same frozen array, which keeps the candidate index; a new one is told to
 * `onDidChange` listeners. Damage (torn lines, garbage, a damaged cache) is skipped, never fatal.
 */
export function openForeignStore(agent: ForeignAgent, home: string, options: ForeignStoreOptions | ((message: string) => void) = {}): ForeignSessionStore {
  const opened = typeof options === 'function' ? { log: options } : options;
  // An agent whose sessions are rows of one database has its own store (`databaseStore.ts`).
  const format = formatOf(agent);
  if (isDatabaseAdapter(format)) return openDatabaseStore(format, home, opened);
  return new ForeignStore(format, home, opened);
}


class ForeignStore implements ForeignSessionStore {
  private readonly format: FormatAdapter;
  private readonly tuning: ForeignStoreTuning;
  private readonly clock: Clock;
  private readonly log: (message: string) => void;
  private readonly index: HomeIndex;
  private readonly walk: HomeWalk;

  private queue: Promise<void> = Promise.resolve();
  private started: Promise<void> | undefined;
  private firstListed = false;
  private disposed = false;
  private lastFullScanAt = -Infinity;
  private lastFullScanMs = 0;
  /** When the last look at what the watches reported ended, and how long it took. */
  private lastRefreshEnd = -Infinity;
  private lastRefreshMs = 0;

  private watches: DirectoryWatches | undefined;
  private readonly dirtyDirs = new Set<string>();
  private readonly dirtyFiles = new Set<string>();
  /** Pending timers (the clock's handles); undefined while none is. */
  private refreshTimer: TimerHandle;
  private sweepTimer: TimerHandle;

  private cache: HomeCache | undefined;
  private cacheTimer: TimerHandle;

  private readonly changes: Emitter<void>;
  private readonly contents: Emitter<readonly SessionKey[]>;
  /** Sessions read again since content listeners were last told. */
  private rereadIds = new Set<string>();
  private contentTimer: TimerHandle;
  private lastContentNotifyAt = -Infinity;
  private notifyTimer: TimerHandle;
  private lastNotifyAt = -Infinity;

  readonly agent: ForeignAgent;

  constructor(
    format: FormatAdapter,
    readonly home: string,
    private readonly options: ForeignStoreOptions,
  ) {
    this.agent = format.agent;
    this.format = format;
    this.tuning = { ...DEFAULT_FOREIGN_TUNING, ...options.tuning };
    this.clock = this.tuning.clock;
    this.log = options.log ?? (() => undefined);
    this.index = new HomeIndex(format.agent);
    this.walk = new HomeWalk(this.index, this.format, home, { log: this.log, ...(options.files === undefined ? {} : { files: options.files }) });
    const onListenerError = (error: unknown) => this.log(`${this.agent} store: listener failed: ${String(error)}`);
    this.changes = new Emitter(onListenerError);
    this.contents = new Emitter(onListenerError);
  }

  /** Reads that folded only the appended bytes (for tests and figures). */
  get resumedReads(): number {
    return this.walk.resumedReads;
  }

  onDidChange(listener: () => void): Subscription {
    return this.changes.on(listener);
  }

  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription {
    return this.contents.on(listener);
  }

  // ---- the resolver's seam ----------------------------------------------------------------------

  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    signal?.throwIfAborted();
    if (!this.firstListed) await raceWithSignal(this.start(), signal);
    return this.index.listing;
  }

  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    const { records, summary } = await this.readRecords(sessionId, signal);
    const last = records.length === 0 ? null : records[records.length - 1]!.line;
    return { header: this.header(sessionId, summary), capturedThroughSeq: last, events: this.format.surface(records) };
  }

  async readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog> {
    const { records, summary } = await this.readRecords(sessionId, signal);
    return { header: this.header(sessionId, summary), events: this.format.log(records), ...(summary?.title === undefined ? {} : { title: summary.title }) };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.watches?.dispose();
    this.watches = undefined;
    this.cache?.dispose();
    for (const timer of [this.refreshTimer, this.sweepTimer, this.cacheTimer, this.notifyTimer, this.contentTimer]) if (timer !== undefined) this.clock.clearTimeout(timer);
    this.refreshTimer = this.sweepTimer = this.cacheTimer = this.notifyTimer = this.contentTimer = undefined;
    this.changes.clear();
    this.contents.clear();
  }

  /** Live handles (for leak tests): folder watches and pending timers. */
  handles(): { watches: number; timers: number } {
    const timers = [this.refreshTimer, this.sweepTimer, this.cacheTimer, this.notifyTimer, this.contentTimer].filter((timer) => timer !== undefined).length;
    return { watches: this.watches?.count ?? 0, timers: timers + (this.watches?.adding === true ? 1 : 0) };
  }

  private header(sessionId: string, summary: StoredSessionSummary | undefined): SessionSurface['header'] {
    return { id: sessionId, ...(summary?.cwd === undefined ? {} : { cwd: summary.cwd }), createdAt: summary?.createdAt ?? 0, agent: this.agent };
  }

  /** One session's records (streamed in bounded lines, see `foreignRecords.ts`), and its listing row. */
  private async readRecords(sessionId: string, signal?: AbortSignal): Promise<{ records: JsonlRecord[]; summary: StoredSessionSummary | undefined }> {
    const key = await this.keyOf(sessionId, signal);
    if (key === undefined) throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
    let records: JsonlRecord[];
    try {
      const info = await fsp.stat(this.walk.full(key));
      if (info.size > MAX_FOREIGN_FILE_BYTES) throw new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
      records = await readForeignRecords(this.walk.full(key), signal);
    } catch (error) {
      if (error instanceof SessionReadError) throw error;
      if (error instanceof PlaintextTooLarge) throw new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
      signal?.throwIfAborted();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`, { cause: error });
      throw new SessionReadError('io', `cannot read ${this.agent} session ${JSON.stringify(sessionId)}: ${code ?? String(error)}`, { cause: error });
    }
    return { records, summary: this.index.listing.find((entry) => entry.id === sessionId) };
  }

  /** The key of the file listed for `sessionId`, after the first listing; one not listed is looked for first. */
  private async keyOf(sessionId: string, signal?: AbortSignal): Promise<string | undefined> {
    if (!this.firstListed) await raceWithSignal(this.start(), signal);
    if (this.index.keyOf(sessionId) === undefined) {
      // Maybe a session that just appeared: what the watches reported first, then (at most every
      // `missRescanMs`) a walk of the home for what they did not.
      await raceWithSignal(this.refreshNow(), signal);
      if (this.index.keyOf(sessionId) === undefined && this.clock.monotonic() - this.lastFullScanAt >= this.tuning.missRescanMs) {
        await raceWithSignal(this.enqueue(() => this.fullScan()), signal);
      }
    }
    return this.index.keyOf(sessionId);
  }

  // ---- scheduling ---------------------------------------------------------------------------------

  /** Work on the index, one piece at a time; a failure is logged, never thrown at a later caller. */
  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(() => (this.disposed ? undefined : work()));
    this.queue = run.catch((error: unknown) => this.log(`${this.agent} store: ${error instanceof Error ? error.message : String(error)}`));
    return this.queue;
  }

  /** The first listing: the cache, one walk of the home, then watches and the sweep. Never rejects. */
  private start(): Promise<void> {
    this.started ??= this.enqueue(async () => {
      try {
        this.cache = await HomeCache.open(this.format, this.walk.cacheRule, this.home, this.options.cacheDir, this.index, this.log);
        await this.fullScan();
        // The first cache is written at once (a CLI process lives only that long), later ones after a quiet time.
        if (this.cacheTimer !== undefined) this.clock.clearTimeout(this.cacheTimer);
        this.cacheTimer = undefined;
        this.saveCache();
      } finally {
        this.firstListed = true;
        this.walk.keepEveryState = true;
        if (!this.disposed) {
          this.watches = new DirectoryWatches(this.home, (dir, name) => this.onWatch(dir, name), this.tuning.maxWatches, this.log, this.tuning.watchFactory ?? nodeDirectoryFiles.watch);
          this.updateWatches();
          this.scheduleSweep();
        }
      }
    });
    return this.started;
  }

  private timer(callback: () => void, ms: number): TimerHandle {
    return this.clock.setTimeout(callback, ms);
  }

  private onWatch(dir: string, name: string | undefined): void {
    if (this.disposed) return;
    if (dir === '') {
      // The home holds much else (histories, logs, databases written all the time): only the
      // session folders' parent and the agent's title index and project registry matter.
      if (name !== undefined && name !== this.format.base && name !== this.format.titleIndex?.file && name !== this.format.projectIndex?.file) return;
      this.dirtyDirs.add('');
    } else if (name !== undefined && this.walk.depthOf(dir) === this.format.leafDepth && this.format.isSessionFile(name)) {
      this.dirtyFiles.add(`${dir}/${name}`);
    } else {
      this.dirtyDirs.add(dir);
    }
    const sinceLast = this.clock.monotonic() - this.lastRefreshEnd;
    this.refreshTimer ??= this.timer(
      () => {
        this.refreshTimer = undefined;
        void this.enqueue(() => this.processDirty());
      },
      Math.max(this.tuning.debounceMs, this.tuning.refreshCostFactor * this.lastRefreshMs - sinceLast),
    );
  }

  /** Settles once what the watches reported so far is in the listing. */
  private refreshNow(): Promise<void> {
    if (this.refreshTimer !== undefined) {
      this.clock.clearTimeout(this.refreshTimer);
      this.refreshTimer = undefined;
      return this.enqueue(() => this.processDirty());
    }
    return this.queue;
  }

  private scheduleSweep(): void {
    if (this.disposed) return;
    const delay = Math.max(this.tuning.sweepPeriodMs, this.tuning.sweepCostFactor * this.lastFullScanMs);
    this.sweepTimer = this.timer(() => {
      this.sweepTimer = undefined;
      void this.enqueue(() => this.fullScan()).finally(() => this.scheduleSweep());
    }, delay);
  }

  /** Walks the whole home (see `HomeWalk.fullScan`), timed for the sweep's spacing. */
  private async fullScan(): Promise<void> {
    const started = this.clock.monotonic();
    await this.walk.fullScan();
    this.lastFullScanAt = this.clock.monotonic();
    this.lastFullScanMs = this.lastFullScanAt - started;
    this.afterChanges();
  }

  /** What the watches reported: those folders listed again, those files stat'ed again. */
  private async processDirty(): Promise<void> {
    const started = this.clock.monotonic();
    const dirs = [...this.dirtyDirs];
    const files = [...this.dirtyFiles].filter((key) => !this.dirtyDirs.has(parentOf(key)));
    this.dirtyDirs.clear();
    this.dirtyFiles.clear();
    await this.walk.lookAgain(dirs, files);
    this.afterChanges();
    this.lastRefreshEnd = this.clock.monotonic();
    this.lastRefreshMs = this.lastRefreshEnd - started;
  }

  /** After a walk or a refresh: the listing rebuilt if anything changed, the watches and the cache kept up. */
  private afterChanges(): void {
    // The first listing is awaited by whoever asked for it; later ones are told (coalesced).
    if (this.index.rebuildListing() && this.firstListed) this.scheduleNotify();
    const reread = this.index.takeContentChanges();
    if (reread.size > 0 && this.firstListed) {
      for (const id of reread) this.rereadIds.add(id);
      this.scheduleContentNotify();
    }
    if (this.watches !== undefined && this.index.takeFolderChanges()) this.updateWatches();
    this.scheduleCacheSave();
  }

  /** Tells `onDidChange` listeners, at most every `notifyThrottleMs`. */
  private scheduleNotify(): void {
    if (this.disposed || this.notifyTimer !== undefined) return;
    const wait = Math.max(0, this.lastNotifyAt + this.tuning.notifyThrottleMs - this.clock.monotonic());
    this.notifyTimer = this.timer(() => {
      this.notifyTimer = undefined;
      this.lastNotifyAt = this.clock.monotonic();
      if (!this.disposed) this.changes.fire();
    }, wait);
  }

  /** Tells `onDidChangeContent` listeners the sessions read again, at most every `notifyThrottleMs`. */
  private scheduleContentNotify(): void {
    if (this.disposed || this.contentTimer !== undefined) return;
    const wait = Math.max(0, this.lastContentNotifyAt + this.tuning.notifyThrottleMs - this.clock.monotonic());
    this.contentTimer = this.timer(() => {
      this.contentTimer = undefined;
      this.lastContentNotifyAt = this.clock.monotonic();
      const sessions = [...this.rereadIds].map((id): SessionKey => ({ agent: this.agent, id }));
      this.rereadIds = new Set();
      if (!this.disposed) this.contents.fire(sessions);
    }, wait);
  }

  /** Watches the home, the folders above the session folders, then the most recently written session folders. */
  private updateWatches(): void {
    this.index.takeFolderChanges();
    this.watches?.update(this.index.foldersToWatch((dir) => this.walk.depthOf(dir), this.format.leafDepth));
  }

  // ---- the persistent cache -----------------------------------------------------------------------

  private scheduleCacheSave(): void {
    if (this.cache === undefined || !this.index.cacheStale || this.cacheTimer !== undefined || this.disposed) return;
    this.cacheTimer = this.timer(() => {
      this.cacheTimer = undefined;
      this.saveCache();
    }, this.tuning.cacheSaveDelayMs);
  }

  /** Starts writing the cache now, when it is stale and no write is in progress (else one is scheduled). */
  private saveCache(): void {
    const cache = this.cache;
    if (cache === undefined || this.disposed || !this.index.cacheStale) return;
    if (cache.writing) return this.scheduleCacheSave();
    void cache.save().then(() => this.scheduleCacheSave());
  }
}
