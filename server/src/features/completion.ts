import {
  describeSessionsRootProblem,
  displaySafeLabel,
  displaySafeText,
  formatAge,
  formatSessionReferenceMention,
  type ForeignAgent,
  type SessionReferenceCandidate,
  type SessionsRootProblem,
} from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CompletionItemKind,
  InsertTextFormat,
  type CompletionItem,
  type CompletionList,
  type Position,
} from 'vscode-languageserver-types';
import { findSessionCompletionToken } from './completionToken';
import type { SessionServices } from './services';

/** What a session completion item carries for `completionItem/resolve`. */
export interface SessionCompletionData {
  kind: 'dsh-session';
  sessionId: string;
  label: string;
  cwd?: string;
  createdAt: number;
  /** Only for another agent's session. */
  agent?: ForeignAgent;
}

/** True when an item's `data` is a session item's. */
export function isSessionCompletionData(data: unknown): data is SessionCompletionData {
  const candidate = data as Partial<SessionCompletionData> | null | undefined;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.kind === 'dsh-session' &&
    typeof candidate.sessionId === 'string' &&
    typeof candidate.label === 'string' &&
    typeof candidate.createdAt === 'number'
  );
}

/** What the root-problem notice item carries (it has nothing to resolve). */
export interface RootProblemCompletionData {
  kind: 'dsh-root-problem';
  problem: SessionsRootProblem;
}

/**
 * The group letters of `sortText`: sessions are always `b`; files are `a` when they come first and `c`
 * when they follow the sessions (setting `fileMentions`). Clients sort by `sortText` before they filter.
 */
export type CompletionGroup = 'a' | 'b' | 'c';

/** The `sortText` of an item: its group letter, then its rank padded to 6 digits. */
export function completionSortText(group: CompletionGroup, rank: number): string {
  return group + String(rank).padStart(6, '0');
}

const EMPTY: CompletionList = { isIncomplete: false, items: [] };

/** The parts of a session's item that depend only on the candidate (not on the query, range or time). */
interface SessionItemParts {
  label: string;
  detail: string;
  newText: string;
  /** The `filterText` after the query: label, id and cwd. */
  filterRest: string;
  data: SessionCompletionData;
}

// The same sessions come back keystroke after keystroke; making their display-safe texts and mention once
// takes most of the item-building work off each request. Keyed by id, checked against label and cwd.
const partsBySession = new Map<string, { candidate: SessionReferenceCandidate; parts: SessionItemParts }>();
const PARTS_CACHE_LIMIT = 4096;

function itemParts(candidate: SessionReferenceCandidate): SessionItemParts {
  const key = candidate.agent === undefined ? candidate.sessionId : `\u0000${candidate.agent}\u0000${candidate.sessionId}`;
  const cached = partsBySession.get(key);
  if (cached !== undefined && cached.candidate.agent === candidate.agent && cached.candidate.label === candidate.label && cached.candidate.cwd === candidate.cwd && cached.candidate.createdAt === candidate.createdAt) {
    return cached.parts;
  }
  const label = displaySafeLabel(candidate.label, candidate.sessionId);
  const cwd = candidate.cwd === undefined ? undefined : displaySafeText(candidate.cwd);
  // The `@` is already in the document: clients that ignore the range (ALE, omnifuncs) would double it.
  // Another agent's session gets its own scheme; a dsh row exactly dsh's mention.
  const mention = formatSessionReferenceMention(
    candidate.agent === undefined ? { sessionId: candidate.sessionId, label } : { sessionId: candidate.sessionId, label, agent: candidate.agent },
  );
  const data: SessionCompletionData = Object.freeze({
    kind: 'dsh-session',
    sessionId: candidate.sessionId,
    label,
    ...(candidate.cwd === undefined ? {} : { cwd: candidate.cwd }),
    createdAt: candidate.createdAt,
    ...(candidate.agent === undefined ? {} : { agent: candidate.agent }),
  });
  const parts: SessionItemParts = {
    label,
    // Each item shows its agent: `[<agent>] /work/app`; dsh's items stay as they were.
    detail: (candidate.agent === undefined ? '' : `[${candidate.agent}] `) + (cwd ?? '(no cwd)'),
    newText: mention.slice(1),
    filterRest: cwd === undefined ? `${label} ${displaySafeText(candidate.sessionId)}` : `${label} ${displaySafeText(candidate.sessionId)} ${cwd}`,
    data,
  };
  if (partsBySession.size >= PARTS_CACHE_LIMIT) partsBySession.clear();
  partsBySession.set(key, { candidate, parts });
  return parts;
}

