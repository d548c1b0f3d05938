/**
 * The listing: which indexed transcripts are served, in store order, and which are skipped
 * for header-level damage that only shows across entries (both encodings, ambiguous ids).
 */
import type { StoredSessionSummary } from '../resolver/sessionStore';
import { compareStoreOrder } from '../resolver/storeOrder';
import type { DiscoveryProblem, TranscriptLocation } from './discovery';
import { LISTING_REASONS } from './layout';
import type { FileIdentity } from './transcriptFiles';
import type { TranscriptSummary } from './transcriptSummary';

/** One indexed transcript (the transcript index, `transcriptIndex.ts`, keeps them), as the listing reads it. */
export interface IndexedTranscript {
  location: TranscriptLocation;
  /** The file version `summary` describes. */
  identity?: FileIdentity;
  summary?: TranscriptSummary;
  /**
   * The last read failed (`summary` says why): the failure is no fact about the file (a
   * permission, a transient I/O error), so it is never cached and every refresh tries again.
   */
  readFailed?: boolean;
}

/** The served sessions and the entries skipped while building them. */
export interface Listing {
  sessions: readonly StoredSessionSummary[];
  problems: DiscoveryProblem[];
}

/**
 * Transcripts grouped by session directory name, keyed by the location's own string (its hash
 * is computed once and kept, so a rebuild hashes nothing new) and without an array for the
 * usual single transcript: a 100,000-session rebuild otherwise spends most of its time here.
 */
function bySessionDir(transcripts: Iterable<IndexedTranscript>): Map<string, IndexedTranscript | IndexedTranscript[]> {
  const groups = new Map<string, IndexedTranscript | IndexedTranscript[]>();
  for (const t of transcripts) {
    const dir = t.location.sessionDir;
    const group = groups.get(dir);
    if (group === undefined) groups.set(dir, t);
    else if (Array.isArray(group)) group.push(t);
    else groups.set(dir, [group, t]);
  }
  return groups;
}

/** The listed form of a transcript whose header derives its path. */
function listedSession(header: NonNullable<TranscriptSummary['header']>, title: string | undefined): StoredSessionSummary {
  const { id, createdAt, cwd } = header;
  // One literal per shape: properties added after creation would go to a separate property
  // array (40 more bytes for each of 100,000 sessions, in every listing).
  let session: StoredSessionSummary;
  if (cwd !== undefined) session = title !== undefined ? { id, createdAt, cwd, title } : { id, createdAt, cwd };
  else session = title !== undefined ? { id, createdAt, title } : { id, createdAt };
  return Object.freeze(session);
}

/**
 * Builds the listing from summarized transcripts (unsummarized ones are not listed yet). The
 * same session directory name in two project directories makes every copy ambiguous, as
 * lookup by id would find both.
 */
export function buildListing(transcripts: Iterable<IndexedTranscript>): Listing {
  const bothEncodings: DiscoveryProblem[] = [];
  const problems: DiscoveryProblem[] = [];
  const sessions: StoredSessionSummary[] = [];
  for (const group of bySessionDir(transcripts).values()) {
    let candidates: IndexedTranscript[];
    if (!Array.isArray(group)) {
      candidates = [group];
    } else {
      // Two transcripts in one project directory's session directory: both encodings.
      const perProject = new Map<string, IndexedTranscript[]>();
      for (const t of group) {
        const same = perProject.get(t.location.projectDir);
        if (same) same.push(t);
        else perProject.set(t.location.projectDir, [t]);
      }
      candidates = [];
      for (const same of perProject.values()) {
        if (same.length === 1) candidates.push(same[0]);
        else for (const t of same) bothEncodings.push({ key: t.location.key, reason: LISTING_REASONS.bothEncodings });
      }
    }
    if (candidates.length > 1) {
      for (const t of candidates) problems.push({ key: t.location.key, reason: LISTING_REASONS.ambiguous(candidates.length) });
      continue;
    }
    if (candidates.length === 0) continue;
    const { summary, location } = candidates[0];
    if (!summary) continue;
    if (summary.headerProblem !== undefined || !summary.header) {
      problems.push({ key: location.key, reason: summary.headerProblem ?? 'no header' });
      continue;
    }
    sessions.push(listedSession(summary.header, summary.title));
  }
  sessions.sort(compareStoreOrder);
  return { sessions: Object.freeze(sessions), problems: [...bothEncodings, ...problems] };
}

/** Where a session with this header sits in a store-ordered listing, or -1. */
function positionOf(sessions: readonly StoredSessionSummary[], header: { id: string; createdAt: number }): number {
  let low = 0;
  let high = sessions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareStoreOrder(sessions[middle], header) < 0) low = middle + 1;
    else high = middle;
  }
  return sessions[low]?.id === header.id ? low : -1;
}

/**
 * The listing after some already listed transcripts were re-read, without a rebuild: when each
 * still has the same header and no header-level problem, only its title can have changed, and
 * its place in store order is found by binary search. Undefined when anything else changed
 * (the caller rebuilds). The usual change, the session in use getting a title, then costs
 * microseconds instead of a rebuild of every session.
 */
export function patchListing(listing: Listing, changed: Iterable<IndexedTranscript>): Listing | undefined {
  let sessions: StoredSessionSummary[] | undefined;
  for (const { summary } of changed) {
    if (!summary?.header || summary.headerProblem !== undefined) return undefined;
    const at = positionOf(sessions ?? listing.sessions, summary.header);
    if (at === -1) return undefined;
    const before = (sessions ?? listing.sessions)[at];
    if (before.createdAt !== summary.header.createdAt || before.cwd !== summary.header.cwd) return undefined;
    if (before.title === summary.title) continue;
    sessions ??= [...listing.sessions];
    sessions[at] = listedSession(summary.header, summary.title);
  }
  if (!sessions) return listing;
  return { sessions: Object.freeze(sessions), problems: listing.problems };
}
