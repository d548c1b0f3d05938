/**
 * Discovery: which transcripts a sessions root holds (dsh-session-store.md §1.4), never
 * following a symbolic link below the root. Header-level checks happen later, in the index.
 * Which files are sessions, which names a session folder is looked up by and which stray files
 * are reported the format's layout says (`formats/adapter.ts`, dsh's by default); the walk is of
 * a layout whose base is the root, with project and session folders (`leafDepth` 2), each
 * session folder looked up by the layout's `sessionFileNames`.
 */
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import { storeWorkSlices } from './concurrency';
import { nodeDirectoryFiles, type DirectoryFiles } from './directoryFiles';
import type { SessionLayout } from './formats/adapter';
import { dshLayout, FLAT_LAYOUT_REASON } from './formats/dshLayout';
import { quickSync } from './quickSync';
import { fileIdentity, type FileIdentity } from './transcriptFiles';
import type { StoreProblem } from './service';

/** A transcript file found in `<root>/<projectDir>/<sessionDir>/`. */
export interface TranscriptLocation {
  /** Root-relative key, always with `/` separators: `<projectDir>/<sessionDir>/<file>`. */
  key: string;
  projectDir: string;
  sessionDir: string;
}

/** What one part of the root holds: transcripts to index and entries skipped at this level. */
export interface DiscoveryResult {
  transcripts: TranscriptLocation[];
  /**
   * What discovery's own `lstat` of a transcript saw (a transcript is looked up by name), by key:
   * the first refresh after it compares that instead of looking again.
   */
  seen: Map<string, FileIdentity>;
  /** Skipped entries, keyed by root-relative path like transcripts. */
  problems: DiscoveryProblem[];
  /** Real project directories (`<projectDir>`) and session directories (`<projectDir>/<sessionDir>`), to watch. */
  directories: string[];
}

/** A skipped entry found by discovery; `key` is root-relative. */
export interface DiscoveryProblem {
  key: string;
  reason: string;
}

/** Which part of the root to look at: all of it, one project directory, or one session directory. */
export type DiscoveryScope =
  | { kind: 'root' }
  | { kind: 'project'; projectDir: string }
  | { kind: 'session'; projectDir: string; sessionDir: string };

/** The root-relative key prefix every entry inside a scope starts with. */
export function scopePrefix(scope: DiscoveryScope): string {
  if (scope.kind === 'root') return '';
  if (scope.kind === 'project') return `${scope.projectDir}/`;
  return `${scope.projectDir}/${scope.sessionDir}/`;
}

/** The session-directory scope a transcript key (`<projectDir>/<sessionDir>/<file>`) lies in. */
export function sessionScopeOf(key: string): DiscoveryScope {
  const [projectDir, sessionDir] = key.split('/');
  return { kind: 'session', projectDir, sessionDir };
}

/**
 * What to re-read after a watch on root-relative directory `dir` saw entry `name` change
 * (`name` unknown: the whole directory).
 */
export function scopeOfChange(dir: string, name: string | undefined): DiscoveryScope {
  if (dir === '') return name === undefined ? { kind: 'root' } : { kind: 'project', projectDir: name };
  const [projectDir, sessionDir] = dir.split('/');
  if (sessionDir !== undefined) return { kind: 'session', projectDir, sessionDir };
  return name === undefined ? { kind: 'project', projectDir } : { kind: 'session', projectDir, sessionDir: name };
}

/** Whether a root-relative key lies inside a scope (the scope's own directory included). */
export function inScope(key: string, scope: DiscoveryScope): boolean {
  const prefix = scopePrefix(scope);
  return prefix === '' || key.startsWith(prefix) || key === prefix.slice(0, -1);
}

/** Problem reasons, worded once. */
export const DISCOVERY_REASONS = {
  symlink: 'symbolic link not followed (a sessions root is read without following links below it)',
  flat: FLAT_LAYOUT_REASON,
} as const;

/**
 * The absolute path of a root-relative key: `path.join(root, ...key.split('/'))`, built by
 * concatenation. A key's segments are names a directory listing gave (never empty, `.` or `..`,
 * never holding a separator), so there is nothing to normalize below the root. The sweep and
 * discovery build one per transcript.
 */
export function keyPath(root: string, key: string): string {
  if (key === '') return path.normalize(root);
  const relative = path.sep === '/' ? key : key.split('/').join(path.sep);
  return root.endsWith(path.sep) ? root + relative : root + path.sep + relative;
}

