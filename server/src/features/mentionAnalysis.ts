import {
  SESSION_URI_PREFIX,
  SessionReferenceError,
  decodeAgentSessionUri,
  decodeSessionMention,
  decodeSessionReferenceUri,
  isSessionReferenceError,
  iterateAgentSessionMentions,
  scanSessionMentions,
  type ForeignAgent,
  type SessionMentionToken,
  type SessionReferenceConfig,
  type SessionReferenceTarget,
} from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  SessionReadError,
  projectSessionSurface,
  raceWithSignal,
  redactProjection,
  retainWithinBudget,
  sentCredentials,
  tagSafeJsonByteLength,
  throwIfCancelled,
  type CredentialTally,
  type RetainedSession,
  type SessionStore,
  type SessionSurface,
} from '../resolver';
import type { SessionServices } from './services';
import { WorkSlices } from './workSlices';

/** Why dsh refuses a mention's own text (each fails the whole message with INVALID_REFERENCE). */
export type MentionGrammarProblem =
  /** An explicit `@[label](dsh-session:…)` whose URI is not a canonical session URI. */
  | 'malformed'
  /** A bare `dsh-session:…` URI that is not canonical. */
  | 'non-canonical'
  /** A canonical bare URI followed by a letter, digit, `-` or `_`, which dsh reads as part of it. */
  | 'glued';

/** One mention of a document, as the shared grammar finds it, with what dsh makes of its text. */
export interface DocumentMention {
  token: SessionMentionToken;
  /** Set only for another agent's mention (its own scheme): dsh reads it as plain text. */
  agent?: ForeignAgent;
  /** The decoded session id; undefined when the URI fails. */
  sessionId?: string;
  /** The label `prepare` would carry for this mention: the explicit label, or the id of a bare URI. */
  label?: string;
  /** The INVALID_REFERENCE error dsh raises for this mention. */
  error?: SessionReferenceError;
  grammar?: MentionGrammarProblem;
  /** For a glued URI: the offset where the canonical URI ends and the glued text begins. */
  gluedAt?: number;
  /** For a bare URI inside other text (e.g. a URL): that text, which dsh does not treat as a boundary. */
  precededBy?: string;
}

/** How reading a mentioned session went. */
export type SessionReadOutcome =
  | { ok: true; surface: SessionSurface }
  | { ok: false; error: unknown; notFound: boolean };

/** How a readable session fits its byte budget. */
export type BudgetOutcome =
  | {
      fits: true;
      retained: RetainedSession;
      bytes: number;
      /** The credentials its snapshot sends, whole or in part; with `redacted`, their placeholders. */
      credentials: CredentialTally;
      redacted: boolean;
    }
  | { fits: false; error: SessionReferenceError };

/** One distinct session a document mentions, with everything `prepare` would find out about it. */
export interface MentionedSession {
  sessionId: string;
  /** Set only for another agent's session. */
  agent?: ForeignAgent;
  /** The label `prepare` carries into the snapshot: the first mention's. */
  label: string;
  /** True when it is the target session (dsh: SELF_REFERENCE). */
  self: boolean;
  /**
   * 0-based position among the distinct non-target sessions; -1 for the target. A dsh session counts
   * among dsh's sessions only (dsh reads foreign mentions as plain text); another agent's among all,
   * as our `prepare` counts them.
   */
  order: number;
  /** True past `maxReferences` distinct sessions (dsh: TOO_MANY). */
  overLimit: boolean;
  /** True when the store's listing has it. */
  listed: boolean;
  /** Its latest title, when listed with one. */
  title?: string;
  /** Undefined for the target, which is never read. */
  read?: SessionReadOutcome;
  /** Undefined unless it was read. */
  budget?: BudgetOutcome;
}

/** A document's mentions and their sessions, as `dshSession.prepare` would see them. */
export interface MentionAnalysis {
  mentions: DocumentMention[];
  /** Distinct decodable sessions in order of first mention. */
  sessions: MentionedSession[];
  /** The sessions by `sessionKey(sessionId, agent)`. */
  byKey: ReadonlyMap<string, MentionedSession>;
  target: SessionReferenceTarget;
  config: SessionReferenceConfig;
  /** True while the store is still being indexed (a missing session may just not be found yet). */
  indexing: boolean;
}

/** Reads one session's surface (`agent`: another agent's session); a cache may answer for the store. */
export type SurfaceReader = (sessionId: string, signal?: AbortSignal, agent?: ForeignAgent) => Promise<SessionSurface>;

