/**
 * The on-disk `SessionStoreService`: discovery + index + listing, kept fresh by directory
 * watches, a sweep of unwatched sessions and an adaptive full rescan, all strictly read-only.
 *
 * The coordinator of the parts in `disk/`: root attachment (`rootAttachment.ts`), scanning
 * (`scanning.ts`), freshness scheduling (`freshness.ts`), listing publication
 * (`publication.ts`) and cache writing (`cacheWriter.ts`). Calls go down only (attachment and
 * freshness await the scanner's and the cache's results); what a part saw it emits on the one
 * event stream (`disk/events.ts`), and {@link DiskSessionStore.route} alone decides who acts
 * on it. Time and the file system come in through the tuning (`disk/tuning.ts`), so tests can
 * run the store in fake time.
 */
import path from 'node:path';
import type { SessionKey, SessionSurface, StoredSessionSummary } from '../resolver/sessionStore';
import { throwIfAborted } from './concurrency';
import { CacheWriter } from './disk/cacheWriter';
import { StoreEvents, type StoreEvent } from './disk/events';
import { Freshness } from './disk/freshness';
import { Publication } from './disk/publication';
import { RootAttachment } from './disk/rootAttachment';
import { Scanner } from './disk/scanning';
import { StoreState, type Attached } from './disk/state';
import { DEFAULT_TUNING, type DiskStoreTuning } from './disk/tuning';
import { SideFiles } from './disk/sideFiles';
import type { EngineFormat } from './formats/engineFormat';
import { dshFormatFor } from './formats/registry';
import type { OpenSessionStoreOptions, SessionStoreService, StoreProblem, StoreStatus, Subscription } from './service';
import { SummarizePool } from './summarize/pool';
import type { FileIdentity } from './transcriptFiles';

export { cacheWritesSettled } from './summaryCache';
export type { Clock } from './disk/clock';
export { DEFAULT_TUNING, INLINE_INDEX_BYTES, type DiskStoreTuning } from './disk/tuning';

/**
 * The id of the session a transcript holds: its header's; while it has none, its session folder's
 * when a session folder holds one session (dsh), else none.
 */
function sessionIdOf(attached: Attached, format: EngineFormat, key: string): string | undefined {
  const entry = attached.index.get(key);
  return entry?.summary?.header?.id ?? (format.layout.sessionFileNames === undefined ? undefined : entry?.location.sessionDir);
}

/**
 * A sessions root on disk, served read-only and kept fresh: dsh's sessions root in dsh's format,
 * or (given `format`) another agent's home in that agent's (`engine/homeStore.ts`).
 */
export class DiskSessionStore implements SessionStoreService {
  readonly root: string;
  private readonly state: StoreState;
  private readonly pool: SummarizePool;
  private readonly format: EngineFormat;
  private readonly publication: Publication;
  private readonly cache: CacheWriter;
  private readonly scanner: Scanner;
  private readonly freshness: Freshness;
  private readonly attachment: RootAttachment;
  private readonly sides: SideFiles | undefined;

  constructor(options: OpenSessionStoreOptions, tuning: Partial<DiskStoreTuning> = {}, format?: EngineFormat) {
    this.root = path.resolve(options.root);
    const state = (this.state = new StoreState(this.root, { ...DEFAULT_TUNING, ...tuning }, options.log ?? (() => undefined)));
    this.pool = new SummarizePool({
      size: state.tuning.indexWorkers,
      inlineBytes: state.tuning.inlineIndexBytes,
      files: state.tuning.files,
      log: state.log,
    });
    format = this.format = format ?? dshFormatFor(this.pool, state.tuning.files);
    const events = new StoreEvents();
    const sides = (this.sides = format.sideFiles === undefined ? undefined : new SideFiles(state, events, format.layout, format.sideFiles));
    this.cache = new CacheWriter(state, options.cacheDir, format);
    this.publication = new Publication(state, format.listing, () => sides?.facts());
    const scanner = (this.scanner = new Scanner(state, events, this.cache, format, sides));
    this.freshness = new Freshness(state, events, scanner, format.layout);
    const attachment = (this.attachment = new RootAttachment(state, events, scanner, this.cache));
    events.consume((event) => this.route(event));
    state.background(attachment.attach());
  }