/** An absolute-path problem, as the store reports it. */
export function toStoreProblem(root: string, problem: DiscoveryProblem): StoreProblem {
  return { path: keyPath(root, problem.key), reason: problem.reason };
}

interface Found {
  /** Path relative to the scope's base directory, `/`-separated. */
  rel: string;
  kind: 'dir' | 'file' | 'symlink' | 'other';
  /** A regular file's identity, when it was looked up by name. */
  identity?: FileIdentity;
}

/** Directory reads in flight during a scan: a directory read mostly waits, and a root holds 100,000 session directories. */
const DIRECTORY_READS_IN_FLIGHT = 32;

/** One entry of a directory, by name. */
export interface NamedEntry {
  name: string;
  kind: Found['kind'];
  identity?: FileIdentity;
}

/**
 * Directory entries looked up before discovery needs them (see lookups/earlyLookups.ts), each
 * handed out once. `rel` is relative to the walk's base directory (`''`: the base itself); the
 * entries of a directory at the walk's last level are those of its leaf names that exist.
 * Undefined where nothing was looked up: discovery then looks itself.
 */
export interface PrefetchedEntries {
  take(rel: string): NamedEntry[] | undefined;
}

function kindOf(entry: Dirent | Stats): Found['kind'] {
  return entry.isSymbolicLink() ? 'symlink' : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
}

/** A directory's entries; none when it cannot be read (gone, not a directory, no permission). Synchronous while that is quick. */
function readEntries(files: DirectoryFiles, dir: string): NamedEntry[] | Promise<NamedEntry[]> {
  if (files.readdirSync === undefined || !quickSync.quick) return readEntriesLater(files, dir);
  try {
    return namedOf(quickSync.call(() => files.readdirSync!(dir)));
  } catch {
    return [];
  }
}

async function readEntriesLater(files: DirectoryFiles, dir: string): Promise<NamedEntry[]> {
  try {
    return namedOf(await files.readdir(dir));
  } catch {
    return [];
  }
}

function namedOf(dirents: Dirent[]): NamedEntry[] {
  return dirents.map((dirent) => ({ name: dirent.name, kind: kindOf(dirent), identity: undefined }));
}

/**
 * The entries of `dir` named in `names` that exist, each looked up by its name: a session
 * directory is read only for its transcript, and two `lstat`s cost less than half of listing it.
 * A name that cannot be looked up (no permission, `dir` gone or not a directory) is left out.
 * `names` are plain file names, so each path is `dir`, a separator and the name. Synchronous
 * while lookups are quick and the store's time slice lasts; the rest, if any, later.
 */
function namedEntries(files: DirectoryFiles, dir: string, names: readonly string[]): NamedEntry[] | Promise<NamedEntry[]> {
  const found: NamedEntry[] = [];
  for (let i = 0; i < names.length; i++) {
    if (storeWorkSlices.due) return namedEntriesLater(files, dir, names, i, found);
    const entry = lstatEntryNow(files, dir + path.sep + names[i]);
    if (entry === LATER) return namedEntriesLater(files, dir, names, i, found);
    if (entry !== undefined) found.push({ name: names[i]!, kind: entry.kind, identity: entry.identity });
  }
  return found;
}

/** {@link namedEntries} from `names[from]` on, adding to `found`. */
async function namedEntriesLater(files: DirectoryFiles, dir: string, names: readonly string[], from: number, found: NamedEntry[]): Promise<NamedEntry[]> {
  for (let i = from; i < names.length; i++) {
    // Looked up synchronously while that is quick, 32 directories at once: answers run between slices.
    while (storeWorkSlices.due) await storeWorkSlices.pause();
    const entry = await lstatEntry(files, dir + path.sep + names[i]);
    if (entry !== undefined) found.push({ name: names[i]!, kind: entry.kind, identity: entry.identity });
  }
  return found;
}

/**
 * Every entry below `base` down to `maxDepth` levels (at the last level only those named in
 * `leafNames`, looked up by name), descending only into real directories: symbolic links are
 * reported as such and never followed. Streamed in batches (the entries of the directories read
 * since the last batch), deepest directories first, so a root of 100,000 sessions never holds all
 * its directory entries at once; entries come in no particular order. A directory `prefetched`
 * holds is taken from it instead of the disk.
 */
