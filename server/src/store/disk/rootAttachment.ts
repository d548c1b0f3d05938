/**
 * Root attachment: resolves the sessions root, builds the first index of it, and notices when
 * it goes or is replaced (then everything of it is dropped and the root is polled for).
 */
import type { SessionsRootProblem } from '@dsh-session-ls/shared';
import { DirectoryWatches } from '../directoryWatches';
import type { DiscoveryScope } from '../discovery';
import { ScopedKeys } from '../scopedKeys';
import type { SummarizePool } from '../summarize/pool';
import { TranscriptIndex } from '../transcriptIndex';
import type { TimerSlot } from './clock';
import type { Attached, StoreState } from './state';

/** Why a failed look at the root failed: nothing there, something that is not a directory, or no access. */
function rootProblemOf(error: unknown): SessionsRootProblem {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return 'missing';
  if (code === 'ENOTDIR') return 'not-a-directory';
  return 'inaccessible';
}

/** What attachment needs from the rest of the store. */
export interface AttachmentDeps {
  loadCache(attached: Attached): Promise<void>;
  scan(attached: Attached, scope: DiscoveryScope): Promise<void>;
  onWatchEvent(generation: number, dir: string, name: string | undefined): void;
  /** The first index is built: watches, sweep, cache saving and a catch-up rescan start. */
  indexed(attached: Attached): void;
  /** The root went: everything scheduled for it stops. */
  forgetRoot(): void;
  emitStatus(force: boolean): void;
  notifyNow(): void;
}

export class RootAttachment {
  private readonly pollTimer: TimerSlot;

  constructor(
    private readonly state: StoreState,
    private readonly pool: SummarizePool,
    private readonly deps: AttachmentDeps,
  ) {
    this.pollTimer = state.timer();
  }

  /** Resolves the root once (realpath) and builds the first index; a missing root is polled for. */
  async attach(): Promise<void> {
    const { state, deps } = this;
    const { tuning } = state;
    const generation = ++state.generation;
    let realRoot: string;
    let rootIdentity: Attached['rootIdentity'];
    try {
      realRoot = await tuning.directories.realpath(state.root);
      const stats = await tuning.directories.stat(realRoot);
      if (!stats.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      rootIdentity = { dev: stats.dev, ino: stats.ino };
    } catch (error) {
      if (generation === state.generation && !state.disposed) {
        this.noteRootProblem(rootProblemOf(error), error);
        this.waitForRoot();
      }
      return;
    }
    if (generation !== state.generation || state.disposed) return;
    const attached: Attached = {
      generation,
      realRoot,
      rootIdentity,
      index: new TranscriptIndex(realRoot, tuning.files, tuning.concurrency, this.pool),
      watches: new DirectoryWatches(
        realRoot,
        (dir, name) => deps.onWatchEvent(generation, dir, name),
        tuning.maxWatches,
        state.log,
        tuning.directories.watch,
      ),
      discoveryProblems: new Map(),
      directories: new ScopedKeys(),
      adopted: 0,
      cacheStale: false,
    };
    state.attached = attached;
    state.rootProblem = undefined;
    state.indexing = true;
    // Watch the root before the first scan, so nothing created meanwhile goes unseen.
    attached.watches.update([]);
    deps.emitStatus(true);
    try {
      // The cache is read while the root is listed (one is CPU, the other mostly waiting).
      attached.cacheLoading = deps.loadCache(attached).catch((error: unknown) => {
        state.log(`cannot read the index cache: ${error instanceof Error ? error.message : String(error)}`);
      });
      await deps.scan(attached, { kind: 'root' });
    } catch (error) {
      // Whatever failed, the store answers with what it has; the rescan tries again.
      state.log(`indexing ${realRoot} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    attached.lookups?.dispose();
    attached.lookups = undefined;
    if (!state.isCurrent(attached)) return;
    // Cached sessions that are gone (or no cache at all) make the file worth rewriting.
    if (attached.adopted !== (attached.cache?.size ?? -1)) attached.cacheStale = true;
    attached.cache = attached.omitted = undefined;
    deps.indexed(attached);
  }

  /** No root (yet, or any more): an empty, indexed store that looks for the root periodically. */
  private waitForRoot(): void {
    const { state, deps } = this;
    state.finishIndexing();
    deps.emitStatus(true);
    deps.notifyNow();
    const poll = () => {
      state.background(
        state.tuning.directories.stat(state.root).then(
          (stats) => {
            if (state.disposed || state.attached) return;
            if (stats.isDirectory()) return this.attach();
            this.reportRootProblem('not-a-directory');
            this.pollTimer.set(poll, state.tuning.rootPollMs);
          },
          (error: unknown) => {
            if (state.disposed || state.attached) return;
            this.reportRootProblem(rootProblemOf(error), error);
            this.pollTimer.set(poll, state.tuning.rootPollMs);
          },
        ),
      );
    };
    this.pollTimer.set(poll, state.tuning.rootPollMs);
  }

  /**
   * Remember why the root is not read (the caller reports the status). Only an inaccessible root is
   * logged, for its error: the status names the other problems, and users of the store report them.
   */
  private noteRootProblem(problem: SessionsRootProblem, error?: unknown): boolean {
    const { state } = this;
    if (problem === state.rootProblem) return false;
    state.rootProblem = problem;
    if (problem === 'inaccessible') state.log(`cannot open the sessions root ${state.root}: ${error instanceof Error ? error.message : String(error)}`);
    return true;
  }

  /** A changed root problem found while polling: status listeners hear of it at once. */
  private reportRootProblem(problem: SessionsRootProblem, error?: unknown): void {
    if (this.noteRootProblem(problem, error)) this.deps.emitStatus(true);
  }

  /** The root vanished or was replaced: drop everything and look for it again. */
  detach(): void {
    const { state } = this;
    const attached = state.attached;
    if (!attached) return;
    state.generation++;
    attached.watches.dispose();
    attached.lookups?.dispose();
    state.attached = undefined;
    this.deps.forgetRoot();
    state.log(`sessions root ${state.root} is gone; waiting for it to appear`);
    this.waitForRoot();
  }

  /** Whether the attached root is still the directory that was attached (not gone, not replaced). */
  async rootStillAttached(attached: Attached): Promise<boolean> {
    try {
      const stats = await this.state.tuning.directories.stat(attached.realRoot);
      return stats.isDirectory() && stats.dev === attached.rootIdentity.dev && stats.ino === attached.rootIdentity.ino;
    } catch {
      return false;
    }
  }
}
