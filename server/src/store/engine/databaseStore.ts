/**
 * The store of an agent whose sessions are rows of one database in its home (a `DatabaseAdapter`),
 * behind the same interface as the session-file engine: the database (and its write-ahead log) is
 * the one source, watched as a whole. A watch on the home that names either file, or the sweep,
 * stats both; a changed identity takes a new private snapshot (`databaseSnapshot.ts`), lists its
 * rows through the adapter and keeps the snapshot for reading sessions by id, until the next change.
 * A read first makes sure the snapshot is current, so it sees every committed write. Nothing is ever
 * written in the home. Without node:sqlite (Node before 22.13) the store lists nothing, says so once,
 * and a read fails as unsupported.
 */
import path from 'node:path';
import { FOREIGN_AGENT_INFO, foreignAgentInfo, type ForeignAgent, type ForeignAgentInfo } from '@dsh-session-ls/shared';
import { raceWithSignal } from '../../resolver';
import { compareStoreOrder } from '../../resolver/storeOrder';
import { SessionReadError, type AgentSessionLog, type SessionKey, type SessionSurface, type StoredSessionSummary } from '../../resolver/sessionStore';
import { nodeDirectoryFiles } from '../directoryFiles';
import { Emitter } from '../emitter';
import type { Subscription } from '../service';
import type { DatabaseAdapter } from '../formats/database';
import { DEFAULT_FOREIGN_TUNING, type ForeignSessionStore, type ForeignStoreTuning } from './foreignStore';
import { DatabaseSnapshot, SQLITE_RUNTIME, databaseIdentity, loadSqlite, sameDatabaseIdentity } from './databaseSnapshot';

/** The part of the other agents' stores' tuning that applies to one database. */
export type DatabaseStoreTuning = Pick<ForeignStoreTuning, 'debounceMs' | 'refreshCostFactor' | 'sweepPeriodMs' | 'watchFactory' | 'notifyThrottleMs'>;

/** The message said once when this runtime cannot read databases. */
export function sqliteMissingMessage(agent: ForeignAgent): string {
  const others = ['dsh', ...(FOREIGN_AGENT_INFO as readonly ForeignAgentInfo[]).filter((info) => info.sessionsDatabase !== true).map((info) => info.title)];
  const named = others.length === 1 ? others[0]! : `${others.slice(0, -1).join(', ')} and ${others[others.length - 1]!}`;
  return `${foreignAgentInfo(agent).title} sessions need ${SQLITE_RUNTIME} or newer, for node:sqlite; this is Node ${process.versions.node}, where ${named} sessions still work`;
}

/** Opens the store of `adapter`'s database in `home`, strictly read-only. */
export function openDatabaseStore(
  adapter: DatabaseAdapter,
  home: string,
  options: { log?: (message: string) => void; tuning?: Partial<DatabaseStoreTuning> } = {},
): ForeignSessionStore {
  return new DatabaseStore(adapter, home, options.log ?? (() => undefined), { ...DEFAULT_FOREIGN_TUNING, ...options.tuning });
}

class DatabaseStore implements ForeignSessionStore {
  readonly agent: ForeignAgent;
  private readonly file: string;
  private snapshot: DatabaseSnapshot | undefined;
  private listing: readonly StoredSessionSummary[] = Object.freeze([]);
  private queue: Promise<void> = Promise.resolve();
  private started: Promise<void> | undefined;
  private firstListed = false;
  private disposed = false;
  private readonly reported = new Set<string>();
  private watcher: { close(): void } | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private sweepTimer: ReturnType<typeof setTimeout> | undefined;
  private notifyTimer: ReturnType<typeof setTimeout> | undefined;
  private lastNotifyAt = -Infinity;
  private lastLookEnd = -Infinity;
  private lastLookMs = 0;
  private readonly changes: Emitter<void>;
  private readonly contents: Emitter<readonly SessionKey[]>;
  /** What listeners are to hear at the next notification: the listing changed, the content did. */
  private pendingListing = false;
  private pendingContent = false;

