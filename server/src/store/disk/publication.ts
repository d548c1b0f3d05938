/**
 * Listing publication: the cached, sorted listing (rebuilt or patched only when stale), the
 * throttled `onDidChange` / `onDidChangeContent` / `onStatus` notifications and the
 * once-per-problem reports.
 */
import type { SessionsRootProblem } from '@dsh-session-ls/shared';
import type { SessionKey, StoredSessionSummary } from '../../resolver/sessionStore';
import { toStoreProblem, type DiscoveryProblem } from '../discovery';
import { Emitter } from '../emitter';
import type { ListingRule, SideFacts } from '../formats/adapter';
import type { Listing } from '../listing';
import type { StoreProblem, StoreStatus } from '../service';
import type { IndexedTranscript } from '../transcriptIndex';
import type { TimerSlot } from './clock';
import type { Attached, IndexView, StoreState } from './state';

/** While indexing, `onDidChange` is spaced this many times further apart than usual. */
const INDEXING_NOTIFY_SPACING = 5;

/**
 * While indexing, `onDidChange` is also spaced at least this many times the last listing
 * rebuild's duration apart, so rebuilding a large listing takes little of the indexing time.
 */
const INDEXING_REBUILD_COST_FACTOR = 100;

/** Beyond this many re-read transcripts, the listing is rebuilt rather than patched. */
const MAX_PATCHED_TRANSCRIPTS = 256;

/** Beyond this many sessions re-read between notifications, listeners hear of a change of the whole listing instead. */
const MAX_CONTENT_CHANGES = 1024;

function sameSessions(a: readonly StoredSessionSummary[], b: readonly StoredSessionSummary[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.id !== y.id || x.createdAt !== y.createdAt || x.cwd !== y.cwd || x.title !== y.title) return false;
  }
  return true;
}

/** The indexed transcripts behind some keys (keys no longer indexed are skipped). */
function* transcriptsOf(index: IndexView, keys: Iterable<string>): Generator<IndexedTranscript> {
  for (const key of keys) {
    const entry = index.get(key);
    if (entry) yield entry;
  }
}

export class Publication {
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
  /** Listings built or patched so far (tests). */
  rebuilds = 0;
  private notifiedVersion = 0;
  private readonly reported = new Set<string>();
  /** The ids of the sessions re-read since the last notification (`onDidChangeContent`). */
  private readonly rereadIds = new Set<string>();
  /** More sessions were re-read than {@link MAX_CONTENT_CHANGES}: the next notification is a whole change. */
  private rereadOverflow = false;
  private readonly notifyTimer: TimerSlot;
  private lastNotifyAt = 0;
  private readonly statusTimer: TimerSlot;
  private lastStatusAt = 0;
  /** The attached root and why none is, as root attachment last reported them. */
  private attached: Attached | undefined;
  private rootProblem: SessionsRootProblem | undefined;

  readonly changes: Emitter<void>;
  readonly contents: Emitter<readonly SessionKey[]>;
  readonly problems: Emitter<StoreProblem>;
  readonly statuses: Emitter<StoreStatus>;

  /** `rule`: how the format's indexed transcripts (and `side`, what its side files say) become the listing. */
  constructor(
    private readonly state: StoreState,
    private readonly rule: ListingRule<IndexedTranscript, Listing>,
    private readonly side: () => SideFacts | undefined = () => undefined,
  ) {
    this.notifyTimer = state.timer();
    this.statusTimer = state.timer();
    const onListenerError = (error: unknown) => state.log(`session store listener failed: ${String(error)}`);
    this.changes = new Emitter(onListenerError);
    this.contents = new Emitter(onListenerError);
    this.problems = new Emitter(onListenerError);
    this.statuses = new Emitter(onListenerError);
  }

  /** The root attached now (undefined: none), or why none is. */
  setRoot(attached: Attached | undefined, problem: SessionsRootProblem | undefined): void {
    this.attached = attached;
    this.rootProblem = problem;
  }

  status(): StoreStatus {
    const { attached, rootProblem } = this;
    const index = attached?.index;
    return {
      indexing: this.state.indexing,
      indexed: index?.summarized ?? 0,
      discovered: index?.size ?? 0,
      rootExists: attached !== undefined,
      ...(attached === undefined && rootProblem !== undefined ? { rootProblem } : {}),
    };
  }

  /**
   * The listing, rebuilt if stale. While the first index is built it is stale after every
   * read, so a request rebuilds it only as often as notifications do: otherwise each
   * completion during a 100k index would pay for a full rebuild.
   */
  current(): Listing {
    if (this.listingDirty && !(this.state.indexing && this.state.clock.now() - this.listingRebuiltAt < this.indexingSpacing())) {
      this.rebuild();
    }
    return this.listing;
  }

