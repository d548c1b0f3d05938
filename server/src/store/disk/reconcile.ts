/**
 * Reconciliation: applies what discovery found in a part of the root to the attached root's
 * index, known directories and discovery problems (the scanner's {@link RootContents}), and
 * returns what that changed. It emits nothing and schedules nothing; the scanner reports the change.
 */
import type { DiscoveryResult } from '../discovery';
import { inScope, projectKeyOf, type DiscoveryScope } from '../layoutScopes';
import type { CachedSummary } from '../summaryCache';
import type { RootContents } from './state';

/** Long synchronous loops (a root scope at 100,000 sessions) give the event loop a turn this often. */
const ITEMS_PER_SLICE = 2048;

/** Lets answers and I/O callbacks run between slices of a long loop. */
function nextSlice(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What applying a discovery result changed. */
export interface Reconciled {
  /** The listing may differ (transcripts or problems came or went). */
  listingChanged: boolean;
  /** Transcripts left the index. */
  removed: boolean;
  /** The known directories changed: the watches may follow. */
  directoriesChanged: boolean;
}

/** Replaces the problems `replaced` selects by `found`; whether any differs. */
function replaceProblems(attached: RootContents, replaced: (key: string) => boolean, found: DiscoveryResult['problems']): boolean {
  const before = new Map<string, string>();
  for (const [key, problem] of attached.discoveryProblems) if (replaced(key)) before.set(key, problem.reason);
  for (const key of before.keys()) attached.discoveryProblems.delete(key);
  for (const problem of found) attached.discoveryProblems.set(problem.key, problem);
  return before.size !== found.length || found.some((p) => before.get(p.key) !== p.reason);
}

/**
 * Applies the root's own level (the base's folders and the project folders in it): forgets what
 * lay in project folders that are gone (or are no longer real directories) and records the
 * skipped entries of that level. `baseDepth`: how many segments the layout's base has.
 */
export function applyRootLevel(attached: RootContents, found: DiscoveryResult, baseDepth = 0): Reconciled {
  const projects = new Set(found.directories);
  // Problems of that level are replaced; deeper ones go with their project folder.
  let listingChanged = replaceProblems(
    attached,
    (key) => {
      const project = projectKeyOf(key, baseDepth);
      return project === key || !projects.has(project);
    },
    found.problems,
  );
  let directoriesChanged = false;
  for (const project of attached.directories.projects()) {
    if (projects.has(project)) continue;
    for (const dir of attached.directories.inScope({ kind: 'dir', dir: project })) attached.directories.delete(dir);
    directoriesChanged = true;
  }
  for (const project of projects) if (attached.directories.add(project)) directoriesChanged = true;
  let removed = false;
  for (const project of attached.index.projects()) {
    if (projects.has(project)) continue;
    for (const key of attached.index.keysIn({ kind: 'dir', dir: project })) attached.index.delete(key);
    removed = listingChanged = true;
  }
  return { listingChanged, removed, directoriesChanged };
}

/**
 * Applies a folder or file scope: its problems and directories are replaced, transcripts
 * no longer there leave the index, new ones enter it (with their cached summary, if `cached`
 * has one). Only the scope's own keys are visited: a session folder's event costs no full pass.
 */
export async function applyScope(
  attached: RootContents,
  scope: DiscoveryScope,
  found: DiscoveryResult,
  cached: (key: string) => CachedSummary | undefined,
): Promise<Reconciled> {
  let listingChanged = replaceProblems(attached, (key) => inScope(key, scope), found.problems);
  const before = attached.directories.inScope(scope);
  for (const dir of before) attached.directories.delete(dir);
  for (const dir of found.directories) attached.directories.add(dir);
  const directoriesChanged = before.length !== found.directories.length || before.some((dir) => !attached.directories.has(dir));
  const foundKeys = new Set(found.transcripts.map((t) => t.key));
  let visited = 0;
  let removed = false;
  for (const key of attached.index.keysIn(scope)) {
    if (!foundKeys.has(key)) {
      attached.index.delete(key);
      removed = listingChanged = true;
    }
    if (++visited % ITEMS_PER_SLICE === 0) await nextSlice();
  }
  for (const location of found.transcripts) {
    if (++visited % ITEMS_PER_SLICE === 0) await nextSlice();
    if (!attached.index.add(location)) continue;
    listingChanged = true;
    const summary = cached(location.key);
    if (summary) attached.index.adopt(location.key, summary.identity, summary.summary, summary.resume);
  }
  return { listingChanged, removed, directoriesChanged };
}