  constructor(
    private readonly adapter: DatabaseAdapter,
    readonly home: string,
    private readonly log: (message: string) => void,
    private readonly tuning: DatabaseStoreTuning,
  ) {
    this.agent = adapter.agent;
    this.file = path.join(home, adapter.file);
    const onListenerError = (error: unknown) => this.log(`${this.agent} store: listener failed: ${String(error)}`);
    this.changes = new Emitter(onListenerError);
    this.contents = new Emitter(onListenerError);
  }

  onDidChange(listener: () => void): Subscription {
    return this.changes.on(listener);
  }

  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription {
    return this.contents.on(listener);
  }

  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    signal?.throwIfAborted();
    if (!this.firstListed) await raceWithSignal(this.start(), signal);
    return this.listing;
  }

  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    const events = await this.readSession(sessionId, (db) => this.adapter.surface(db, sessionId), signal);
    const last = events.length === 0 ? null : Math.max(...events.map((event) => event.seq));
    return { header: this.header(sessionId), capturedThroughSeq: last, events };
  }

  async readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog> {
    const events = await this.readSession(sessionId, (db) => this.adapter.log(db, sessionId), signal);
    const title = this.listing.find((row) => row.id === sessionId)?.title;
    return { header: this.header(sessionId), events, ...(title === undefined ? {} : { title }) };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.watcher?.close();
    this.watcher = undefined;
    for (const timer of [this.refreshTimer, this.sweepTimer, this.notifyTimer]) if (timer !== undefined) clearTimeout(timer);
    this.refreshTimer = this.sweepTimer = this.notifyTimer = undefined;
    this.changes.clear();
    this.contents.clear();
    this.snapshot?.dispose();
    this.snapshot = undefined;
  }

  /** Live handles (for leak tests): the home's watch and pending timers. */
  handles(): { watches: number; timers: number } {
    return { watches: this.watcher === undefined ? 0 : 1, timers: [this.refreshTimer, this.sweepTimer, this.notifyTimer].filter((timer) => timer !== undefined).length };
  }

  private header(sessionId: string): SessionSurface['header'] {
    const row = this.listing.find((entry) => entry.id === sessionId);
    return { id: sessionId, ...(row?.cwd === undefined ? {} : { cwd: row.cwd }), createdAt: row?.createdAt ?? 0, agent: this.agent };
  }

  /** One session read from a current snapshot; rejects with a `SessionReadError`. */
  private async readSession<T>(sessionId: string, read: (db: DatabaseSnapshot) => T | undefined, signal?: AbortSignal): Promise<T> {
    if (loadSqlite() === undefined) throw new SessionReadError('unsupported', sqliteMissingMessage(this.agent));
    if (!this.firstListed) await raceWithSignal(this.start(), signal);
    await raceWithSignal(this.enqueue(() => this.look()), signal);
    const snapshot = this.snapshot;
    const notFound = (): SessionReadError => new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
    if (snapshot === undefined) throw notFound();
    let found: T | undefined;
    try {
      found = read(snapshot);
    } catch (error) {
      throw new SessionReadError('corrupt', `cannot read ${this.agent} session ${JSON.stringify(sessionId)}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (found === undefined) throw notFound();
    return found;
  }

  /** Work on the snapshot, one piece at a time; a failure is logged, never thrown at a later caller. */
  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(() => (this.disposed ? undefined : work()));
    this.queue = run.catch((error: unknown) => this.log(`${this.agent} store: ${error instanceof Error ? error.message : String(error)}`));
    return this.queue;
  }

  private start(): Promise<void> {
    this.started ??= this.enqueue(async () => {
      try {
        if (loadSqlite() === undefined) return this.report('runtime', sqliteMissingMessage(this.agent));
        await this.look();
      } finally {
        this.firstListed = true;
        if (!this.disposed && loadSqlite() !== undefined) this.watch();
      }
    });
    return this.started;
  }

  private report(key: string, message: string): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.log(`${this.agent} store: ${message}`);
  }

  /** Stats the database; when it changed, a new snapshot and listing. */
  private async look(): Promise<void> {
    const started = performance.now();
    try {
      const identity = await databaseIdentity(this.file).catch((error: unknown) => {
        this.report(`stat:${(error as NodeJS.ErrnoException).code}`, `cannot read ${this.file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
        return this.snapshot?.identity;
      });
      if (this.snapshot !== undefined && sameDatabaseIdentity(this.snapshot.identity, identity)) return;
      if (identity === undefined) return this.replace(undefined, []);
      await this.takeSnapshot();
    } finally {
      this.lastLookEnd = performance.now();
      this.lastLookMs = this.lastLookEnd - started;
    }
  }

  private async takeSnapshot(): Promise<void> {
    let snapshot: DatabaseSnapshot | undefined;
    try {
      snapshot = await DatabaseSnapshot.take(loadSqlite()!, this.file);
      const rows = snapshot === undefined ? [] : this.adapter.list(snapshot);
      this.replace(snapshot, rows.map((row) => Object.freeze({ ...row, agent: this.agent })));
    } catch (error) {
      snapshot?.dispose();
      const why = error instanceof Error ? error.message : String(error);
      this.report(`read:${why}`, `skipped ${this.file}: ${why}`);
      // A file system error is no fact about the database: what was known stays, and the next look tries again.
      if (typeof (error as NodeJS.ErrnoException).syscall === 'string') return;
      // A damaged or half-written database lists nothing until it changes again; never fatal.
      this.replace(undefined, []);
    }
  }

  private replace(snapshot: DatabaseSnapshot | undefined, rows: StoredSessionSummary[]): void {
    const contentChanged = this.snapshot !== snapshot;
    if (contentChanged) this.snapshot?.dispose();
    this.snapshot = snapshot;
    if (contentChanged && this.firstListed) {
      this.pendingContent = true;
      this.scheduleNotify();
    }
    rows.sort(compareStoreOrder);
    const same =
      rows.length === this.listing.length &&
      rows.every((row, i) => {
        const known = this.listing[i]!;
        return row.id === known.id && row.cwd === known.cwd && row.createdAt === known.createdAt && row.title === known.title;
      });
    if (same) return;
    this.listing = Object.freeze(rows);
    if (!this.firstListed) return;
    this.pendingListing = true;
    this.scheduleNotify();
  }

  private timer(callback: () => void, ms: number): ReturnType<typeof setTimeout> {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return timer;
  }

  /** Watches the home for the database and its log; the sweep looks behind the watch. */
  private watch(): void {
    const names = new Set([this.adapter.file, `${this.adapter.file}-wal`]);
    try {
      const watcher = (this.tuning.watchFactory ?? nodeDirectoryFiles.watch)(this.home, (_event, name) => {
        if (name === null || names.has(name)) this.onChange();
      });
      watcher.on?.('error', () => {
        watcher.close();
        if (this.watcher === watcher) this.watcher = undefined;
      });
      this.watcher = watcher;
    } catch {
      // No home yet (or no watches left): the sweep finds the database.
    }
    this.scheduleSweep();
  }

  private onChange(): void {
    if (this.disposed || this.refreshTimer !== undefined) return;
    const sinceLast = performance.now() - this.lastLookEnd;
    this.refreshTimer = this.timer(
      () => {
        this.refreshTimer = undefined;
        void this.enqueue(() => this.look());
      },
      Math.max(this.tuning.debounceMs, this.tuning.refreshCostFactor * this.lastLookMs - sinceLast),
    );
  }

  private scheduleSweep(): void {
    if (this.disposed) return;
    this.sweepTimer = this.timer(() => {
      this.sweepTimer = undefined;
      void this.enqueue(() => this.look()).finally(() => this.scheduleSweep());
    }, Math.max(this.tuning.sweepPeriodMs, this.tuning.refreshCostFactor * this.lastLookMs));
  }

  private scheduleNotify(): void {
    if (this.disposed || this.notifyTimer !== undefined) return;
    const wait = Math.max(0, this.lastNotifyAt + this.tuning.notifyThrottleMs - performance.now());
    this.notifyTimer = this.timer(() => {
      this.notifyTimer = undefined;
      this.lastNotifyAt = performance.now();
      if (this.disposed) return;
      const { pendingListing, pendingContent } = this;
      this.pendingListing = this.pendingContent = false;
      // Every listed session (one that left the listing changed it: `onDidChange` tells of that).
      if (pendingContent) this.contents.fire(this.listing.map((row): SessionKey => ({ agent: this.agent, id: row.id })));
      if (pendingListing) this.changes.fire();
    }, wait);
  }
}
