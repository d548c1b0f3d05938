/**
 * Opening another agent's store: the engine its adapter's kind calls for (a home of session files,
 * `homeStore.ts`; one database, `databaseStore.ts`), behind the one `ForeignSessionStore` interface
 * (`foreignStore.ts`).
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { isDatabaseAdapter } from '../formats/database';
import { formatOf } from '../formats/registry';
import { openDatabaseStore } from './databaseStore';
import type { ForeignSessionStore, ForeignStoreOptions } from './foreignStore';
import { openHomeStore } from './homeStore';

/**
 * Open another agent's store under `home`, strictly read-only: the disk engine over the home in the
 * agent's format (`homeStore.ts`). The first listing walks the home (folders listed, session files
 * stat'ed) and reads only the files the persistent cache does not describe by the same identity
 * (size, modification and change time, inode); later listings are answered from memory at once,
 * without touching the disk. Folder watches on the home, the folders above the session folders and
 * the most recent session folders report new, renamed, deleted and written sessions: the folder (or
 * the one file) named is looked at again after a short quiet time, and only a file whose identity
 * changed is read again (one that grew: only its new bytes folded, see `foreignRead.ts`). A sweep
 * re-stats the files no watch covers and a full rescan walks the whole home, every sweep period.
 * While nothing changes the listing is the same frozen array, which keeps the candidate index; a
 * new one is told to `onDidChange` listeners. Damage (torn lines, garbage, a damaged cache) is
 * skipped, never fatal.
 */
export function openForeignStore(agent: ForeignAgent, home: string, options: ForeignStoreOptions | ((message: string) => void) = {}): ForeignSessionStore {
  const opened = typeof options === 'function' ? { log: options } : options;
  // An agent whose sessions are rows of one database has its own store (`databaseStore.ts`).
  const format = formatOf(agent);
  if (isDatabaseAdapter(format)) return openDatabaseStore(format, home, opened);
  return openHomeStore(format, home, opened);
}


