import { SESSION_STATUS_NOTIFICATION, describeSessionsRootProblem, type SessionStoreStatus, type SessionsRootProblem } from '@dsh-session-ls/shared';
import { MessageType, ShowMessageNotification, type Connection, type WorkDoneProgressServerReporter } from 'vscode-languageserver/node';
import type { SessionStoreService, Subscription } from '../store/service';
import { indexingProgress } from './firstIndex';

/**
 * What the client is told about the current store: `dshSession/status` as it changes, a warning for a
 * root that cannot be read, work-done progress while it is first indexed; and, in the log, the files
 * it skipped. Nothing is sent before `initialized` (a store may open during `initialize`).
 */
export class StoreStatusReports {
  private initialized = false;
  private endIndexingProgress: (() => void) | undefined;
  private readonly storesWithProgress = new WeakSet<SessionStoreService>();
  private statusSubscription: Subscription | undefined;
  private reportedStore: SessionStoreService | undefined;
  /** The root problem last shown to the user (see warnAboutRoot). */
  private warnedRoot: string | undefined;

  constructor(
    private readonly connection: Connection,
    /** The store currently open: only its status is sent. */
    private readonly currentStore: () => SessionStoreService | undefined,
    private readonly log: (message: string) => void,
  ) {}

  /** A store was opened (replacing the one before, if any): follow its status and its problems. */
  watch(store: SessionStoreService): void {
    this.endIndexingProgress?.();
    this.endIndexingProgress = undefined;
    this.log(`sessions root: ${store.root}`);
    store.onProblem((problem) => this.logStore(`dsh session store: skipped ${problem.path}: ${problem.reason}`));
    // The store throttles onStatus; a replaced store must not report over its successor.
    this.statusSubscription?.dispose();
    this.statusSubscription = store.onStatus(() => this.sendStatus(store));
    if (this.initialized) {
      this.sendStatus(store);
      void this.showIndexingProgress(store);
    }
  }

  /** The client is initialized: from now on, statuses and progress are sent. */
  clientInitialized(): void {
    this.initialized = true;
  }

  /** Report the current store, if any, with progress while it is first indexed (once the settings are known). */
  reportCurrentStore(): void {
    const store = this.currentStore();
    if (store === undefined) return;
    // A store opened during `initialize` (its root fixed by initializationOptions) is reported now.
    if (this.reportedStore !== store) this.sendStatus(store);
    void this.showIndexingProgress(store);
  }

  /** Stop following the store (shutdown). */
  dispose(): void {
    this.endIndexingProgress?.();
    this.statusSubscription?.dispose();
  }

  private logStore(message: string): void {
    this.log(message);
    this.connection.console.warn(message);
  }

  /**
   * A root that is there but cannot be read (not a directory, no access) is worth a warning, once per root
   * and problem until it is fixed; a missing root is not (it is picked up when it appears).
   */
  private warnAboutRoot(root: string, problem: SessionsRootProblem | undefined): void {
    const key = problem === undefined || problem === 'missing' ? undefined : `${problem}\0${root}`;
    if (key !== undefined && key !== this.warnedRoot) {
      const message = describeSessionsRootProblem(root, problem!);
      this.log(message);
      try {
        this.connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Warning, message }).catch(() => undefined);
      } catch {
        // The connection is closing: nobody is left to tell.
      }
    }
    this.warnedRoot = key;
  }

  /** `dshSession/status` for the current store; nothing before `initialized`. */
  private sendStatus(store: SessionStoreService): void {
    if (!this.initialized || store !== this.currentStore()) return;
    const { indexed, indexing, discovered, rootProblem } = store.status();
    const status: SessionStoreStatus = { root: store.root, indexed, indexing, discovered, ...(rootProblem === undefined ? {} : { rootProblem }) };
    this.reportedStore = store;
    this.warnAboutRoot(store.root, rootProblem);
    try {
      this.connection.sendNotification(SESSION_STATUS_NOTIFICATION, status).catch(() => undefined);
    } catch {
      // The connection is closing: nobody is left to tell.
    }
  }

  /** Work-done progress while a store is first indexed (a no-op for clients without progress support). */
  private async showIndexingProgress(store: SessionStoreService): Promise<void> {
    if (this.storesWithProgress.has(store) || !store.status().indexing) return;
    this.storesWithProgress.add(store);
    const stop = new AbortController();
    this.endIndexingProgress = () => stop.abort();
    let progress: WorkDoneProgressServerReporter;
    try {
      progress = await this.connection.window.createWorkDoneProgress();
    } catch (error) {
      this.log(`no indexing progress: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    const describe = (): [number | undefined, string] => {
      const { percentage, message } = indexingProgress(store.status());
      return [percentage, message];
    };
    const [percentage, message] = describe();
    progress.begin('Indexing dsh sessions', percentage, message, false);
    const subscription = store.onStatus(() => {
      const [nextPercentage, nextMessage] = describe();
      if (nextPercentage === undefined) progress.report(nextMessage);
      else progress.report(nextPercentage, nextMessage);
    });
    try {
      await store.whenIndexed(stop.signal);
    } catch {
      // The store was replaced or closed before it finished.
    } finally {
      subscription.dispose();
      progress.done();
    }
  }
}
