/**
 * A test double of the session store for tests of answers during the first index, which must not
 * depend on how fast a store indexes. The server runs it through test/support/heldIndexServer.ts.
 */
import { access } from 'node:fs/promises';
import { Emitter } from '../../server/src/store/emitter';
import type { SessionStoreService, StoreProblem, StoreStatus, Subscription } from '../../server/src/store/service';

/** heldIndexServer.ts's argument naming the file whose existence holds the first index. */
export const HOLD_ARGUMENT = '--hold-first-index=';

const POLL_MS = 25;

/**
 * `store` as if its first index had found nothing yet while `holdFile` exists. It
 * reports `indexing` with nothing indexed, lists no session, and `whenIndexed` waits until the file is
 * gone; from then on it is `store`. The file is only checked for, never opened or written.
 */
export function holdFirstIndex(store: SessionStoreService, holdFile: string, log: (message: string) => void = () => undefined): SessionStoreService {
  let held = true;
  let disposed = false;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const statusEmitter = new Emitter<StoreStatus>((error) => log(`session store listener failed: ${String(error)}`));
  const status = (): StoreStatus => {
    const inner = store.status();
    return held ? { ...inner, indexing: true, indexed: 0 } : inner;
  };
  const poll = (): void => {
    if (disposed) return;
    access(holdFile).then(
      () => setTimeout(poll, POLL_MS).unref(),
      () => {
        held = false;
        release();
        statusEmitter.fire(status());
      },
    );
  };
  poll();
  const innerStatus = store.onStatus(() => statusEmitter.fire(status()));
  return {
    root: store.root,
    listSessions: async (signal) => (held ? [] : store.listSessions(signal)),
    readSurface: (sessionId, signal) => store.readSurface(sessionId, signal),
    status,
    onDidChange: (listener: () => void): Subscription => store.onDidChange(listener),
    onDidChangeContent: (listener) => store.onDidChangeContent(listener),
    onProblem: (listener: (problem: StoreProblem) => void): Subscription => store.onProblem(listener),
    onStatus: (listener: (status: StoreStatus) => void): Subscription => statusEmitter.on(listener),
    async whenIndexed(signal?: AbortSignal): Promise<void> {
      await store.whenIndexed(signal);
      if (!held || disposed) return;
      await new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = (): void => reject(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        void released.then(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    },
    saveCache: async () => {
      await store.saveCache?.();
    },
    dispose(): void {
      disposed = true;
      held = false;
      release();
      innerStatus.dispose();
      statusEmitter.clear();
      store.dispose();
    },
  };
}
