/**
 * The directory-tree side of the file system the store uses (resolving the root, listing and
 * classifying directories, watching them), injectable so tests can observe or replace it.
 * Transcript contents go through `TranscriptFiles` instead.
 */
import { promises as fsp, watch as fsWatch, type Dirent, type FSWatcher, type Stats } from 'node:fs';

/** Creates a watcher for one directory (fs.watch by default). */
export type WatchFactory = (dir: string, listener: (event: string, name: string | null) => void) => FSWatcher;

/** Read-only directory access used by discovery, root attachment and the directory watches. */
export interface DirectoryFiles {
  realpath(file: string): Promise<string>;
  stat(file: string): Promise<Stats>;
  lstat(file: string): Promise<Stats>;
  /** A directory's entries with their types. */
  readdir(dir: string): Promise<Dirent[]>;
  watch: WatchFactory;
}

/** The real file system. */
export const nodeDirectoryFiles: DirectoryFiles = {
  realpath: (file) => fsp.realpath(file),
  stat: (file) => fsp.stat(file),
  lstat: (file) => fsp.lstat(file),
  readdir: (dir) => fsp.readdir(dir, { withFileTypes: true }),
  watch: (dir, listener) =>
    // Not persistent: watches alone must never keep a CLI process alive.
    fsWatch(dir, { persistent: false }, (event, name) => listener(event, name === null ? null : String(name))),
};
