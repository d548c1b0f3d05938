/**
 * What the parts of the disk store share: the configuration (root, tuning, clock, log), the
 * indexing flag, the timers (for dispose and leak checks) and whether the store is disposed.
 * Which root is attached, and why none is, is root attachment's own (`rootAttachment.ts`): the
 * others hear of it on the event stream.
 */
import type { DirectoryWatches } from '../directoryWatches';
import type { DiscoveryProblem } from '../discovery';
import type { ScopedKeys } from '../scopedKeys';
import type { TranscriptIndex } from '../transcriptIndex';
import { storeWorkSlices } from '../concurrency';
import { TimerSlot, type Clock } from './clock';
import type { DiskStoreTuning } from './tuning';

/** What the parts other than the scanner read of an attached root's index. */
export type IndexView = Pick<TranscriptIndex, 'all' | 'get' | 'keys' | 'failedKeys' | 'size' | 'summarized' | 'savedState' | 'knownFailure'>;

/** The known directories of an attached root, as the parts other than the scanner read them. */
export type DirectoriesView = Iterable<string> & Pick<ScopedKeys, 'size'>;

/**
 * What the scanner alone writes of an attached root (`scanning.ts`, through `reconcile.ts`): its
 * index, its known directories (to watch) and its discovery problems.
 */
export interface RootContents {
  readonly index: TranscriptIndex;
  readonly directories: ScopedKeys;
  readonly discoveryProblems: Map<string, DiscoveryProblem>;
}

/** One attached (existing, resolved) root. */
export interface Attached {
  /** Set once, by root attachment, when the root is dropped (or the store disposed): its work stops. */
  retired: boolean;
  readonly realRoot: string;
  readonly rootIdentity: { dev: number; ino: number };
  readonly watches: DirectoryWatches;
  /** Read-only views of the scanner's {@link RootContents}. */
  readonly index: IndexView;
  readonly directories: DirectoriesView;
  readonly discoveryProblems: ReadonlyMap<string, DiscoveryProblem>;
}

/** The state every part of one disk store reads and the facade disposes. */
export class StoreState {
  disposed = false;
  /** The server is shutting down: scans stop at their next transcript, the last cache write goes first. */
  windingDown = false;
  /**
   * While the first index of the current root is built (requests wait for it), the process's store
   * slices do not wait for the foreground (`TimeSlices.urgent`).
   */
  private urgentIndexing: (() => void) | undefined = storeWorkSlices.urgent();

  readonly clock: Clock;
  private readonly timers: TimerSlot[] = [];
  private readonly indexedWaiters = new Set<() => void>();

  constructor(
    /** The sessions root as configured (resolved, not real). */
    readonly root: string,
    readonly tuning: DiskStoreTuning,
    readonly log: (message: string) => void,
  ) {
    this.clock = tuning.clock;
  }

  /** True until the first complete index of the current root (or the finding that there is none). */
  get indexing(): boolean {
    return this.urgentIndexing !== undefined;
  }

  set indexing(value: boolean) {
    if (value) this.urgentIndexing ??= storeWorkSlices.urgent();
    else {
      this.urgentIndexing?.();
      this.urgentIndexing = undefined;
    }
  }

  /** Whether `attached` is still the store's root (not detached, replaced or disposed). */
  isCurrent(attached: Attached): boolean {
    return !this.disposed && !attached.retired;
  }

  /** Runs work nobody awaits; a failure is logged, never thrown. */
  background(work: Promise<unknown>): void {
    work.catch((error) => this.log(`session store: ${error instanceof Error ? error.stack ?? error.message : String(error)}`));
  }

  /** A new timer of the store (counted by {@link pendingTimers}, cleared by {@link clearTimers}). */
  timer(): TimerSlot {
    const slot = new TimerSlot(this.clock);
    this.timers.push(slot);
    return slot;
  }

  /**
   * How much longer background work that began waiting at `since` should wait for a quiet moment
   * (no request in progress or message being written for `backgroundQuietMs`); 0 when it is quiet,
   * or when it has waited `backgroundMaxWaitMs`.
   */
  quietWaitMs(since: number): number {
    const { foreground, backgroundQuietMs, backgroundMaxWaitMs } = this.tuning;
    const quiet = foreground.quietForMs();
    const left = since + backgroundMaxWaitMs - this.clock.now();
    return quiet < backgroundQuietMs && left > 0 ? Math.min(backgroundQuietMs - quiet, left) : 0;
  }

  pendingTimers(): number {
    return this.timers.filter((slot) => slot.active).length;
  }

  clearTimers(): void {
    for (const slot of this.timers) slot.clear();
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

  finishIndexing(): void {
    this.indexing = false;
    for (const done of [...this.indexedWaiters]) done();
    this.indexedWaiters.clear();
  }
}
