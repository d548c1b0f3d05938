/** What the resolver needs from a session store; it knows nothing about files. */
import type { ForeignAgent } from '@dsh-session-ls/shared';

/** A listed session's header fields. */
export interface StoredSessionHeader {
  id: string;
  /** Absent when the header has no cwd. */
  cwd?: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Set only for another agent's session (dsh sessions never carry it). */
  agent?: ForeignAgent;
}

/** One session of the stores: its agent (absent: dsh) and id, as mentions name it. */
export interface SessionKey {
  readonly agent?: ForeignAgent;
  readonly id: string;
}

/** A listed session with its latest title (undefined when it has none or the title read failed). */
export interface StoredSessionSummary extends StoredSessionHeader {
  title?: string;
}

/** One decoded log event (envelope as dsh writes it, rows already expanded). */
export interface SessionEventRecord {
  type: string;
  seq: number;
  time?: number;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- untrusted JSON payload
  surfaceOp?: 'append' | { op: 'replace'; start: number; end: number };
  sourceEventSeqs?: number[];
  ignorable?: true;
}

/** One session's current surface, as dsh's `readSurface` gives it. */
export interface SessionSurface {
  header: StoredSessionHeader;
  /** Seq of the last event of the observed log (in-memory repair closers included); null for an empty log. */
  capturedThroughSeq: number | null;
  /** The current-surface events, in surface order. */
  events: readonly SessionEventRecord[];
}

/** Why a store could not read a session; `message` is the human reason that follows "failed to read referenced session: ". */
export class SessionReadError extends Error {
  override readonly name = 'SessionReadError';
  constructor(
    readonly reason: 'not-found' | 'ambiguous' | 'corrupt' | 'unsupported' | 'too-large' | 'io',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The store as the resolver sees it. */
export interface SessionStore {
  /** Every listed session, in store order (newest `createdAt` first, then `a.id.localeCompare(b.id)`), with latest titles. */
  listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]>;
  /**
   * One session's current surface and `capturedThroughSeq`. Rejects with a `SessionReadError`
   * (a missing session: reason `not-found`, message `session "<id as JSON>" not found`). `agent`
   * names another agent's session (undefined: a dsh session); a store without that agent treats it as not found.
   */
  readSurface(sessionId: string, signal?: AbortSignal, agent?: ForeignAgent): Promise<SessionSurface>;
  /**
   * Another agent's whole session as the user saw it (for a transcript), when the store reads that
   * agent; rejects as `readSurface` does. Absent on dsh's own store.
   */
  readAgentLog?(sessionId: string, agent: ForeignAgent, signal?: AbortSignal): Promise<AgentSessionLog>;
}

/** Another agent's whole session, in dsh's event shapes (each event with its `surfaceOp`), and its latest title. */
export interface AgentSessionLog {
  header: StoredSessionHeader;
  events: readonly SessionEventRecord[];
  title?: string;
}
