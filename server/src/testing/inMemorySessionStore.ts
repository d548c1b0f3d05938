import {
  SessionReadError,
  type SessionEventRecord,
  type SessionStore,
  type SessionSurface,
  type StoredSessionHeader,
  type StoredSessionSummary,
} from '../resolver/sessionStore';
import { compareStoreOrder } from '../resolver/storeOrder';
import { loadSessionLog, SessionLogSummarizer, type LoadedSessionLog } from '../store/log';
import { headerRecord, rawTranscript } from './testLogs';

/** One session of an in-memory store: its header and its log events (titles and surface events included). */
export interface InMemorySession {
  header: StoredSessionHeader;
  events?: readonly SessionEventRecord[];
}

/**
 * The `session.jsonl` a dsh store would hold for this header and these events: a dsh header line
 * (id, createdAt, cwd), then one line per event as given.
 */
export function sessionTranscript(header: StoredSessionHeader, events: readonly SessionEventRecord[]): Uint8Array {
  const lines = [JSON.stringify(headerRecord({ id: header.id, createdAt: header.createdAt, cwd: header.cwd }))];
  for (const event of events) lines.push(JSON.stringify(event));
  return rawTranscript(lines);
}

/**
 * The log as the real store loads it for `readSurface` (store/log's full load: dsh's fold with its
 * checks, surface, title, crash-repair closers). Throws its SessionReadError.
 */
export function foldLog(header: StoredSessionHeader, events: readonly SessionEventRecord[]): LoadedSessionLog {
  return loadSessionLog(sessionTranscript(header, events), 'raw', { expectedId: header.id, keepEvents: false });
}

/** The current surface of a log, folded by the real store code (throws its SessionReadError). */
export function foldSurface(sessionId: string, events: readonly SessionEventRecord[]): SessionEventRecord[] {
  return foldLog({ id: sessionId, createdAt: 0 }, events).surface;
}

/**
 * The latest title as the store's summarizer (what the listing is built from) reads it: undefined
 * when there is none, or when the log does not load.
 */
export function foldSessionTitle(events: readonly SessionEventRecord[], header: StoredSessionHeader = { id: 's', createdAt: 0 }): string | undefined {
  const summarizer = new SessionLogSummarizer('raw');
  summarizer.push(sessionTranscript(header, events));
  return summarizer.summary().title;
}

type Deferred = { promise: Promise<void>; release: () => void };

function deferred(): Deferred {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

const rejectOnAbort = (signal: AbortSignal | undefined): Promise<never> =>
  new Promise<never>((_, reject) => {
    if (signal === undefined) return;
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/**
 * A `SessionStore` held in memory, for tests: sessions are given as header + log events; titles and
 * surfaces are folded on demand by the real store code (the summarizer for the listing, the full
 * load for `readSurface`), and failures, stalls and gates can be injected.
 */
export class InMemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, InMemorySession>();
  private listing: readonly StoredSessionSummary[] | undefined;
  private readonly readFailures = new Map<string, Error>();
  private readonly titleFailures = new Set<string>();
  private listFailure: Error | undefined;
  private stalledReads = false;
  private stalledList = false;
  private readGate: Deferred | undefined;
  /** Session ids passed to `readSurface`, in call order. */
  readonly readLog: string[] = [];
  /** Number of `listSessions` calls. */
  listCalls = 0;
  /** Signals passed to `readSurface`, in call order. */
  readonly readSignals: Array<AbortSignal | undefined> = [];

  constructor(sessions: Iterable<InMemorySession> = []) {
    for (const session of sessions) this.put(session);
  }

  /** Add or replace a session (deep-copied, so later changes to the argument do not leak in). */
  put(session: InMemorySession): this {
    this.sessions.set(session.header.id, structuredClone(session));
    this.listing = undefined;
    return this;
  }

  /** Append events to a stored session's log. */
  append(sessionId: string, ...events: SessionEventRecord[]): this {
    const session = this.sessions.get(sessionId);
    if (session === undefined) throw new Error(`no session ${JSON.stringify(sessionId)} to append to`);
    session.events = [...(session.events ?? []), ...structuredClone(events)];
    this.listing = undefined;
    return this;
  }

  /** Remove a session. */
  delete(sessionId: string): this {
    this.sessions.delete(sessionId);
    this.listing = undefined;
    return this;
  }

  /** Make reads of one session reject with `error` (default: a corrupt-log SessionReadError). */
  failRead(sessionId: string, error: Error = new SessionReadError('corrupt', 'corrupt session log')): this {
    this.readFailures.set(sessionId, error);
    return this;
  }

  /** Make one session's title read fail: it is listed without a title, as a real store does. */
  failTitle(sessionId: string): this {
    this.titleFailures.add(sessionId);
    this.listing = undefined;
    return this;
  }

  /** Make `listSessions` reject with `error`. */
  failList(error: Error): this {
    this.listFailure = error;
    return this;
  }

  /** Make every later read (`'read'`) or listing (`'list'`) never settle, whatever its signal does. */
  stall(what: 'read' | 'list'): this {
    if (what === 'read') this.stalledReads = true;
    else this.stalledList = true;
    return this;
  }

  /** Hold every later read until the returned function is called; aborting its signal rejects it. */
  gateReads(): () => void {
    const gate = deferred();
    this.readGate = gate;
    return () => {
      if (this.readGate === gate) this.readGate = undefined;
      gate.release();
    };
  }

  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    this.listCalls += 1;
    if (this.stalledList) return new Promise<never>(() => {});
    if (signal?.aborted === true) throw signal.reason;
    if (this.listFailure !== undefined) throw this.listFailure;
    // The same summary objects are returned until something changes, as a caching store would.
    this.listing ??= this.buildListing();
    return this.listing;
  }

  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    this.readLog.push(sessionId);
    this.readSignals.push(signal);
    if (this.stalledReads) return new Promise<never>(() => {});
    if (this.readGate !== undefined) await Promise.race([this.readGate.promise, rejectOnAbort(signal)]);
    if (signal?.aborted === true) throw signal.reason;
    const session = this.sessions.get(sessionId);
    if (session === undefined) {
      throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
    }
    const failure = this.readFailures.get(sessionId);
    if (failure !== undefined) throw failure;
    const loaded = foldLog(session.header, session.events ?? []);
    return structuredClone({ header: session.header, capturedThroughSeq: loaded.capturedThroughSeq, events: loaded.surface });
  }

  private buildListing(): StoredSessionSummary[] {
    const summaries = [...this.sessions.values()].map(({ header, events }): StoredSessionSummary => {
      const title = this.titleFailures.has(header.id) ? undefined : foldSessionTitle(events ?? [], header);
      return Object.freeze({ ...header, ...(title === undefined ? {} : { title }) });
    });
    return summaries.sort(compareStoreOrder);
  }
}
