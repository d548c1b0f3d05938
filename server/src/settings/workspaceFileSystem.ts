import path from 'node:path';
import fg from 'fast-glob';
import { MAX_SEARCH_DEPTH, type WorkspaceEntry, type WorkspaceLister } from '../features/workspaceFiles';
import type { WorkspaceFileSystem } from '../features/services';
import { cancelledError } from '../resolver';
import { fileUriToPath } from './target';

/**
 * The workspace's files on this machine, for the file mentions of the language service: Node's paths and
 * fast-glob walks. The features see only the `WorkspaceFileSystem` interface (and keep their snapshots of it).
 */

const SKIPPED_PATTERNS = ['**/.git', '**/.git/**', '**/node_modules', '**/node_modules/**'];

/** The lister the server uses: fast-glob, streamed and stopped at the limit or on abort. */
export const fastGlobLister: WorkspaceLister = (request, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelledError(signal));
    // No file system path holds a NUL; fast-glob would throw on one outside its stream, which then never ends.
    if (request.folder.includes('\0')) return resolve({ entries: [], cut: false, failed: false });
    const options: fg.Options = request.deep
      ? { cwd: request.folder, deep: MAX_SEARCH_DEPTH, dot: request.dot, ignore: SKIPPED_PATTERNS, followSymbolicLinks: false }
      : // One level: a linked folder is shown as the folder it is; the tree never follows links (no cycles).
        { cwd: request.folder, deep: 1, dot: request.dot, followSymbolicLinks: true };
    const stream = fg.stream(request.deep ? '**' : '*', { ...options, objectMode: true, onlyFiles: false, suppressErrors: true }) as NodeJS.ReadableStream & {
      destroy(): void;
    };
    const entries: WorkspaceEntry[] = [];
    let settled = false;
    const finish = (cut: boolean, failed: boolean): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      stream.destroy();
      resolve({ entries, cut, failed });
    };
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      stream.destroy();
      reject(cancelledError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (entry: fg.Entry) => {
      entries.push({ path: entry.path, lowerName: entry.name.toLocaleLowerCase(), directory: entry.dirent.isDirectory() });
      if (entries.length >= request.limit) finish(true, false);
    });
    stream.on('error', () => finish(false, true));
    stream.on('end', () => finish(false, false));
  });

/** The workspace file system the server and the CLI use. */
export const nodeWorkspaceFileSystem: WorkspaceFileSystem = Object.freeze({
  pathOf: fileUriToPath,
  join: (folder: string, relative: string) => path.join(folder, relative),
  dirname: (file: string) => path.dirname(file),
  sep: path.sep,
  list: fastGlobLister,
});
