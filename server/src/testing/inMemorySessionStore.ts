import {
  SessionReadError,
  type SessionEventRecord,
  type SessionStore,
  type SessionSurface,
  type StoredSessionHeader,
  type StoredSessionSummary,
} from '../resolver/sessionStore';
import { compareStoreOrder } from '../resolver/storeOrder';

/** One session of an in-memory store: its header and its decoded log events (titles and surface events included). */
export interface InMemorySession {
  header: StoredSessionHeader;
  events?: readonly SessionEventRecord[];
  /**
   * Seq of the last observed event when it is not the last given event's (e.g. to model dsh's
   * in-memory repair closers); default: the last event's seq, null for an empty log.
   */
  capturedThroughSeq?: number | null;
}

const SURFACE_EVENT_TYPES = new Set(['user/message', 'assistant/message', 'tool/result']);

/** The latest title: `data.title` of the last `session/title` event, undefined when there is none. */
export function foldSessionTitle(events: readonly SessionEventRecord[]): string | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type !== 'session/title') continue;
    const title: unknown = (event.data as { title?: unknown } | null)?.title;
    return typeof title === 'string' ? title : undefined;
  }
  return undefined;
}

/**
 * The current surface: `append` pushes an event, `{op:'replace', start, end}` replaces the nodes from
 * seq `start` through seq `end` by their position in the surface (not numeric order).
 * Throws a `corrupt` SessionReadError for a replace range that is not on the surface.
 */
export function foldSurface(sessionId: string, events: readonly SessionEventRecord[]): SessionEventRecord[] {
  const nodes: SessionEventRecord[] = [];
  for (const event of events) {
    if (!SURFACE_EVENT_TYPES.has(event.type) || event.surfaceOp === undefined) continue;
    if (event.surfaceOp === 'append') {
      nodes.push(event);
      continue;
    }
    const { start, end } = event.surfaceOp;
    const from = nodes.findIndex((node) => node.seq === start);
    const to = nodes.findIndex((node) => node.seq === end);
    if (from < 0 || to < 0 || from > to) {
      const where = `replace range ${start}..${end} is not on the surface`;
      throw new SessionReadError('corrupt', `corrupt session log ${JSON.stringify(sessionId)}: ${where}`);
    }
    nodes.splice(from, to - from + 1, event);
  }
  return nodes;
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
 * A `SessionStore` held in memory, for tests: sessions are given as header + raw events, titles and
 * surfaces are folded on demand, and failures, stalls and gates can be injected.
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
    delete session.capturedThroughSeq;
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
    const events = session.events ?? [];
    const last = events[events.length - 1];
    return structuredClone({
      header: session.header,
      capturedThroughSeq: session.capturedThroughSeq !== undefined ? session.capturedThroughSeq : (last?.seq ?? null),
      events: foldSurface(sessionId, events),
    });
  }

  private buildListing(): StoredSessionSummary[] {
    const summaries = [...this.sessions.values()].map(({ header, events }): StoredSessionSummary => {
      const title = this.titleFailures.has(header.id) ? undefined : foldSessionTitle(events ?? []);
      return Object.freeze({ ...header, ...(title === undefined ? {} : { title }) });
    });
    return summaries.sort(compareStoreOrder);
  }
}