  /** The one consumer of the parts' events: which part acts on each, in what order. */
  private route(event: StoreEvent): void {
    const { freshness, publication, cache } = this;
    switch (event.type) {
      case 'listingChanged':
        // The persistent cache may need rewriting, and listeners hearing of it.
        if (event.removed) cache.entriesRemoved(event.attached);
        if (event.rereadKey !== undefined) cache.reread(event.attached, event.rereadKey);
        cache.scheduleSave(event.attached, this.state.tuning.cacheSaveDelayMs);
        return publication.markDirty(event.rereadKey, event.rereadKey === undefined ? undefined : sessionIdOf(event.attached, this.format, event.rereadKey));
      case 'statusChanged':
        return publication.emitStatus(event.force);
      case 'directoriesChanged':
        return freshness.updateWatches(event.attached);
      case 'scopeStale':
        return freshness.markDirty(event.scope);
      case 'watched':
        // A side file (the format's title index, project registry or markers) is read again by its part.
        if (this.sides?.concerns(event.dir, event.name)) return this.state.background(this.sides.watched(event.attached, event.dir, event.name!));
        return freshness.onWatchEvent(event.attached, event.dir, event.name);
      case 'rootChanged':
        freshness.setRoot(event.attached);
        return publication.setRoot(event.attached, event.problem);
      case 'indexed':
        return this.indexed(event.attached);
      case 'settled':
        return publication.notifyNow();
      case 'rootReplaced':
        return this.attachment.detach();
      case 'detached':
        freshness.forgetRoot();
        cache.cancel();
        return publication.forgetRoot();
      default:
        return event satisfies never;
    }
  }

  /** The first index of `attached` is built: start keeping it fresh. */
  private indexed(attached: Attached): void {
    const { state, freshness, publication } = this;
    this.cache.firstIndexBuilt(attached);
    // No burst follows the first index: its workers end now, before the first (largest) answers.
    this.pool.retireIdle();
    freshness.watchFirstIndex(attached);
    state.finishIndexing();
    publication.emitStatus(true);
    publication.notifyNow();
    // Not at once (by default): the first answers come now, and writing the cache would compete with them.
    this.cache.scheduleSave(attached, state.tuning.firstCacheSaveDelayMs ?? state.tuning.cacheSaveDelayMs);
    freshness.catchUpWithFirstIndex(attached);
  }

  // ---- SessionStore -------------------------------------------------------------------------

  /** The cached, sorted listing; rebuilt only when something changed. */
  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    throwIfAborted(signal);
    return this.publication.current().sessions;
  }

  /** A fresh snapshot of one session's surface, read directly from disk. */
  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    const { tuning } = this.state;
    const attached = this.attachment.current;
    if (attached) {
      const knownFailure = (key: string, identity: FileIdentity) => attached.index.knownFailure(key, identity);
      return this.format.readSurface(attached.realRoot, sessionId, signal, knownFailure);
    }
    const root = await tuning.directories.realpath(this.root).catch(() => undefined);
    return this.format.readSurface(root, sessionId, signal);
  }

  /**
   * Looks now at what the watches reported and is still waiting for its quiet time, and with
   * `wholeRoot` at the whole root; settles once that is in the index (a read of a session not
   * listed asks, see `engine/homeStore.ts`).
   */
  async lookAgain(wholeRoot: boolean): Promise<void> {
    const attached = this.attachment.current;
    if (attached === undefined || !this.state.isCurrent(attached)) return;
    await this.freshness.flushNow();
    if (wholeRoot) await this.scanner.scan(attached, { kind: 'root' });
  }

  // ---- service ------------------------------------------------------------------------------

  status(): StoreStatus {
    return this.publication.status();
  }

  onDidChange(listener: () => void): Subscription {
    return this.publication.changes.on(listener);
  }

  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription {
    return this.publication.contents.on(listener);
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
    this.freshness.forgetRoot();
    const attached = this.attachment.current;
    if (attached) await this.cache.saveNow(attached);
  }

  dispose(): void {
    const { state } = this;
    if (state.disposed) return;
    state.disposed = true;
    this.attachment.dispose();
    state.clearTimers();
    state.finishIndexing();
    this.publication.dispose();
    void this.pool.dispose();
  }

  // ---- for tests ----------------------------------------------------------------------------

  /**
   * What tests observe of the store: its live handles (for leak tests: directory watches and
   * pending timers), how many full rescans have completed (tests in fake time wait for one), and
   * how many times the listing has been built or patched. @forTests
   */
  probe(): { handles: { watches: number; timers: number }; completedRescans: number; listingRebuilds: number } {
    return { handles: this.handles(), completedRescans: this.freshness.completedRescans, listingRebuilds: this.publication.rebuilds };
  }

  /** The store's live handles: its directory watches and pending timers (a watch being added counts as a timer). */
  handles(): { watches: number; timers: number } {
    const watches = this.attachment.current?.watches;
    return { watches: watches?.count ?? 0, timers: this.state.pendingTimers() + (watches?.adding ? 1 : 0) };
  }
}
