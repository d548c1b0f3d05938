/**
 * The directory-tree side of the file system the store uses (resolving the root, listing and
 * classifying directories, watching them), injectable so tests can observe or replace it.
 * Transcript contents go through `TranscriptFiles` instead.
 */
import { promises as fsp, lstatSync, readdirSync, watch as fsWatch, type Dirent, type FSWatcher, type Stats } from 'node:fs';

/** Creates a watcher for one directory (fs.watch by default). */
export type WatchFactory = (dir: string, listener: (event: string, name: string | null) => void) => FSWatcher;

/** Read-only directory access used by discovery, root attachment and the directory watches. */
export interface DirectoryFiles {
  realpath(file: string): Promise<string>;
  stat(file: string): Promise<Stats>;
  lstat(file: string): Promise<Stats>;
  /** A directory's entries with their types. */
  readdir(dir: string): Promise<Dirent[]>;
  /**
   * The same, synchronously: discovery lists ~10,000 session directories per 10,000 sessions, and
   * a listing of one or two entries costs a few µs this way against ~20 µs of CPU for a promise
   * through the thread pool. Optional: without it discovery uses `readdir`.
   */
  readdirSync?(dir: string): Dirent[];
  /**
   * `lstat`, synchronously; undefined when the entry does not exist (other errors throw).
   * Optional: without it discovery uses `lstat`.
   */
  lstatSync?(file: string): Stats | undefined;
  watch: WatchFactory;
}

/** The real file system. */
export const nodeDirectoryFiles: DirectoryFiles = {
  realpath: (file) => fsp.realpath(file),
  stat: (file) => fsp.stat(file),
  lstat: (file) => fsp.lstat(file),
  readdir: (dir) => fsp.readdir(dir, { withFileTypes: true }),
  readdirSync: (dir) => readdirSync(dir, { withFileTypes: true }),
  lstatSync: (file) => lstatSync(file, { throwIfNoEntry: false }),
  watch: (dir, listener) =>
    // Not persistent: watches alone must never keep a CLI process alive.
    fsWatch(dir, { persistent: false }, (event, name) => listener(event, name === null ? null : String(name))),
};
