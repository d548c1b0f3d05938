/**
 * The persistent summary cache of another agent's store: the dsh store's cache file format and
 * mechanics (`../summaryCache.ts`: one line per file with its identity, a checksum trailer, atomic
 * chunked writes), one file per agent home in the same cache directory. A foreign listing row maps
 * onto the cached summary's header and title; a file that holds no session is cached as a header
 * problem, so a restart does not read it again either.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { StoredSessionSummary } from '../../resolver/sessionStore';
import type { CachedSummary } from '../summaryCache';
import type { FileIdentity } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';

/**
 * Bump when what a foreign summary holds (ids, cwds, titles, what counts as a session) changes:
 * part of the cache's root line, so an older cache is simply not ours.
 */
export const FOREIGN_CACHE_VERSION = 1;

/** What a cache file's head line names as its root (never a path the dsh store could use). */
export function foreignCacheRoot(agent: ForeignAgent, realHome: string): string {
  return `foreign-v${FOREIGN_CACHE_VERSION}:${agent}:${realHome}`;
}

const NO_SESSION = 'no session records';

/** A listing row (undefined: the file holds no session) as a cache entry. */
export function toCached(identity: FileIdentity, summary: StoredSessionSummary | undefined): CachedSummary {
  if (summary === undefined) return { identity, summary: { headerProblem: NO_SESSION, capturedThroughSeq: null, eventCount: 0 } };
  const cached: TranscriptSummary = {
    header: { id: summary.id, ...(summary.cwd === undefined ? {} : { cwd: summary.cwd }), createdAt: summary.createdAt },
    ...(summary.title === undefined ? {} : { title: summary.title }),
    capturedThroughSeq: null,
    eventCount: 0,
  };
  return { identity, summary: cached };
}

/** A cache entry as a listing row of `agent` (undefined: the file holds no session). */
export function fromCached(agent: ForeignAgent, cached: CachedSummary): StoredSessionSummary | undefined {
  const header = cached.summary.header;
  if (header === undefined) return undefined;
  const title = cached.summary.title;
  return { id: header.id, ...(header.cwd === undefined ? {} : { cwd: header.cwd }), createdAt: header.createdAt, ...(title === undefined ? {} : { title }), agent };
}
