/**
 * Discovery: which transcripts a sessions root holds (dsh-session-store.md §1.4), never
 * following a symbolic link below the root. Header-level checks happen later, in the index.
 * Which files are sessions, which names a session folder is looked up by and which stray files
 * are reported the format's layout says (`formats/adapter.ts`, dsh's by default). The walk goes
 * from the layout's `base` (a missing base: no sessions) down to the leaf folders at `leafDepth`
 * below it (only those named `leafName`, when the layout names them), each looked up by the
 * layout's `sessionFileNames` when it has them (dsh: never listed), else listed and its files
 * kept by `isSessionFile`. Scopes are in `layoutScopes.ts`.
 */
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import { storeWorkSlices } from './concurrency';
import { nodeDirectoryFiles, type DirectoryFiles } from './directoryFiles';
import type { SessionLayout } from './formats/adapter';
import { dshLayout, FLAT_LAYOUT_REASON } from './formats/dshLayout';
import { baseDepthOf, depthBelowBase, parentKey, type DiscoveryScope } from './layoutScopes';
import { quickSync } from './quickSync';
import { fileIdentity, type FileIdentity } from './transcriptFiles';
import type { StoreProblem } from './service';

/** A transcript (session file) found in a leaf folder of the layout. */
export interface TranscriptLocation {
  /** Root-relative key, always with `/` separators (dsh: `<projectDir>/<sessionDir>/<file>`). */
  key: string;
  /** The key of the folder one level below the layout's base (dsh: the project folder's name; a home: e.g. `projects/<p>`). */
  projectDir: string;
  /** The name of the leaf folder holding the file (dsh: the session folder). */
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
  /** Real folders from the base down to the leaf folders (dsh: project and session folders), to watch. */
  directories: string[];
}

