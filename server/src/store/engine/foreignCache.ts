/**
 * The persistent summary cache of another agent's store: the dsh store's cache file format and
 * mechanics (`../summaryCache.ts`: one line per file with its identity, a checksum trailer, atomic
 * chunked writes), one file per agent home in the same cache directory. A home's entries are
 * already the cached summaries (`foreignFormat.ts`): a session as the header and title, a file that
 * holds no session as a header problem, so a restart does not read it again either.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';

/**
 * Bump when what a foreign summary holds (ids, cwds, titles, what counts as a session) changes:
 * part of the cache's root line, so an older cache is simply not ours.
 */
export const FOREIGN_CACHE_VERSION = 1;

/** What a cache file's head line names as its root (never a path the dsh store could use). */
export function foreignCacheRoot(agent: ForeignAgent, realHome: string): string {
  return `foreign-v${FOREIGN_CACHE_VERSION}:${agent}:${realHome}`;
}
