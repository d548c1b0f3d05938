/**
 * The listing: which indexed transcripts are served, in store order, and which are skipped
 * for header-level damage that only shows across entries (both encodings, ambiguous ids).
 */
import type { StoredSessionSummary } from '../resolver/sessionStore';
import { compareStoreOrder } from '../resolver/storeOrder';
import type { DiscoveryProblem } from './discovery';
import type { IndexedTranscript } from './transcriptIndex';

/** Problem wording for damage seen across entries. */
export const LISTING_REASONS = {
  bothEncodings: 'session directory holds both session.jsonl and session.jsonl.zstd',
  ambiguous: (count: number) => `session id is ambiguous: its directory is in ${count} project directories`,
} as const;

/** The served sessions and the entries skipped while building them. */
export interface Listing {
  sessions: readonly StoredSessionSummary[];
  problems: DiscoveryProblem[];
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * Builds the listing from summarized transcripts (unsummarized ones are not listed yet). The
 * same session directory name in two project directories makes every copy ambiguous, as
 * lookup by id would find both.
 */
export function buildListing(transcripts: Iterable<IndexedTranscript>): Listing {
  const problems: DiscoveryProblem[] = [];
  const candidates: IndexedTranscript[] = [];
  const all = [...transcripts];
  for (const group of groupBy(all, (t) => `${t.location.projectDir}/${t.location.sessionDir}`).values()) {
    if (group.length > 1) {
      for (const t of group) problems.push({ key: t.location.key, reason: LISTING_REASONS.bothEncodings });
    } else {
      candidates.push(group[0]);
    }
  }
  const sessions: StoredSessionSummary[] = [];
  for (const group of groupBy(candidates, (t) => t.location.sessionDir).values()) {
    if (group.length > 1) {
      for (const t of group) problems.push({ key: t.location.key, reason: LISTING_REASONS.ambiguous(group.length) });
      continue;
    }
    const { summary, location } = group[0];
    if (!summary) continue;
    if (summary.headerProblem !== undefined || !summary.header) {
      problems.push({ key: location.key, reason: summary.headerProblem ?? 'no header' });
      continue;
    }
    const session: StoredSessionSummary = { id: summary.header.id, createdAt: summary.header.createdAt };
    if (summary.header.cwd !== undefined) session.cwd = summary.header.cwd;
    if (summary.title !== undefined) session.title = summary.title;
    sessions.push(Object.freeze(session));
  }
  sessions.sort(compareStoreOrder);
  return { sessions: Object.freeze(sessions), problems };
}
