import type { SessionReferenceCandidate, SessionReferenceTarget } from '@dsh-session-ls/shared';
import type { StoredSessionSummary } from './sessionStore';

/** A listed session's label: its latest title, else its id (a failed title read leaves no title). */
export function candidateLabel(summary: StoredSessionSummary): string {
  return typeof summary.title === 'string' ? summary.title : summary.id;
}

interface SearchKeys {
  id: string;
  cwd: string | undefined;
  title: string | undefined;
  lowerId: string;
  lowerCwd: string | undefined;
  lowerLabel: string;
}

// Candidate listing runs on every keystroke over possibly 100,000 sessions: the lower-cased fields are
// computed once per summary object, and re-computed only if that object's fields were changed in place.
const searchKeysCache = new WeakMap<StoredSessionSummary, SearchKeys>();

function searchKeys(summary: StoredSessionSummary): SearchKeys {
  const cached = searchKeysCache.get(summary);
  if (cached !== undefined && cached.id === summary.id && cached.cwd === summary.cwd && cached.title === summary.title) {
    return cached;
  }
  const keys: SearchKeys = {
    id: summary.id,
    cwd: summary.cwd,
    title: summary.title,
    lowerId: summary.id.toLocaleLowerCase(),
    lowerCwd: summary.cwd?.toLocaleLowerCase(),
    lowerLabel: candidateLabel(summary).toLocaleLowerCase(),
  };
  searchKeysCache.set(summary, keys);
  return keys;
}

/** dsh's query rule: id, cwd or label contains the query, `toLocaleLowerCase()` on both sides; bodies are never searched. */
function matchesQuery(summary: StoredSessionSummary, needle: string): boolean {
  if (needle === '') return true;
  const keys = searchKeys(summary);
  return keys.lowerId.includes(needle) || keys.lowerCwd?.includes(needle) === true || keys.lowerLabel.includes(needle);
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
 * With an unknown target cwd no affinity applies: pure store order.
 */
export function selectCandidates(
  sessions: readonly StoredSessionSummary[],
  target: SessionReferenceTarget | undefined,
  query: string,
  limit: number,
): SessionReferenceCandidate[] {
  const targetId = target?.sessionId;
  const targetCwd = target?.cwd;
  const ranked = typeof targetCwd === 'string';
  const needle = query.toLocaleLowerCase();
  // Three stable buckets (same cwd, no cwd, other); each needs at most `limit` entries.
  const buckets: StoredSessionSummary[][] = [[], [], []];
  for (const summary of sessions) {
    if (targetId !== undefined && summary.id === targetId) continue;
    if (!matchesQuery(summary, needle)) continue;
    const rank = !ranked ? 0 : summary.cwd === targetCwd ? 0 : summary.cwd === undefined ? 1 : 2;
    const bucket = buckets[rank]!;
    if (bucket.length < limit) bucket.push(summary);
    // Nothing later can outrank a full first bucket.
    if (buckets[0]!.length >= limit) break;
  }
  return buckets.flat().slice(0, limit).map(toCandidate);
}