/**
 * The key of a session of an agent (undefined: dsh): a dsh id and another agent's same id never
 * meet, whatever characters a dsh id holds (its key always starts with the agent's name).
 */
export function sessionKey(sessionId: string, agent?: ForeignAgent): string {
  return `${agent ?? 'dsh'}\u0000${sessionId}`;
}

/** The analysed session a decodable mention names (undefined for an undecodable one). */
export function sessionOfMention(analysis: Pick<MentionAnalysis, 'byKey'>, mention: DocumentMention): MentionedSession | undefined {
  return mention.sessionId === undefined ? undefined : analysis.byKey.get(sessionKey(mention.sessionId, mention.agent));
}

const WHITESPACE = /\s/;
// A glued run longer than this is not looked for: the prefix search is quadratic in it.
const MAX_GLUED_CHARS = 64;
// Text that makes a bare URI part of a word or URL when it comes right before it.
const URL_CONTEXT_CHAR = /[\p{L}\p{N}/:=.#?&%+~@_-]/u;

/** The offset where the longest canonical URI at the start of a bare token ends, if the token is one glued to more text. */
function gluedOffset(token: SessionMentionToken): number | undefined {
  const prefixLength = token.uri.indexOf(':') + 1 || SESSION_URI_PREFIX.length;
  const minEnd = Math.max(token.start + prefixLength + 1, token.end - MAX_GLUED_CHARS);
  for (let end = token.end - 1; end >= minEnd; end--) {
    try {
      const uri = token.uri.slice(0, end - token.start);
      if (token.agent === undefined) decodeSessionReferenceUri(uri);
      else decodeAgentSessionUri(uri);
      return end;
    } catch {
      // Not canonical at this length; try a shorter one.
    }
  }
  return undefined;
}

/** The non-whitespace run right before a bare URI, when it would glue the URI into a word or URL. */
function textBefore(text: string, start: number): string | undefined {
  if (start === 0 || !URL_CONTEXT_CHAR.test(text[start - 1]!)) return undefined;
  let from = start;
  while (from > 0 && !WHITESPACE.test(text[from - 1]!)) from--;
  return text.slice(from, start);
}

/** Which mentions to find: dsh's alone (the default), or other agents' too. */
export interface MentionScope {
  /** Also other agents' mentions (their own schemes); dsh's are found exactly as without. */
  foreign?: boolean;
}

/** What decoding a URI gave: the session id, or dsh's error and, for a bare token, where a glued URI ends. */
interface DecodedUri {
  sessionId?: string;
  error?: SessionReferenceError;
  /** For a bare token that failed: the length of the canonical URI it starts with, when it is one glued to more text. */
  gluedLength?: number;
}

/** How many decoded URIs one scan remembers (a document repeats its mentions; a hostile one never does). */
const DECODED_URI_MEMO = 4096;

/**
 * Decodes each mention of one scan, remembering what each distinct URI gave: a document dense with
 * mentions repeats a few URIs, and a URI that fails costs an exception (and, bare, up to
 * {@link MAX_GLUED_CHARS} more in the glued search), so it is decoded once rather than per mention.
 */
class MentionDecoder {
  private readonly memo = new Map<string, DecodedUri>();

  constructor(private readonly text: string) {}

  mention(token: SessionMentionToken): DocumentMention {
    const key = `${token.kind}\u0000${token.agent ?? ''}\u0000${token.uri}`;
    let decoded = this.memo.get(key);
    if (decoded === undefined) {
      decoded = decodeUri(token);
      if (this.memo.size >= DECODED_URI_MEMO) this.memo.clear();
      this.memo.set(key, decoded);
    }
    const mention: DocumentMention = token.agent === undefined ? { token } : { token, agent: token.agent };
    if (decoded.error === undefined) {
      mention.sessionId = decoded.sessionId!;
      mention.label = token.label ?? decoded.sessionId!;
    } else {
      mention.error = decoded.error;
      if (token.kind === 'explicit') {
        mention.grammar = 'malformed';
      } else {
        mention.grammar = decoded.gluedLength === undefined ? 'non-canonical' : 'glued';
        if (decoded.gluedLength !== undefined) mention.gluedAt = token.start + decoded.gluedLength;
      }
    }
    if (token.kind === 'bare') {
      const before = textBefore(this.text, token.start);
      if (before !== undefined) mention.precededBy = before;
    }
    return mention;
  }
}

function decodeUri(token: SessionMentionToken): DecodedUri {
  const decoded = decodeSessionMention(token);
  if (decoded.error === undefined) return { sessionId: decoded.sessionId };
  if (token.kind === 'explicit') return { error: decoded.error };
  const gluedAt = gluedOffset(token);
  return gluedAt === undefined ? { error: decoded.error } : { error: decoded.error, gluedLength: gluedAt - token.start };
}

function mentionTokens(text: string, scope: MentionScope): Iterable<SessionMentionToken> {
  return scope.foreign === true ? iterateAgentSessionMentions(text) : scanSessionMentions(text);
}

/**
 * Every mention the shared grammar finds in `text`, each with the grammar problem dsh would raise for
 * it (for another agent's mention: the one our `prepare` raises).
 */
export function findDocumentMentions(text: string, scope: MentionScope = {}): DocumentMention[] {
  const decoder = new MentionDecoder(text);
  const mentions: DocumentMention[] = [];
  for (const token of mentionTokens(text, scope)) mentions.push(decoder.mention(token));
  return mentions;
}

/**
 * The same as {@link findDocumentMentions}, found in slices that give the event loop back between
 * them (`slices`), so a document dense with mentions never holds up another document's requests.
 */
export async function findDocumentMentionsInSlices(text: string, scope: MentionScope, slices: WorkSlices): Promise<DocumentMention[]> {
  const decoder = new MentionDecoder(text);
  const mentions: DocumentMention[] = [];
  for (const token of mentionTokens(text, scope)) {
    mentions.push(decoder.mention(token));
    if (slices.due()) await slices.pause();
  }
  return mentions;
}

/** True for a read failure that means the session does not exist (yet). */
function isNotFound(error: unknown): boolean {
  return error instanceof SessionReadError ? error.reason === 'not-found' : (error as { reason?: unknown } | null)?.reason === 'not-found';
}

async function fitBudget(surface: SessionSurface, label: string, maxReferenceBytes: number, redact: boolean): Promise<BudgetOutcome> {
  // As prepare does it: redacted before the budget when asked (resolver/redaction.ts).
  const projection = projectSessionSurface(surface, label);
  const sendable = redact ? await redactProjection(projection) : { projection };
  let retained: RetainedSession;
  try {
    retained = retainWithinBudget(sendable.projection, maxReferenceBytes);
  } catch (error) {
    if (isSessionReferenceError(error) && error.code === 'SESSION_REFERENCE_BUDGET_EXCEEDED') return { fits: false, error };
    throw error;
  }
  return { fits: true, retained, bytes: tagSafeJsonByteLength(retained.data), credentials: await sentCredentials(sendable, retained), redacted: redact };
}

// A surface is replaced, never changed, when its session changes: its outcomes are kept until then.
const budgetOutcomes = new WeakMap<SessionSurface, Map<string, Promise<BudgetOutcome>>>();

/** {@link fitBudget}, computed once per surface, label, budget and redaction. */
function cachedFitBudget(surface: SessionSurface, label: string, maxReferenceBytes: number, redact: boolean): Promise<BudgetOutcome> {
  let outcomes = budgetOutcomes.get(surface);
  if (outcomes === undefined) budgetOutcomes.set(surface, (outcomes = new Map<string, Promise<BudgetOutcome>>()));
  const key = `${maxReferenceBytes}\u0000${redact}\u0000${label}`;
  let outcome = outcomes.get(key);
  if (outcome === undefined) outcomes.set(key, (outcome = fitBudget(surface, label, maxReferenceBytes, redact)));
  return outcome;
}

/** What the analysis needs besides the text. */
export interface MentionAnalysisContext {
  sessions: SessionStore;
  /** Also analyse other agents' mentions (only when one is enabled); dsh's are analysed exactly as without. */
  foreign?: boolean;
  target: SessionReferenceTarget;
  config: SessionReferenceConfig;
  indexing: boolean;
  /** Credentials are redacted before the budget, as `prepare` does with the setting on. */
  redactSecrets?: boolean;
  /** Reads surfaces (default: `sessions.readSurface`); a cache may stand in. */
  readSurface?: SurfaceReader;
  /**
   * Read at most this many distinct sessions, in order of first mention (default: every one); the
   * others are left unread (`read` undefined). Each past `maxReferences` is TOO_MANY whatever it holds.
   */
  readLimit?: number;
  signal?: AbortSignal;
}

/** Latest titles of the given sessions (by `sessionKey`) from the store's listing (a failed listing gives none). */
async function listedTitles(
  sessions: SessionStore,
  keys: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<Map<string, string | undefined>> {
  const found = new Map<string, string | undefined>();
  if (keys.size === 0) return found;
  let listing;
  try {
    listing = await raceWithSignal(sessions.listSessions(signal), signal);
  } catch {
    throwIfCancelled(signal);
    return found;
  }
  for (const summary of listing) {
    const key = sessionKey(summary.id, summary.agent);
    if (keys.has(key)) found.set(key, summary.title);
  }
  return found;
}

/**
 * Analyse a text's mentions as `prepare` would process them (session-reference.md §5, §7): decode
 * each, then per distinct session whether it is the target, past `maxReferences`, readable, and how it
 * fits the byte budget. Every non-target session is read (in parallel; up to `readLimit`), even past
 * the limit, so each mention can say what is wrong with it. The work is done in slices that give the
 * event loop back ({@link WorkSlices}): a document dense with mentions never holds up other requests.
 */
export async function analyzeMentions(text: string, context: MentionAnalysisContext): Promise<MentionAnalysis> {
  const { target, config, signal } = context;
  const slices = new WorkSlices(signal);
  const mentions = await findDocumentMentionsInSlices(text, { foreign: context.foreign === true }, slices);
  const byKey = new Map<string, MentionedSession>();
  const sessions: MentionedSession[] = [];
  // dsh counts its own sessions only; our prepare counts every distinct non-target one.
  let dshOrder = 0;
  let allOrder = 0;
  for (const mention of mentions) {
    if (mention.sessionId === undefined) continue;
    const key = sessionKey(mention.sessionId, mention.agent);
    if (byKey.has(key)) continue;
    const self = mention.agent === undefined && target.sessionId !== undefined && mention.sessionId === target.sessionId;
    const order = mention.agent === undefined ? dshOrder : allOrder;
    const session: MentionedSession = {
      sessionId: mention.sessionId,
      ...(mention.agent === undefined ? {} : { agent: mention.agent }),
      label: mention.label!,
      self,
      order: self ? -1 : order,
      overLimit: !self && order >= config.maxReferences,
      listed: false,
    };
    if (!self) {
      allOrder++;
      if (mention.agent === undefined) dshOrder++;
    }
    byKey.set(key, session);
    sessions.push(session);
    if (slices.due()) await slices.pause();
  }
  throwIfCancelled(signal);
  const readSurface: SurfaceReader =
    context.readSurface ?? ((sessionId, readSignal, agent) => context.sessions.readSurface(sessionId, readSignal, agent));
  const toRead = sessions.filter((session) => !session.self).slice(0, context.readLimit ?? Infinity);
  const [titles] = await Promise.all([
    listedTitles(context.sessions, new Set(byKey.keys()), signal),
    Promise.all(
      toRead.map(async (session) => {
        try {
          const read = session.agent === undefined ? readSurface(session.sessionId, signal) : readSurface(session.sessionId, signal, session.agent);
          const surface = await raceWithSignal(read, signal);
          session.read = { ok: true, surface };
        } catch (error) {
          throwIfCancelled(signal);
          session.read = { ok: false, error, notFound: isNotFound(error) };
        }
      }),
    ),
  ]);
  throwIfCancelled(signal);
  for (const session of sessions) {
    const key = sessionKey(session.sessionId, session.agent);
    if (titles.has(key)) {
      session.listed = true;
      const title = titles.get(key);
      if (title !== undefined) session.title = title;
    }
    if (slices.due()) await slices.pause();
  }
  await Promise.all(
    sessions.map(async (session) => {
      if (session.read?.ok === true) session.budget = await cachedFitBudget(session.read.surface, session.label, config.maxReferenceBytes, context.redactSecrets === true);
    }),
  );
  throwIfCancelled(signal);
  return { mentions, sessions, byKey, target, config, indexing: context.indexing };
}

/** Analyse an open document with the services' target (as `dshSession.prepare` with no target resolves it) and limits. */
export async function analyzeDocumentMentions(
  document: TextDocument,
  services: SessionServices,
  signal?: AbortSignal,
  readSurface?: SurfaceReader,
  scope: MentionScope = {},
  readLimit?: number,
): Promise<MentionAnalysis> {
  const config = services.resolver().config;
  const target = await services.resolveTarget(undefined, document.uri, signal);
  return analyzeMentions(document.getText(), {
    sessions: services.sessions,
    ...(scope.foreign === true ? { foreign: true } : {}),
    target,
    config,
    indexing: services.storeStatus().indexing,
    redactSecrets: services.settings().redactSecrets,
    ...(readSurface === undefined ? {} : { readSurface }),
    ...(readLimit === undefined ? {} : { readLimit }),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** The read-failure reason a user sees: what follows dsh's "failed to read referenced session: ". */
export function readFailureReason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
