import { InMemorySessionStore, type InMemorySession } from './inMemorySessionStore';
import type { SessionKey } from '../resolver/sessionStore';
import type { SessionStoreService, StoreProblem, StoreStatus, Subscription } from '../store/service';

type Listener<T> = (value: T) => void;

function subscribe<T>(listeners: Set<Listener<T>>, listener: Listener<T>): Subscription {
  listeners.add(listener);
  return { dispose: () => listeners.delete(listener) };
}

/**
 * An in-memory `SessionStoreService` for tests of the server and its features: the sessions of an
 * `InMemorySessionStore`, with indexing, problems and changes driven by the test.
 */
export class InMemoryStoreService extends InMemorySessionStore implements SessionStoreService {
  private state: StoreStatus;
  private readonly changeListeners = new Set<Listener<void>>();
  private readonly contentListeners = new Set<Listener<readonly SessionKey[]>>();
  private readonly problemListeners = new Set<Listener<StoreProblem>>();
  private readonly statusListeners = new Set<Listener<StoreStatus>>();
  private readonly indexedWaiters = new Set<() => void>();
  /** True once `dispose` was called. */
  disposed = false;

  constructor(
    readonly root: string,
    sessions: Iterable<InMemorySession> = [],
    options: { indexing?: boolean } = {},
  ) {
    super(sessions);
    const count = [...sessions].length;
    this.state = { indexing: options.indexing === true, indexed: options.indexing === true ? 0 : count, discovered: count, rootExists: true };
  }

  status(): StoreStatus {
    return { ...this.state };
  }

  /** Move indexing on (fires `onStatus`), and finish it when `indexing` becomes false. */
  setStatus(status: Partial<StoreStatus>): void {
    this.state = { ...this.state, ...status };
    for (const listener of this.statusListeners) listener(this.status());
    if (!this.state.indexing) {
      for (const release of this.indexedWaiters) release();
      this.indexedWaiters.clear();
    }
  }

  /** Report a header-level problem to the listeners. */
  reportProblem(problem: StoreProblem): void {
    for (const listener of this.problemListeners) listener(problem);
  }

  /** Tell the listeners the listing changed. */
  fireChange(): void {
    for (const listener of this.changeListeners) listener();
  }

  onDidChange(listener: () => void): Subscription {
    return subscribe(this.changeListeners, listener);
  }

  /** Tell the listeners these sessions' content changed (their rows did not). */
  fireContentChange(sessions: readonly SessionKey[]): void {
    for (const listener of this.contentListeners) listener(sessions);
  }

  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription {
    return subscribe(this.contentListeners, listener);
  }

  onProblem(listener: (problem: StoreProblem) => void): Subscription {
    return subscribe(this.problemListeners, listener);
  }

  onStatus(listener: (status: StoreStatus) => void): Subscription {
    return subscribe(this.statusListeners, listener);
  }

  /** How many `whenIndexed` calls are waiting for the index. */
  get indexWaiters(): number {
    return this.indexedWaiters.size;
  }

  whenIndexed(signal?: AbortSignal): Promise<void> {
    if (!this.state.indexing) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const release = (): void => resolve();
      this.indexedWaiters.add(release);
      signal?.addEventListener(
        'abort',
        () => {
          this.indexedWaiters.delete(release);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  dispose(): void {
    this.disposed = true;
  }
}
