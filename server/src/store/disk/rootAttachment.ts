/**
 * Root attachment: resolves the sessions root, builds the first index of it, and notices when
 * it goes or is replaced (then everything of it is dropped and the root is polled for). It
 * asks the cache and the scanner for the first index and reports on the event stream. Which root
 * is attached, why none is, and the attempts to attach are its own: the others hear of the root
 * (`rootChanged`) and retire work of a dropped one (`Attached.retired`, set here only).
 */
import type { SessionsRootProblem } from '@dsh-session-ls/shared';
import { DirectoryWatches } from '../directoryWatches';
import type { CacheWriter } from './cacheWriter';
import type { TimerSlot } from './clock';
import type { StoreEvents } from './events';
import type { Scanner } from './scanning';
import type { Attached, StoreState } from './state';

/** Why a failed look at the root failed: nothing there, something that is not a directory, or no access. */
function rootProblemOf(error: unknown): SessionsRootProblem {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return 'missing';
  if (code === 'ENOTDIR') return 'not-a-directory';
  return 'inaccessible';
}

export class RootAttachment {
  private readonly pollTimer: TimerSlot;
  /** The attached root, if any. */
  private attached: Attached | undefined;
  /** Why the root is not read, while it is not (see StoreStatus.rootProblem). */
  private rootProblem: SessionsRootProblem | undefined;
  /** Bumped by every attempt to attach and every drop: an attempt that is no longer the last one stops. */
  private attempts = 0;

  constructor(
    private readonly state: StoreState,
    private readonly events: StoreEvents,
    private readonly scanner: Pick<Scanner, 'open' | 'scan'>,
    private readonly cache: Pick<CacheWriter, 'load'>,
  ) {
    this.pollTimer = state.timer();
  }

  /** The attached root, if any. */
  get current(): Attached | undefined {
    return this.attached;
  }

  /** Resolves the root once (realpath) and builds the first index; a missing root is polled for. */
  async attach(): Promise<void> {
    const { state, events } = this;
    const { tuning } = state;
    const attempt = ++this.attempts;
    let realRoot: string;
    let rootIdentity: Attached['rootIdentity'];
    try {
      realRoot = await tuning.directories.realpath(state.root);
      const stats = await tuning.directories.stat(realRoot);
      if (!stats.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      rootIdentity = { dev: stats.dev, ino: stats.ino };
    } catch (error) {
      if (attempt === this.attempts && !state.disposed) {
        this.noteRootProblem(rootProblemOf(error), error);
        this.waitForRoot();
      }
      return;
    }
    if (attempt !== this.attempts || state.disposed) return;
    const attached: Attached = this.scanner.open({
      retired: false,
      realRoot,
      rootIdentity,
      watches: new DirectoryWatches(
        realRoot,
        (dir, name) => events.emit({ type: 'watched', attached, dir, name }),
        tuning.maxWatches,
        state.log,
        tuning.directories.watch,
      ),
    });
    this.attached = attached;
    this.rootProblem = undefined;
    events.emit({ type: 'rootChanged', attached, problem: undefined });
    state.indexing = true;
    // Watch the root before the first scan, so nothing created meanwhile goes unseen.
    attached.watches.update([]);
    events.emit({ type: 'statusChanged', force: true });
    try {
      // The cache is read while the root is listed (one is CPU, the other mostly waiting).
      this.cache.load(attached);
      await this.scanner.scan(attached, { kind: 'root' });
    } catch (error) {
      // Whatever failed, the store answers with what it has; the rescan tries again.
      state.log(`indexing ${realRoot} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!state.isCurrent(attached)) return;
    events.emit({ type: 'indexed', attached });
  }

  /** No root (yet, or any more): an empty, indexed store that looks for the root periodically. */
  private waitForRoot(): void {
    const { state, events } = this;
    state.finishIndexing();
    events.emit({ type: 'statusChanged', force: true });
    events.emit({ type: 'settled' });
    const poll = () => {
      state.background(
        state.tuning.directories.stat(state.root).then(
          (stats) => {
            if (state.disposed || this.attached) return;
            if (stats.isDirectory()) return this.attach();
            this.reportRootProblem('not-a-directory');
            this.pollTimer.set(poll, state.tuning.rootPollMs);
          },
          (error: unknown) => {
            if (state.disposed || this.attached) return;
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
    if (problem === this.rootProblem) return false;
    this.rootProblem = problem;
    this.events.emit({ type: 'rootChanged', attached: undefined, problem });
    if (problem === 'inaccessible') state.log(`cannot open the sessions root ${state.root}: ${error instanceof Error ? error.message : String(error)}`);
    return true;
  }

  /** A changed root problem found while polling: status listeners hear of it at once. */
  private reportRootProblem(problem: SessionsRootProblem, error?: unknown): void {
    if (this.noteRootProblem(problem, error)) this.events.emit({ type: 'statusChanged', force: true });
  }

  /** The root vanished or was replaced: drop everything and look for it again. */
  detach(): void {
    const { state } = this;
    if (!this.drop()) return;
    this.events.emit({ type: 'rootChanged', attached: undefined, problem: this.rootProblem });
    this.events.emit({ type: 'detached' });
    state.log(`sessions root ${state.root} is gone; waiting for it to appear`);
    this.waitForRoot();
  }

  /** The store is disposed: the attached root (if any) is dropped, and no attempt goes on. */
  dispose(): void {
    this.attempts++;
    if (this.drop()) this.events.emit({ type: 'rootChanged', attached: undefined, problem: this.rootProblem });
    this.pollTimer.clear();
  }

  /** Retires the attached root and its watches; false when none was attached. */
  private drop(): boolean {
    const attached = this.attached;
    if (!attached) return false;
    this.attempts++;
    attached.retired = true;
    attached.watches.dispose();
    this.attached = undefined;
    return true;
  }
}
