/**
 * What the engine needs of an agent that keeps its sessions as rows of one SQLite database in its
 * home, not as files: the database's name, and what its rows mean (listing facts, one session's
 * surface and whole log). The engine reads the database as a whole, from a private snapshot, and
 * hands the adapter only a query function; an adapter is pure, as a file adapter is.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { SessionEventRecord, SessionSurface } from '../../resolver/sessionStore';
import type { SessionFacts } from './adapter';

/** Read-only queries over one snapshot of the database. Throws on a damaged database or a missing table. */
export interface DatabaseReader {
  /** The rows `sql` selects, `params` bound to its `?`s in order. */
  all(sql: string, ...params: (string | number)[]): Record<string, unknown>[];
}

/** One agent's database format. */
export interface DatabaseAdapter {
  readonly kind: 'database';
  readonly agent: ForeignAgent;
  /** The database's file name in the home; its write-ahead log is that name + `-wal`. */
  readonly file: string;
  /** Listing facts of every session the agent lists (throws as {@link DatabaseReader} does). */
  list(db: DatabaseReader): SessionFacts[];
  /** One session's surface, or undefined when the database holds no such session. */
  surface(db: DatabaseReader, sessionId: string): SessionSurface['events'] | undefined;
  /** One session as the user saw it, or undefined when the database holds no such session. */
  log(db: DatabaseReader, sessionId: string): SessionEventRecord[] | undefined;
}

/** Whether an adapter reads a database rather than session files. */
export function isDatabaseAdapter(adapter: object): adapter is DatabaseAdapter {
  return (adapter as { kind?: unknown }).kind === 'database';
}
