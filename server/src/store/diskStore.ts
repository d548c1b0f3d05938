/**
 * The on-disk `SessionStoreService`: discovery + index + listing, kept fresh by directory
 * watches, a sweep of unwatched sessions and an adaptive full rescan, all strictly read-only.
 *
 * A facade over the parts in `disk/`, each behind the few calls it needs of the others:
 * root attachment (`rootAttachment.ts`), scanning (`scanning.ts`), freshness scheduling
 * (`freshness.ts`), listing publication (`publication.ts`) and cache writing
 * (`cacheWriter.ts`). They share one `StoreState`; time and the file system come in through
 * the tuning (`disk/tuning.ts`), so tests can run the store in fake time.
 */
import path from 'node:path';
import type { SessionSurface, StoredSessionSummary } from '../resolver/sessionStore';
import { throwIfAborted } from './concurrency';
import { CacheWriter } from './disk/cacheWriter';
import type { TimerSlot } from './disk/clock';
import { Freshness } from './disk/freshness';
import { Publication } from './disk/publication';
import { RootAttachment } from './disk/rootAttachment';
import { Scanner } from './disk/scanning';
import { StoreState, type Attached } from './disk/state';
import { DEFAULT_TUNING, type DiskStoreTuning } from './disk/tuning';
import { readSessionSurface } from './lookup';
import type { OpenSessionStoreOptions, SessionStoreService, StoreProblem, StoreStatus, Subscription } from './service';
import { SummarizePool } from './summarize/pool';
import type { FileIdentity } from './transcriptFiles';

export { cacheWritesSettled } from './summaryCache';
export type { Clock } from './disk/clock';
export { DEFAULT_TUNING, INLINE_INDEX_BYTES, type DiskStoreTuning } from './disk/tuning';

/** How long the first index's watches wait at most for the answers that waited for the index (ms)… */
const WATCH_WAIT_MAX_MS = 5000;
/** …looking this often whether those answers are out. */
const WATCH_POLL_MS = 5;

/** A dsh sessions root on disk, served read-only and kept fresh. */
export class DiskSessionStore implements SessionStoreService {
  readonly root: string;
  private readonly state: StoreState;
  private readonly pool: SummarizePool;
  private readonly publication: Publication;
  private readonly cache: CacheWriter;
  private readonly freshness: Freshness;
  private readonly catchUpTimer: TimerSlot;
  private readonly watchTimer: TimerSlot;

  constructor(options: OpenSessionStoreOptions, tuning: Partial<DiskStoreTuning> = {}) {
    this.root = path.resolve(options.root);
    const state = (this.state = new StoreState(this.root, { ...DEFAULT_TUNING, ...tuning }, options.log ?? (() => undefined)));
    this.pool = new SummarizePool({
      size: state.tuning.indexWorkers,
      inlineBytes: state.tuning.inlineIndexBytes,
      files: state.tuning.files,
      log: state.log,
    });
    this.catchUpTimer = state.timer();
    this.watchTimer = state.timer();
    const cache = (this.cache = new CacheWriter(state, options.cacheDir));
    const publication = (this.publication = new Publication(state, {
      listingChanged: (attached) => cache.scheduleSave(attached, state.tuning.cacheSaveDelayMs),
    }));
    const scanner = new Scanner(state, {
      listingChanged: (attached, rereadKey) => publication.markDirty(attached, rereadKey),
      statusChanged: () => publication.emitStatus(false),
      directoriesChanged: (attached) => freshness.updateWatches(attached),
      rescan: (scope) => freshness.markDirty(scope),
    });
    const freshness: Freshness = (this.freshness = new Freshness(state, {
      scan: (attached, scope) => scanner.scan(attached, scope),
      refresh: (attached, key) => scanner.refresh(attached, key),
      rootStillAttached: (attached) => attachment.rootStillAttached(attached),
      detach: () => attachment.detach(),
      notifyNow: () => publication.notifyNow(),
    }));
    const attachment = new RootAttachment(state, this.pool, {
      loadCache: (attached) => cache.load(attached),
      scan: (attached, scope) => scanner.scan(attached, scope),
      onWatchEvent: (generation, dir, name) => freshness.onWatchEvent(generation, dir, name),
      indexed: (attached) => this.indexed(attached),
      forgetRoot: () => {
        freshness.forgetRoot();
        cache.cancel();
        publication.forgetRoot();
      },
      emitStatus: (force) => publication.emitStatus(force),
      notifyNow: () => publication.notifyNow(),
    });
    state.background(attachment.attach());
  }