async function* walkEntries(files: DirectoryFiles, base: string, maxDepth: number, leafNames?: readonly string[], prefetched?: PrefetchedEntries): AsyncGenerator<Found[]> {
  const toRead: DirectoryToRead[] = [{ rel: '', depth: 0 }];
  const read: DirectoryRead[] = [];
  let reading = 0;
  let wake: (() => void) | undefined;
  for (;;) {
    while (reading < DIRECTORY_READS_IN_FLIGHT && toRead.length > 0) {
      const dir = toRead.pop() as DirectoryToRead;
      let entries: NamedEntry[] | Promise<NamedEntry[]> | undefined = prefetched?.take(dir.rel);
      if (entries === undefined) {
        // `rel` is names a listing gave, joined by `/` (see keyPath).
        const dirPath = dir.rel === '' ? base : keyPath(base, dir.rel);
        entries = leafNames !== undefined && dir.depth + 1 === maxDepth ? namedEntries(files, dirPath, leafNames) : readEntries(files, dirPath);
      }
      if (Array.isArray(entries)) {
        read.push({ rel: dir.rel, depth: dir.depth, entries });
        continue;
      }
      reading++;
      void entries.then((entries) => {
        reading--;
        read.push({ rel: dir.rel, depth: dir.depth, entries });
        wake?.();
      });
    }
    if (read.length === 0) {
      if (reading === 0) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      continue;
    }
    // Every directory read by now, in one batch: a directory read synchronously holds one or two entries.
    const batch: Found[] = [];
    while (read.length > 0) {
      const { rel, depth, entries } = read.pop() as DirectoryRead;
      const below = depth + 1;
      for (const { name, kind, identity } of entries) {
        const entry: Found = { rel: rel === '' ? name : `${rel}/${name}`, kind, identity };
        if (entry.kind === 'dir' && below < maxDepth) toRead.push({ rel: entry.rel, depth: below });
        batch.push(entry);
      }
    }
    if (batch.length > 0) yield batch;
  }
}

interface DirectoryToRead {
  rel: string;
  depth: number;
}

interface DirectoryRead extends DirectoryToRead {
  entries: NamedEntry[];
}

/** The same entries with their path made relative to the root (the walk's own objects, changed in place). */
async function* underProject(projectDir: string, batches: AsyncIterable<Found[]>): AsyncGenerator<Found[]> {
  for await (const batch of batches) {
    for (const entry of batch) entry.rel = `${projectDir}/${entry.rel}`;
    yield batch;
  }
}

/** What `file` is, not following a link; 'missing' when it cannot be looked up (gone, no permission). */
async function lstatKind(files: DirectoryFiles, file: string): Promise<Found['kind'] | 'missing'> {
  return (await lstatEntry(files, file))?.kind ?? 'missing';
}

/** {@link lstatEntry}'s answer made synchronously, or {@link LATER} when the call must go through the thread pool. */
const LATER = Symbol('later');

function lstatEntryNow(files: DirectoryFiles, file: string): Omit<NamedEntry, 'name'> | undefined | typeof LATER {
  if (files.lstatSync === undefined || !quickSync.quick) return LATER;
  try {
    return entryOf(quickSync.call(() => files.lstatSync!(file)));
  } catch {
    return undefined;
  }
}

function entryOf(stats: Stats | undefined): Omit<NamedEntry, 'name'> | undefined {
  if (stats === undefined) return undefined;
  const kind = kindOf(stats);
  return kind === 'file' ? { kind, identity: fileIdentity(stats) } : { kind };
}

/** What `file` is, not following a link, and a regular file's identity; undefined when it cannot be looked up. */
async function lstatEntry(files: DirectoryFiles, file: string): Promise<Omit<NamedEntry, 'name'> | undefined> {
  const now = lstatEntryNow(files, file);
  if (now !== LATER) return now;
  try {
    return entryOf(await files.lstat(file));
  } catch {
    return undefined;
  }
}

