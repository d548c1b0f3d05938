/**
 * Another agent's store as the rest of the server sees it: the `ForeignSessionStore` interface,
 * its tuning and its options. `openForeignStore.ts` opens one.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { SessionStore } from '../../resolver/sessionStore';
import type { AgentSessionLog, SessionKey } from '../../resolver/sessionStore';
import { systemClock, type Clock } from '../disk/clock';
import type { Subscription } from '../service';
import type { WatchFactory } from '../directoryFiles';
import type { ForeignFiles } from './foreignRead';

export { MAX_FOREIGN_FILE_BYTES } from '../formats/adapter';

/** Another agent's store: read-only, listing and surfaces in the resolver's shapes. */
export interface ForeignSessionStore extends SessionStore {
  readonly agent: ForeignAgent;
  readonly home: string;
  /** The whole session as the user saw it (for a transcript); rejects as `readSurface` does. */
  readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog>;
  /**
   * Fires when the listing changed after the first one (a session created, deleted, renamed, or
   * written so that its row changed), at most every `notifyThrottleMs` as dsh's store does.
   */
  onDidChange(listener: () => void): Subscription;
  /** Fires, throttled with `onDidChange`, with the sessions whose files were read again after the first listing (rows changed or not). */
  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription;
  /** Writes the persistent cache now, if it differs (the process is about to end); watching and sweeping stop. */
  saveCache?(): Promise<void>;
  /** Stops watching and sweeping; no cache write starts after. */
  dispose(): void;
}

/** How the store keeps its listing fresh and its cache written. */
export interface ForeignStoreTuning {
  /** Quiet time after a watch event before the folder (or file) it names is looked at again. */
  debounceMs: number;
  /**
   * …and at least this many times the last such look took, since it ended: a session being written
   * is read again at each look (its bytes before the last read's end hashed, only the new ones
   * folded; a compressed one decoded whole), a database home's database copied, so a large one
   * written continuously costs at most ~1/(1+factor) of a core (default 10).
   */
  refreshCostFactor: number;
  /**
   * Behind the watches, for lost events and folders past `maxWatches`: the sweep re-stats the
   * session files no watch covers, a pass at least `sweepPeriodMs` and `sweepCostFactor` × its own
   * cost apart, and a full rescan of the home (every folder listed, every session file stat'ed) runs
   * as far apart (a database home: its database and log stat'ed).
   */
  sweepPeriodMs: number;
  sweepCostFactor: number;
  /** Folder watches at most (the home, the session folders' parents, then the most recent session folders). */
  maxWatches: number;
  watchFactory?: WatchFactory;
  /** Delay before the persistent cache is rewritten after a change. */
  cacheSaveDelayMs: number;
  /** A read of an id that is not listed walks the home first, at most this often. */
  missRescanMs: number;
  /** Minimum spacing of `onDidChange` notifications (dsh's store: 100 ms). */
  notifyThrottleMs: number;
  /** Time (tests pass a fake clock): what the spacing above is measured and waited in. */
  clock: Clock;
}

export const DEFAULT_FOREIGN_TUNING: ForeignStoreTuning = {
  debounceMs: 30,
  refreshCostFactor: 10,
  sweepPeriodMs: 30_000,
  sweepCostFactor: 400,
  maxWatches: 1024,
  cacheSaveDelayMs: 5000,
  missRescanMs: 1000,
  notifyThrottleMs: 100,
  clock: systemClock,
};

export interface ForeignStoreOptions {
  /** Diagnostic logging (files skipped, refreshes that failed). */
  log?: (message: string) => void;
  /**
   * Where the persistent summary cache lives (one file per agent home; the dsh store's cache
   * directory). Absent, or inside the agent's home: no persistent cache.
   */
  cacheDir?: string;
  /** Opens session files for the listing's reads (tests count reads); default: the file system. */
  files?: ForeignFiles;
  tuning?: Partial<ForeignStoreTuning>;
}
