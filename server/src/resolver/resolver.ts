import {
  SessionReferenceError,
  isPositiveSafeInteger,
  resolveSessionReferenceConfig,
  type ContentBlock,
  type PreparedReferencedMessage,
  type SessionReferenceCandidate,
  type SessionReferenceConfig,
  type SessionReferenceMentionCandidate,
  type SessionReferenceSource,
  type SessionReferenceTarget,
  type UserMessage,
} from '@dsh-session-ls/shared';
import { retainWithinBudget } from './budget';
import { raceWithSignal, throwIfCancelled } from './cancellation';
import { MentionCandidateOnWrite, toCandidate, toMentionCandidate } from './candidates';
import { selectCandidates } from './candidateSearch';
import { projectSessionSurface } from './projection';
import { redactProjection } from './redaction';
import { renderReferencedSessionsPrompt } from './prompt';
import { normalizeReferences, type NormalizedReference } from './references';
import type { SessionStore, SessionSurface, StoredSessionSummary } from './sessionStore';

/** What a resolver does beyond dsh. */
export interface SessionReferenceResolverOptions {
  /** `prepare` replaces each credential in a snapshot with `[REDACTED:<kind>]` before the byte budget (default false: dsh's bytes). */
  redactSecrets?: boolean;
}

/** Candidate discovery and snapshot preparation over a `SessionStore`, exactly as dsh does them. */
export interface SessionReferenceResolver {
  /** The validated limits in force. */
  readonly config: SessionReferenceConfig;
  /** True when `prepare` redacts credentials (the setting `redactSecrets`). */
  readonly redactsSecrets: boolean;
  /**
   * Sessions a message may reference, best first (session-reference.md §6); no cwd affinity when the
   * target cwd is unknown. A failing store listing is passed through unchanged (unless cancelled).
   */
  listCandidates(
    target: SessionReferenceTarget | undefined,
    query?: string,
    limit?: number,
    signal?: AbortSignal,
  ): Promise<SessionReferenceCandidate[]>;
  /** `listCandidates`, each row carrying its canonical mention. */
  listMentionCandidates(
    target: SessionReferenceTarget | undefined,
    query?: string,
    limit?: number,
    signal?: AbortSignal,
  ): Promise<SessionReferenceMentionCandidate[]>;
  /** `listMentionCandidates` for an answer that goes straight to JSON: the same JSON, each row made as it is written. */
  listMentionCandidatesOnWrite(
    target: SessionReferenceTarget | undefined,
    query?: string,
    limit?: number,
    signal?: AbortSignal,
  ): Promise<MentionCandidateOnWrite[]>;
  /** Snapshot the referenced sessions into one context message (session-reference.md §7). */
  prepare(
    target: SessionReferenceTarget | undefined,
    content: ContentBlock[],
    references: unknown,
    signal?: AbortSignal,
  ): Promise<PreparedReferencedMessage>;
}

/** The message prefix of a READ_FAILED error. */
const READ_FAILED_PREFIX = 'failed to read referenced session: ';

function readFailed(error: unknown): SessionReferenceError {
  const reason = error instanceof Error ? error.message : String(error);
  return new SessionReferenceError('SESSION_REFERENCE_READ_FAILED', READ_FAILED_PREFIX + reason, { cause: error });
}

/**
 * Read every source once, in parallel; all or nothing. The store gets a signal that aborts with the
 * caller's, and also when one read has failed, so it can stop the others.
 */
async function readSources(
  store: SessionStore,
  references: readonly NormalizedReference[],
  signal: AbortSignal | undefined,
): Promise<SessionSurface[]> {
  const reads = new AbortController();
  const forwardAbort = (): void => reads.abort(signal?.reason);
  signal?.addEventListener('abort', forwardAbort, { once: true });
  try {
    const all = Promise.all(references.map(({ sessionId, agent }) => store.readSurface(sessionId, reads.signal, agent)));
    return await raceWithSignal(all, signal);
  } catch (error) {
    // Whether cancelled or failed, the remaining reads are no longer wanted.
    reads.abort(signal?.aborted === true ? signal.reason : error);
    throwIfCancelled(signal);
    throw readFailed(error);
  } finally {
    signal?.removeEventListener('abort', forwardAbort);
  }
}

