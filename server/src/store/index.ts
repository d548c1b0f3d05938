/** The on-disk session store: open one over a dsh sessions root. */
import { DiskSessionStore } from './diskStore';
import type { OpenSessionStoreOptions, SessionStoreService } from './service';

export { defaultSessionsRoot } from './defaultRoot';
export { cacheWritesSettled } from './diskStore';
export type { OpenSessionStoreOptions, SessionStoreService, StoreProblem, StoreStatus, Subscription } from './service';

/** Opens a read-only, self-refreshing store over `options.root` (a missing root is not an error). */
export function openSessionStore(options: OpenSessionStoreOptions): SessionStoreService {
  return new DiskSessionStore(options);
}