/** A skipped entry found by discovery; `key` is root-relative. */
export interface DiscoveryProblem {
  key: string;
  reason: string;
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
interface NamedEntry {
  name: string;
  kind: Found['kind'];
  identity?: FileIdentity;
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
 * Every entry below the folder `base` (at `from` levels below the layout's base) down to the
 * layout's leaf folders and their files, or only `base`'s own entries when `until` is `from`:
 * a leaf folder looked up by the layout's `sessionFileNames` when it has them, else listed;
 * descending only into real directories (and at the leaf level only into those named
 * `leafName`, when the layout names them): symbolic links are reported as such and never
 * followed. Streamed in batches (the entries of the directories read since the last batch),
 * deepest directories first, so a root of 100,000 sessions never holds all its directory
 * entries at once; entries come in no particular order.
 */
async function* walkEntries(
  files: DirectoryFiles,
  base: string,
  layout: SessionLayout,
  from: number,
  until = layout.leafDepth,
): AsyncGenerator<Found[]> {
  const { leafDepth, leafName, sessionFileNames } = layout;
  const toRead: DirectoryToRead[] = [{ rel: '', depth: from }];
  const read: DirectoryRead[] = [];
  let reading = 0;
  let wake: (() => void) | undefined;
  for (;;) {
    while (reading < DIRECTORY_READS_IN_FLIGHT && toRead.length > 0) {
      const dir = toRead.pop() as DirectoryToRead;
      // `rel` is names a listing gave, joined by `/` (see keyPath).
      const dirPath = dir.rel === '' ? base : keyPath(base, dir.rel);
      const entries = sessionFileNames !== undefined && dir.depth === leafDepth ? namedEntries(files, dirPath, sessionFileNames) : readEntries(files, dirPath);
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
      const descend = below <= until && (below < leafDepth || leafName === undefined);
      for (const { name, kind, identity } of entries) {
        const entry: Found = { rel: rel === '' ? name : `${rel}/${name}`, kind, identity };
        if (entry.kind === 'dir' && (descend || (below === leafDepth && below <= until && name === leafName))) toRead.push({ rel: entry.rel, depth: below });
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
async function* under(folder: string, batches: AsyncIterable<Found[]>): AsyncGenerator<Found[]> {
  for await (const batch of batches) {
    for (const entry of batch) entry.rel = `${folder}/${entry.rel}`;
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

/** Whether a symbolic link would lead to a directory (only then is it a skipped folder of the layout). */
async function pointsToDirectory(files: DirectoryFiles, file: string): Promise<boolean> {
  try {
    return (await files.stat(file)).isDirectory();
  } catch {
    return false;
  }
}


/**
 * Classifies entries by their depth below the layout's base: the base and the folders above the
 * leaf folders (kept to watch), the leaf folders (and, beside them, files the layout reports as
 * strays), and the session files in the leaf folders.
 */
async function classify(
  files: DirectoryFiles,
  root: string,
  relToRoot: Iterable<Found[]> | AsyncIterable<Found[]>,
  result: DiscoveryResult,
  layout: SessionLayout,
): Promise<void> {
  const { leafDepth, leafName } = layout;
  const baseDepth = baseDepthOf(layout);
  const deepest = baseDepth + leafDepth;
  for await (const batch of relToRoot) {
    for (const entry of batch) {
      // A root holds hundreds of thousands of entries, each looked up synchronously: let answers run between slices.
      while (storeWorkSlices.due) await storeWorkSlices.pause();
      const rel = entry.rel;
      // The slash ending the project folder (the one after the base), and the last two.
      let slashes = 0;
      let projectEnd = -1;
      let before = -1;
      let last = -1;
      for (let i = rel.indexOf('/'); i !== -1 && slashes <= deepest; i = rel.indexOf('/', i + 1)) {
        if (++slashes === baseDepth + 1) projectEnd = i;
        before = last;
        last = i;
      }
      const depth = slashes + 1 - baseDepth;
      if (depth < leafDepth) {
        // The base, folders above it and below it: a link to a directory would be one of them.
        if (entry.kind === 'dir') result.directories.push(rel);
        else if (entry.kind === 'symlink' && (await pointsToDirectory(files, keyPath(root, rel)))) result.problems.push({ key: rel, reason: DISCOVERY_REASONS.symlink });
      } else if (depth === leafDepth) {
        const name = rel.slice(last + 1);
        const leaf = leafName === undefined || name === leafName;
        const stray = entry.kind === 'file' || entry.kind === 'symlink' ? layout.strayFileProblem?.(name) : undefined;
        if (entry.kind === 'dir') {
          if (leaf) result.directories.push(rel);
        } else if (stray !== undefined) {
          result.problems.push({ key: rel, reason: stray });
        } else if (leaf && entry.kind === 'symlink' && (await pointsToDirectory(files, keyPath(root, rel)))) {
          result.problems.push({ key: rel, reason: DISCOVERY_REASONS.symlink });
        }
      } else if (depth === leafDepth + 1) {
        if (!layout.isSessionFile(rel.slice(last + 1))) continue;
        if (entry.kind === 'symlink') {
          result.problems.push({ key: rel, reason: DISCOVERY_REASONS.symlink });
        } else if (entry.kind === 'file') {
          result.transcripts.push({ key: rel, projectDir: rel.slice(0, projectEnd), sessionDir: rel.slice(before + 1, last) });
          if (entry.identity !== undefined) result.seen.set(rel, entry.identity);
        }
      }
    }
  }
}

function emptyResult(): DiscoveryResult {
  return { transcripts: [], seen: new Map(), problems: [], directories: [] };
}

/**
 * The folders of the layout's base, from the root down (none when the base is the root), each
 * classified: whether all are real directories. A missing one means no sessions; a link is
 * reported (when it leads to a directory) and not followed.
 */
async function discoverBase(files: DirectoryFiles, root: string, layout: SessionLayout, result: DiscoveryResult): Promise<boolean> {
  const { base } = layout;
  if (base === '') return true;
  for (let end = base.indexOf('/'); ; end = base.indexOf('/', end + 1)) {
    const folder = end === -1 ? base : base.slice(0, end);
    const kind = await lstatKind(files, keyPath(root, folder));
    if (kind === 'missing') return false;
    await classify(files, root, [[{ rel: folder, kind }]], result, layout);
    if (kind !== 'dir') return false;
    if (end === -1) return true;
  }
}

/** Whether `dir` and every folder above it (the root excepted) are real directories; true for the root. */
async function realFolders(files: DirectoryFiles, root: string, dir: string): Promise<boolean> {
  if (dir === '') return true;
  for (let end = dir.indexOf('/'); ; end = dir.indexOf('/', end + 1)) {
    if ((await lstatKind(files, keyPath(root, end === -1 ? dir : dir.slice(0, end)))) !== 'dir') return false;
    if (end === -1) return true;
  }
}

/** The walk of the layout's base (or only its own entries, `until` 0), classified. */
async function discoverFromBase(files: DirectoryFiles, root: string, layout: SessionLayout, result: DiscoveryResult, until?: number): Promise<void> {
  if (!(await discoverBase(files, root, layout, result))) return;
  const { base } = layout;
  const found = walkEntries(files, base === '' ? root : keyPath(root, base), layout, 0, until);
  await classify(files, root, base === '' ? found : under(base, found), result, layout);
}

/**
 * The root's own level: the real folders of the layout's base and the project folders in it (in
 * `directories`), and the skipped entries among them. A root scan then discovers one project
 * folder at a time, so the discovery of a 100,000-session root never exists at once.
 */
export async function discoverRootLevel(root: string, files: DirectoryFiles = nodeDirectoryFiles, layout: SessionLayout = dshLayout): Promise<DiscoveryResult> {
  const result = emptyResult();
  await discoverFromBase(files, root, layout, result, 0);
  return result;
}

/**
 * Discovers the transcripts and skipped entries within a scope of a (real, resolved) root.
 * A missing scope yields nothing; I/O errors below the root are tolerated.
 */
export async function discover(
  root: string,
  scope: DiscoveryScope,
  files: DirectoryFiles = nodeDirectoryFiles,
  layout: SessionLayout = dshLayout,
): Promise<DiscoveryResult> {
  const result = emptyResult();
  const { base } = layout;
  const key = scope.kind === 'root' ? '' : scope.kind === 'dir' ? scope.dir : scope.key;
  // The root, or a folder above the base: all of it.
  if (key === '' || (key !== base && base.startsWith(`${key}/`))) {
    await discoverFromBase(files, root, layout, result);
    return result;
  }
  if (base !== '' && key !== base && !key.startsWith(`${base}/`)) return result;
  const depth = depthBelowBase(key, baseDepthOf(layout), layout.leafDepth + 1);
  if (scope.kind === 'file' ? depth !== layout.leafDepth + 1 : depth > layout.leafDepth) return result;
  const parent = parentKey(key);
  if (scope.kind === 'file' && layout.leafName !== undefined && parent.slice(parent.lastIndexOf('/') + 1) !== layout.leafName) return result;
  if (!(await realFolders(files, root, parent))) return result;
  const full = keyPath(root, key);
  const entry = await lstatEntry(files, full);
  if (entry === undefined) return result;
  await classify(files, root, [[{ rel: key, ...entry }]], result, layout);
  // Below a folder the walk goes on, unless it is a leaf-level folder of another name.
  const walked = entry.kind === 'dir' && (depth < layout.leafDepth || layout.leafName === undefined || key.slice(key.lastIndexOf('/') + 1) === layout.leafName);
  if (scope.kind === 'dir' && walked) await classify(files, root, under(key, walkEntries(files, full, layout, depth, layout.leafDepth)), result, layout);
  return result;
}