/** Whether a symbolic link would lead to a directory (only then is it a skipped project/session directory). */
async function pointsToDirectory(files: DirectoryFiles, file: string): Promise<boolean> {
  try {
    return (await files.stat(file)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Classifies entries by depth below the root: depth 1 = project directories, 2 = session
 * directories (or flat files), 3 = transcripts.
 */
async function classify(
  files: DirectoryFiles,
  root: string,
  relToRoot: Iterable<Found[]> | AsyncIterable<Found[]>,
  result: DiscoveryResult,
  layout: SessionLayout,
): Promise<void> {
  for await (const batch of relToRoot) {
    for (const entry of batch) {
      // A root holds hundreds of thousands of entries, each looked up synchronously: let answers run between slices.
      while (storeWorkSlices.due) await storeWorkSlices.pause();
      const rel = entry.rel;
      const first = rel.indexOf('/');
      const second = first === -1 ? -1 : rel.indexOf('/', first + 1);
      const depth = first === -1 ? 1 : second === -1 ? 2 : rel.indexOf('/', second + 1) === -1 ? 3 : 4;
      if (entry.kind === 'dir' && depth <= 2) result.directories.push(rel);
      if (depth === 1) {
        // Non-directories in the root are ignored; a link to a directory would be a project directory.
        if (entry.kind === 'symlink' && (await pointsToDirectory(files, keyPath(root, rel)))) {
          result.problems.push({ key: rel, reason: DISCOVERY_REASONS.symlink });
        }
      } else if (depth === 2) {
        const stray = entry.kind === 'file' || entry.kind === 'symlink' ? layout.strayFileProblem?.(rel.slice(first + 1)) : undefined;
        if (stray !== undefined) {
          result.problems.push({ key: rel, reason: stray });
        } else if (entry.kind === 'symlink' && (await pointsToDirectory(files, keyPath(root, rel)))) {
          result.problems.push({ key: rel, reason: DISCOVERY_REASONS.symlink });
        }
      } else if (depth === 3) {
        if (!layout.isSessionFile(rel.slice(second + 1))) continue;
        if (entry.kind === 'symlink') {
          result.problems.push({ key: rel, reason: DISCOVERY_REASONS.symlink });
        } else if (entry.kind === 'file') {
          result.transcripts.push({ key: rel, projectDir: rel.slice(0, first), sessionDir: rel.slice(first + 1, second) });
          if (entry.identity !== undefined) result.seen.set(rel, entry.identity);
        }
      }
    }
  }
}


/**
 * The root's own level: its real project directories (in `directories`) and the skipped
 * entries directly in it. A root scan then discovers one project directory at a time, so the
 * discovery of a 100,000-session root never exists at once.
 */
export async function discoverRootLevel(root: string, files: DirectoryFiles = nodeDirectoryFiles, layout: SessionLayout = dshLayout): Promise<DiscoveryResult> {
  const result: DiscoveryResult = { transcripts: [], seen: new Map(), problems: [], directories: [] };
  await classify(files, root, walkEntries(files, root, 1), result, layout);
  return result;
}

/**
 * Discovers the transcripts and skipped entries within a scope of a (real, resolved) root.
 * A missing scope yields nothing; I/O errors below the root are tolerated. `prefetched`: a
 * project scope's entries, looked up before (relative to the project directory).
 */
export async function discover(
  root: string,
  scope: DiscoveryScope,
  files: DirectoryFiles = nodeDirectoryFiles,
  prefetched?: PrefetchedEntries,
  layout: SessionLayout = dshLayout,
): Promise<DiscoveryResult> {
  const result: DiscoveryResult = { transcripts: [], seen: new Map(), problems: [], directories: [] };
  const leafNames = layout.sessionFileNames;
  if (scope.kind === 'root') {
    await classify(files, root, walkEntries(files, root, 3, leafNames), result, layout);
    return result;
  }
  const projectPath = keyPath(root, scope.projectDir);
  if (scope.kind === 'project') {
    const kind = await lstatKind(files, projectPath);
    if (kind === 'symlink') {
      await classify(files, root, [[{ rel: scope.projectDir, kind }]], result, layout);
    } else if (kind === 'dir') {
      result.directories.push(scope.projectDir);
      const found = walkEntries(files, projectPath, 2, leafNames, prefetched);
      await classify(files, root, underProject(scope.projectDir, found), result, layout);
    }
    return result;
  }
  if ((await lstatKind(files, projectPath)) !== 'dir') return result;
  const sessionRel = `${scope.projectDir}/${scope.sessionDir}`;
  const sessionKind = await lstatKind(files, keyPath(root, sessionRel));
  if (sessionKind === 'missing') return result;
  const found: Found[] = [{ rel: sessionRel, kind: sessionKind }];
  if (sessionKind === 'dir') {
    for (const name of leafNames ?? []) {
      const entry = await lstatEntry(files, keyPath(root, `${sessionRel}/${name}`));
      if (entry !== undefined) found.push({ rel: `${sessionRel}/${name}`, ...entry });
    }
  }
  await classify(files, root, [found], result, layout);
  return result;
}