  /** The first index of `attached` is built: start keeping it fresh. */
  private indexed(attached: Attached): void {
    const { state, freshness, publication } = this;
    // No burst follows the first index: its workers end now, before the first (largest) answers.
    this.pool.retireIdle();
    // Fewer directories than watches: all are watched at once, before the answers that waited.
    // Deferred, a change between those answers and the watches was seen only by the catch-up
    // rescan, which waits for 500 ms without requests: a client polling faster gives none.
    if (attached.directories.size < state.tuning.maxWatches) this.keepFresh(attached);
    else this.watchOnceAnswered(attached, state.clock.now());
    state.finishIndexing();
    publication.emitStatus(true);
    publication.notifyNow();
    // Not at once: the first answers come now, and writing the cache would compete with them.
    this.cache.scheduleSave(attached, state.tuning.cacheSaveDelayMs);
    // Catch up with what changed while the first index was built, before its directories were
    // watched, in a quiet moment (see the tuning). An answer meanwhile is as fresh as one given
    // during the rescan would be: listings never wait for a rescan.
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
        freshness.markDirty({ kind: 'root' });
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
    this.freshness.updateWatches(attached);
    this.freshness.scheduleSweep(attached);
  }

  // ---- SessionStore -------------------------------------------------------------------------

  /** The cached, sorted listing; rebuilt only when something changed. */
  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    throwIfAborted(signal);
    return this.publication.current().sessions;
  }

  /** A fresh snapshot of one session's surface, read directly from disk. */
  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    const { attached, tuning } = this.state;
    if (attached) {
      const knownFailure = (key: string, identity: FileIdentity) => attached.index.knownFailure(key, identity);
      return readSessionSurface(attached.realRoot, sessionId, tuning.files, signal, knownFailure);
    }
    const root = await tuning.directories.realpath(this.root).catch(() => undefined);
    return readSessionSurface(root, sessionId, tuning.files, signal);
  }

  // ---- service ------------------------------------------------------------------------------

  status(): StoreStatus {
    return this.publication.status();
  }

  onDidChange(listener: () => void): Subscription {
    return this.publication.changes.on(listener);
  }

  onProblem(listener: (problem: StoreProblem) => void): Subscription {
    return this.publication.problems.on(listener);
  }

  onStatus(listener: (status: StoreStatus) => void): Subscription {
    return this.publication.statuses.on(listener);
  }

  whenIndexed(signal?: AbortSignal): Promise<void> {
    return this.state.whenIndexed(signal);
  }

  /**
   * Writes the cache now (the server is shutting down): scans and the sweep stop first, as
   * nothing will answer from what they find, and at 100,000 sessions a catch-up rescan still
   * under way took the main thread from the write until the shutdown's bound cut it short.
   */
  async saveCache(): Promise<void> {
    const { state } = this;
    state.windingDown = true;
    this.catchUpTimer.clear();
    this.watchTimer.clear();
    this.freshness.forgetRoot();
    const attached = state.attached;
    if (attached) await this.cache.saveNow(attached);
  }

  dispose(): void {
    const { state } = this;
    if (state.disposed) return;
    state.disposed = true;
    state.generation++;
    state.attached?.watches.dispose();
    state.attached?.lookups?.dispose();
    state.attached = undefined;
    state.clearTimers();
    state.finishIndexing();
    this.publication.dispose();
    void this.pool.dispose();
  }

  // ---- for tests ----------------------------------------------------------------------------

  /** Live handles (for leak tests): directory watches and pending timers. @forTests */
  handles(): { watches: number; timers: number } {
    const watches = this.state.attached?.watches;
    const pending = this.state.pendingTimers() + (watches?.adding ? 1 : 0);
    return { watches: watches?.count ?? 0, timers: pending };
  }

  /** How many full rescans have completed (tests in fake time wait for one). @forTests */
  completedRescans(): number {
    return this.freshness.completedRescans;
  }

  /** How many times the listing has been built or patched. @forTests */
  listingRebuilds(): number {
    return this.publication.rebuilds;
  }
}
