import { opendir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceEntry, WorkspaceLister } from '../features/workspaceFiles';
import type { WorkspaceFileSystem } from '../features/services';
import { cancelledError } from '../resolver';
import { fileUriToPath } from './target';

/**
 * The workspace's files on this machine, for the file mentions of the language service: Node's paths and
 * directory reads. The features see only the `WorkspaceFileSystem` interface (and keep their snapshots of it).
 */

/** True when the real path `inner` is `outer` or lies below it. */
function within(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith(path.sep) ? outer : outer + path.sep);
}

/** What a link leads to, when that is inside `realRoot`; undefined for a link out of it or to nothing. */
async function insideTarget(link: string, realRoot: string): Promise<{ directory: boolean } | undefined> {
  try {
    const target = await realpath(link);
    if (!within(target, realRoot)) return undefined;
    return { directory: (await stat(target)).isDirectory() };
  } catch {
    return undefined;
  }
}

// The real paths of the workspace folders, kept a second: a search reads many folders of one root in a row.
// Kept longer, a root swapped for a link would still be compared with its old real path, which lists less, never more.
const REAL_ROOT_MS = 1000;
const realRoots = new Map<string, { real: string; at: number }>();

async function realRoot(root: string): Promise<string> {
  const kept = realRoots.get(root);
  const now = Date.now();
  if (kept !== undefined && now - kept.at >= 0 && now - kept.at < REAL_ROOT_MS) return kept.real;
  const real = await realpath(root);
  if (realRoots.size >= 16) realRoots.clear();
  realRoots.set(root, { real, at: now });
  return real;
}

/** Links resolved at once (the thread pool has four threads by default). */
const LINKS_AT_ONCE = 8;

/**
 * The lister the server uses: the children of one folder, read in batches (stopped at the limit or on
 * abort). Real paths keep it inside the workspace folder: a folder reached through a link out of it is not
 * read, and a link out of it (or to nothing) is not listed.
 */
export const directoryLister: WorkspaceLister = async (request, signal) => {
  if (signal.aborted) throw cancelledError(signal);
  // No file system path holds a NUL (Node throws a TypeError on one).
  if (request.folder.includes('\0') || request.root.includes('\0')) return { entries: [], cut: false, failed: false };
  const entries: WorkspaceEntry[] = [];
  let root: string;
  let folder: string;
  try {
    [root, folder] = await Promise.all([realRoot(request.root), realpath(request.folder)]);
  } catch {
    return { entries, cut: false, failed: true };
  }
  if (signal.aborted) throw cancelledError(signal);
  if (!within(folder, root)) return { entries, cut: false, failed: false };
  let cut = false;
  // Entries whose type is only known once their target is (links) or asked (no type from the file system).
  const pending: { entry: WorkspaceEntry; full: string }[] = [];
  try {
    const dir = await opendir(folder, { bufferSize: 512 });
    // Iterating closes the folder however the loop ends.
    for await (const dirent of dir) {
      if (signal.aborted) throw cancelledError(signal);
      if (entries.length >= request.limit) {
        cut = true;
        break;
      }
      const link = dirent.isSymbolicLink();
      const entry: WorkspaceEntry = { name: dirent.name, lowerName: dirent.name.toLocaleLowerCase(), directory: dirent.isDirectory(), link };
      entries.push(entry);
      // A file system that gives no type (DT_UNKNOWN) is asked.
      const typed = entry.directory || dirent.isFile() || dirent.isFIFO() || dirent.isSocket() || dirent.isBlockDevice() || dirent.isCharacterDevice();
      if (link || !typed) pending.push({ entry, full: path.join(folder, dirent.name) });
    }
  } catch {
    if (signal.aborted) throw cancelledError(signal);
    const unresolved = new Set(pending.map((item) => item.entry));
    return { entries: entries.filter((entry) => !unresolved.has(entry)), cut: false, failed: true };
  }
  const dropped = new Set<WorkspaceEntry>();
  for (let at = 0; at < pending.length; at += LINKS_AT_ONCE) {
    if (signal.aborted) throw cancelledError(signal);
    await Promise.all(
      pending.slice(at, at + LINKS_AT_ONCE).map(async ({ entry, full }) => {
        const target = await insideTarget(full, root);
        if (target === undefined) dropped.add(entry);
        else entry.directory = target.directory;
      }),
    );
  }
  return { entries: dropped.size === 0 ? entries : entries.filter((entry) => !dropped.has(entry)), cut, failed: false };
};

/** The workspace file system the server and the CLI use. */
export const nodeWorkspaceFileSystem: WorkspaceFileSystem = Object.freeze({
  pathOf: fileUriToPath,
  join: (folder: string, relative: string) => path.join(folder, relative),
  sep: path.sep,
  list: directoryLister,
});