/** One candidate as an item whose edit turns the `@` token into `@` + the mention of the display-safe label. */
function sessionItem(
  candidate: SessionReferenceCandidate,
  rank: number,
  query: string,
  editRange: { start: Position; end: Position },
  now: number,
): CompletionItem {
  const parts = itemParts(candidate);
  return {
    label: parts.label,
    kind: CompletionItemKind.Reference,
    detail: parts.detail,
    labelDetails: { description: formatAge(candidate.createdAt, now) },
    textEdit: { range: editRange, newText: parts.newText },
    insertTextFormat: InsertTextFormat.PlainText,
    filterText: `${query} ${parts.filterRest}`,
    sortText: completionSortText('b', rank),
    data: parts.data,
  };
}

const ROOT_PROBLEM_LABELS: Record<SessionsRootProblem, string> = {
  missing: 'does not exist',
  'not-a-directory': 'is not a directory',
  inaccessible: 'cannot be read',
};

/**
 * The one item answered instead of an empty list when the sessions root is not read (docs/protocol.md,
 * Completion): it says why, and accepting it leaves the text as it was — its edit replaces what was typed
 * after the `@` up to the cursor with itself, so a client that ignores the range and replaces the word
 * before the cursor with `newText` changes nothing either.
 */
export function rootProblemItem(
  root: string,
  problem: SessionsRootProblem,
  query: string,
  typedRange: { start: Position; end: Position },
): CompletionItem {
  const shownRoot = displaySafeText(root);
  const label = `No dsh sessions: ${shownRoot} ${ROOT_PROBLEM_LABELS[problem]}`;
  const data: RootProblemCompletionData = { kind: 'dsh-root-problem', problem };
  return {
    label,
    kind: CompletionItemKind.Text,
    detail: describeSessionsRootProblem(root, problem),
    documentation:
      'The sessions root is the first of: initializationOptions.sessionsRoot, the dshSessions.sessionsRoot setting ' +
      '(in VS Code remote windows, a Remote or workspace setting: your local user setting is not read there), ' +
      '--sessions-root, $DSH_HOME/sessions, ~/.dsh/sessions. Accepting this item changes nothing.',
    textEdit: { range: typedRange, newText: query },
    insertTextFormat: InsertTextFormat.PlainText,
    // What was typed first, so every client's own filter keeps the item whatever the query.
    filterText: `${query} ${label}`,
    sortText: completionSortText('b', 0),
    data,
  };
}

/**
 * Session completion at `position` (lsp-contract.md, Completion): the candidates for the `@` token's
 * query, in the resolver's order; incomplete when cut at the limit or while the store is still indexing.
 */
export async function provideSessionCompletion(
  document: TextDocument,
  position: Position,
  services: SessionServices,
  signal?: AbortSignal,
): Promise<CompletionList> {
  const text = document.getText();
  const offset = document.offsetAt(position);
  const token = findSessionCompletionToken(text, offset);
  if (token === undefined) return EMPTY;
  const resolver = services.resolver();
  const limit = resolver.config.candidateLimit;
  const target = await services.resolveTarget(undefined, document.uri, signal);
  // One more than the limit tells whether the list was cut (a limit of MAX_SAFE_INTEGER never is).
  const probe = limit < Number.MAX_SAFE_INTEGER ? limit + 1 : limit;
  const candidates = await resolver.listCandidates(target, token.query, probe, signal);
  const editRange = { start: document.positionAt(token.at + 1), end: document.positionAt(token.end) };
  const now = services.now();
  const status = services.storeStatus();
  if (candidates.length === 0 && status.rootProblem !== undefined) {
    // Say why the list is empty; incomplete, so the client asks again and sees the sessions once the root is read.
    const typedRange = { start: document.positionAt(token.at + 1), end: document.positionAt(offset) };
    return { isIncomplete: true, items: [rootProblemItem(services.settings().sessionsRoot, status.rootProblem, token.query, typedRange)] };
  }
  const items = candidates
    .slice(0, limit)
    .map((candidate, rank) => sessionItem(candidate, rank, token.query, editRange, now));
  return { isIncomplete: candidates.length > limit || status.indexing, items };
}
