import type { SessionReferenceCandidate, SessionReferenceTarget } from '@dsh-session-ls/shared';
import type { StoredSessionSummary } from './sessionStore';

/** A listed session's label: its latest title, else its id (a failed title read leaves no title). */
export function candidateLabel(summary: StoredSessionSummary): string {
  return typeof summary.title === 'string' ? summary.title : summary.id;
}

interface SearchKeys {
  summary: StoredSessionSummary;
  id: string;
  cwd: string | undefined;
  title: string | undefined;
  /** The lower-cased id, cwd and label joined by NUL: one `includes` answers for all three. */
  haystack: string;
  lowerId: string;
  lowerCwd: string | undefined;
  lowerLabel: string;
}

const FIELD_SEPARATOR = '\u0000';

// Candidate listing runs on every keystroke over possibly 100,000 sessions, so lower-casing happens once:
// keys are cached per summary object (a store that changes one session keeps the other objects), and per
// listing array, whose index lookup is much cheaper than 100,000 WeakMap lookups when the store returns
// the same array again. A summary changed in place is noticed and re-keyed.
const keysBySummary = new WeakMap<StoredSessionSummary, SearchKeys>();
const keysByListing = new WeakMap<readonly StoredSessionSummary[], Array<SearchKeys | undefined>>();

const isCurrent = (keys: SearchKeys | undefined, summary: StoredSessionSummary): keys is SearchKeys =>
  keys !== undefined && keys.summary === summary && keys.id === summary.id && keys.cwd === summary.cwd && keys.title === summary.title;

function searchKeys(summary: StoredSessionSummary): SearchKeys {
  const cached = keysBySummary.get(summary);
  if (isCurrent(cached, summary)) return cached;
  const lowerId = summary.id.toLocaleLowerCase();
  const lowerCwd = summary.cwd?.toLocaleLowerCase();
  const lowerLabel = candidateLabel(summary).toLocaleLowerCase();
  const keys: SearchKeys = {
    summary,
    id: summary.id,
    cwd: summary.cwd,
    title: summary.title,
    haystack: [lowerId, lowerCwd ?? '', lowerLabel].join(FIELD_SEPARATOR),
    lowerId,
    lowerCwd,
    lowerLabel,
  };
  keysBySummary.set(summary, keys);
  return keys;
}

/**
 * dsh's query rule as a predicate over the listing's positions: id, cwd or label contains the query,
 * `toLocaleLowerCase()` on both sides, no trimming; message bodies are never searched.
 */
function queryMatcher(sessions: readonly StoredSessionSummary[], query: string): (index: number) => boolean {
  const needle = query.toLocaleLowerCase();
  if (needle === '') return () => true;
  let listingKeys = keysByListing.get(sessions);
  if (listingKeys === undefined) {
    listingKeys = new Array<SearchKeys | undefined>(sessions.length);
    keysByListing.set(sessions, listingKeys);
  }
  const keysAt = listingKeys;
  // A needle without NUL can only match the joined haystack inside one field.
  const spansFields = needle.includes(FIELD_SEPARATOR);
  return (index) => {
    const summary = sessions[index]!;
    let keys = keysAt[index];
    if (!isCurrent(keys, summary)) keys = keysAt[index] = searchKeys(summary);
    if (!spansFields) return keys.haystack.includes(needle);
    return keys.lowerId.includes(needle) || keys.lowerCwd?.includes(needle) === true || keys.lowerLabel.includes(needle);
  };
}

/** The row a client sees: exactly `sessionId, label, cwd?, createdAt`, `cwd` absent when unknown. */
export function toCandidate(summary: StoredSessionSummary): SessionReferenceCandidate {
  const label = candidateLabel(summary);
  return summary.cwd === undefined
    ? { sessionId: summary.id, label, createdAt: summary.createdAt }
    : { sessionId: summary.id, label, cwd: summary.cwd, createdAt: summary.createdAt };
}

/**
 * Select candidates from the store's listing (session-reference.md §6 steps 2–6): drop the target, keep
 * query matches, rank same cwd, then no cwd, then the rest (stable, store order), cut to `limit`.
 * As in dsh, sessions without a cwd still come before the others when the target cwd is unknown
 * (nothing is "same" then); dsh compatibility wins over a prettier order.
 */
export function selectCandidates(
  sessions: readonly StoredSessionSummary[],
  target: SessionReferenceTarget | undefined,
  query: string,
  limit: number,
): SessionReferenceCandidate[] {
  const targetId = target?.sessionId;
  const targetCwd = target?.cwd;
  const matches = queryMatcher(sessions, query);
  // Three stable buckets (same cwd, no cwd, other); each needs at most `limit` entries.
  const buckets: StoredSessionSummary[][] = [[], [], []];
  for (let index = 0; index < sessions.length; index++) {
    const summary = sessions[index]!;
    if (targetId !== undefined && summary.id === targetId) continue;
    if (!matches(index)) continue;
    const rank = targetCwd !== undefined && summary.cwd === targetCwd ? 0 : summary.cwd === undefined ? 1 : 2;
    const bucket = buckets[rank]!;
    if (bucket.length < limit) bucket.push(summary);
    // Nothing later can outrank a full first bucket.
    if (buckets[0]!.length >= limit) break;
  }
  return buckets.flat().slice(0, limit).map(toCandidate);
}