/** Check a listing's arguments, then list the store and select up to `limit` rows for `target`. */
async function selectListed<Row>(
  store: SessionStore,
  target: SessionReferenceTarget | undefined,
  query: string,
  limit: number,
  signal: AbortSignal | undefined,
  row: (summary: StoredSessionSummary) => Row,
): Promise<Row[]> {
  if (!isPositiveSafeInteger(limit)) {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'candidate limit must be a positive safe integer');
  }
  if (typeof query !== 'string') {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'candidate query must be a string');
  }
  throwIfCancelled(signal);
  let sessions;
  try {
    sessions = await raceWithSignal(store.listSessions(signal), signal);
  } catch (error) {
    throwIfCancelled(signal);
    throw error;
  }
  throwIfCancelled(signal);
  return selectCandidates(sessions, target, query, limit, row);
}

/** The `source` of the context message: what was kept of each reference, in input order. */
function referenceSource(retained: ReadonlyArray<ReturnType<typeof retainWithinBudget>>): SessionReferenceSource {
  return {
    kind: 'session-reference',
    form: 'recall',
    version: 1,
    references: retained.map(({ data, stats }, inputIndex) => ({
      sessionId: data.sessionId,
      label: data.label,
      capturedThroughSeq: data.capturedThroughSeq,
      compacted: stats.compacted,
      originalMessages: stats.originalMessages,
      retainedMessages: stats.retainedMessages,
      omittedMessages: stats.omittedMessages,
      omittedBytes: stats.omittedBytes,
      truncated: stats.truncated,
      inputIndex,
      ...(data.agent === undefined ? {} : { agent: data.agent }),
    })),
  };
}

/** dsh's prepare: the content as given, and one context message snapshotting every reference. */
async function prepareMessage(
  store: SessionStore,
  config: SessionReferenceConfig,
  target: SessionReferenceTarget | undefined,
  content: ContentBlock[],
  references: unknown,
  signal: AbortSignal | undefined,
  redactSecrets: boolean,
): Promise<PreparedReferencedMessage> {
  const acceptedContent = structuredClone(content);
  const inputs = normalizeReferences(references, target?.sessionId, config.maxReferences);
  if (inputs.length === 0) return { content: acceptedContent };
  throwIfCancelled(signal);
  const surfaces = await readSources(store, inputs, signal);
  throwIfCancelled(signal);

  const projections = surfaces.map((surface, index) => projectSessionSurface(surface, inputs[index]!.label));
  // Redacted before the budget (see redaction.ts): the budget measures what is sent. Off, nothing is scanned.
  const sendable = redactSecrets ? (await Promise.all(projections.map(redactProjection))).map(({ projection }) => projection) : projections;
  throwIfCancelled(signal);
  const retained = sendable.map((projection) => retainWithinBudget(projection, config.maxReferenceBytes));
  const additionalContext: UserMessage = {
    id: crypto.randomUUID(),
    role: 'user',
    content: [{ type: 'text', text: renderReferencedSessionsPrompt(retained.map(({ data }) => data)) }],
    source: referenceSource(retained),
  };
  return { content: acceptedContent, additionalContext };
}

/** Build a resolver over `store`; the config is validated (INVALID_CONFIG) and missing fields take dsh's defaults. */
export function createSessionReferenceResolver(
  store: SessionStore,
  config?: Partial<SessionReferenceConfig>,
  options: SessionReferenceResolverOptions = {},
): SessionReferenceResolver {
  const redactSecrets = options.redactSecrets === true;
  const resolved = Object.freeze(resolveSessionReferenceConfig(config));
  const listed = <Row>(target: SessionReferenceTarget | undefined, query: string | undefined, limit: number | undefined, signal: AbortSignal | undefined, row: (summary: StoredSessionSummary) => Row) =>
    selectListed(store, target, query === undefined ? '' : query, limit === undefined ? resolved.candidateLimit : limit, signal, row);

  return {
    config: resolved,
    redactsSecrets: redactSecrets,
    listCandidates: (target, query, limit, signal) => listed(target, query, limit, signal, toCandidate),
    // One object per row: at 100,000 rows, candidates then a mapped copy doubled the answer's memory.
    listMentionCandidates: (target, query, limit, signal) => listed(target, query, limit, signal, toMentionCandidate),
    listMentionCandidatesOnWrite: (target, query, limit, signal) =>
      listed(target, query, limit, signal, (summary) => new MentionCandidateOnWrite(summary)),
    prepare: (target, content, references, signal) => prepareMessage(store, resolved, target, content, references, signal, redactSecrets),
  };
}