  /** How far apart listing rebuilds and change notifications are spaced while indexing. */
  private indexingSpacing(): number {
    return Math.max(INDEXING_NOTIFY_SPACING * this.state.tuning.notifyThrottleMs, INDEXING_REBUILD_COST_FACTOR * this.listingRebuildMs);
  }

  private rebuild(): void {
    const { clock } = this.state;
    const { attached } = this;
    this.listingDirty = false;
    this.rebuilds++;
    const rereadKeys = this.rereadKeys;
    this.rereadKeys = undefined;
    const started = clock.monotonic();
    const next =
      (attached && rereadKeys && this.rule.patch?.(this.listing, transcriptsOf(attached.index, rereadKeys))) ??
      (attached ? this.rule.build(attached.index.all(), this.side()) : { sessions: Object.freeze([]), problems: [] });
    this.listingRebuildMs = clock.monotonic() - started;
    this.listingRebuiltAt = clock.now();
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
      this.state.log(`skipping ${reported.path}: ${reported.reason}`);
      this.problems.fire(reported);
    }
  }

  /**
   * The listing is stale: because `rereadKey` (the transcript of session `sessionId`) was re-read,
   * or (no key) for any other reason. Re-reads during the first index are no content change:
   * listeners hear of that index as a whole when it ends.
   */
  markDirty(rereadKey?: string, sessionId?: string): void {
    if (sessionId !== undefined && !this.state.indexing && !this.rereadOverflow) {
      this.rereadIds.add(sessionId);
      if (this.rereadIds.size > MAX_CONTENT_CHANGES) {
        this.rereadOverflow = true;
        this.rereadIds.clear();
      }
    }
    if (rereadKey === undefined) this.rereadKeys = undefined;
    else if (!this.listingDirty) this.rereadKeys = new Set([rereadKey]);
    else if (this.rereadKeys && this.rereadKeys.size < MAX_PATCHED_TRANSCRIPTS) this.rereadKeys.add(rereadKey);
    else this.rereadKeys = undefined;
    this.listingDirty = true;
    if (this.state.disposed || this.notifyTimer.active) return;
    // While indexing, the listing changes constantly; listeners hear about it less often.
    const spacing = this.state.indexing ? this.indexingSpacing() : this.state.tuning.notifyThrottleMs;
    const wait = Math.max(0, this.lastNotifyAt + spacing - this.state.clock.now());
    this.notifyTimer.set(() => this.notifyNow(), wait);
  }

  /** The root went: the listing must be rebuilt (empty) from scratch. */
  forgetRoot(): void {
    this.rereadKeys = undefined;
    this.listingDirty = true;
  }

  /**
   * Rebuilds the listing if needed and tells listeners when its answer changed. While indexing,
   * listeners are told that it changed and the listing is rebuilt only when one of them reads it
   * ({@link current}): a restart adopting 100,000 cached summaries rebuilt it mid-index for
   * nobody, before the answers that waited for the index.
   */
  notifyNow(): void {
    if (this.state.disposed) return;
    this.lastNotifyAt = this.state.clock.now();
    // Once indexed, current() leaves nothing dirty: a change is a new version.
    if (!this.state.indexing) this.current();
    this.notifyContent();
    const overflow = this.rereadOverflow;
    this.rereadOverflow = false;
    if (!overflow && !this.listingDirty && this.listingVersion === this.notifiedVersion) return;
    this.notifiedVersion = this.listingVersion;
    this.changes.fire();
  }

  /** Tells content listeners which sessions were re-read since they were last told. */
  private notifyContent(): void {
    if (this.rereadIds.size === 0) return;
    const sessions = [...this.rereadIds].map((id): SessionKey => ({ id }));
    this.rereadIds.clear();
    this.contents.fire(sessions);
  }

  /** Tells status listeners (at once when forced, else throttled). */
  emitStatus(force: boolean): void {
    if (this.state.disposed) return;
    const now = this.state.clock.now();
    const wait = this.lastStatusAt + this.state.tuning.notifyThrottleMs - now;
    if (force || wait <= 0) {
      this.statusTimer.clear();
      this.lastStatusAt = now;
      this.statuses.fire(this.status());
    } else if (!this.statusTimer.active) {
      this.statusTimer.set(() => this.emitStatus(true), wait);
    }
  }

  dispose(): void {
    this.changes.clear();
    this.contents.clear();
    this.problems.clear();
    this.statuses.clear();
  }
}
