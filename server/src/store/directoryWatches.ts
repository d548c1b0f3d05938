/**
 * Non-recursive directory watches on the root, its project directories and the most recent
 * session directories (a directory watch also sees changes to the files inside it). The
 * number of watches is capped; what is not watched is covered by the store's sweep.
 */
import type { FSWatcher } from 'node:fs';
import type { WatchFactory } from './directoryFiles';
import { keyPath } from './discovery';

/** Where a change was seen: `dir` is root-relative ('' for the root), `name` the entry inside it if known. */
export type WatchCallback = (dir: string, name: string | undefined) => void;

const WATCHES_PER_SLICE = 256;

/** The set of live directory watches of one root. */
export class DirectoryWatches {
  private readonly watchers = new Map<string, FSWatcher>();
  private toAdd: string[] = [];
  private failureLogged = false;
  private pendingSlice?: ReturnType<typeof setImmediate>;

  constructor(
    private readonly root: string,
    private readonly onChange: WatchCallback,
    private readonly maxWatches: number,
    private readonly log: (message: string) => void,
    private readonly factory: WatchFactory,
  ) {}

  /** How many directories are watched. */
  get count(): number {
    return this.watchers.size;
  }

  /** Whether watches are still being added (for leak checks). */
  get adding(): boolean {
    return this.pendingSlice !== undefined;
  }

  /** Whether a root-relative directory is watched. */
  isWatched(dir: string): boolean {
    return this.watchers.has(dir);
  }

  /**
   * Watches the root and as many of `dirs` as the cap allows, in the given priority order, and
   * stops watching everything else.
   */
  update(dirs: Iterable<string>): void {
    const wanted = new Set<string>(['']);
    for (const dir of dirs) {
      if (wanted.size >= this.maxWatches) break;
      wanted.add(dir);
    }
    for (const [dir, watcher] of this.watchers) {
      if (!wanted.has(dir)) {
        watcher.close();
        this.watchers.delete(dir);
      }
    }
    this.toAdd = [...wanted].filter((dir) => !this.watchers.has(dir));
    this.addSome();
  }

  /** Adds watches a slice at a time: thousands of synchronous watch calls would stall the event loop. */
  private addSome(): void {
    if (this.pendingSlice) clearImmediate(this.pendingSlice);
    this.pendingSlice = undefined;
    for (const dir of this.toAdd.splice(0, WATCHES_PER_SLICE)) this.add(dir);
    if (this.toAdd.length > 0) this.pendingSlice = setImmediate(() => this.addSome());
  }

  private add(dir: string): void {
    if (this.watchers.has(dir)) return;
    const full = dir === '' ? this.root : keyPath(this.root, dir);
    let watcher: FSWatcher;
    try {
      watcher = this.factory(full, (_event, name) => this.onChange(dir, name ?? undefined));
    } catch (error) {
      // Gone already, or out of watches (ENOSPC): the sweep and rescans still cover it.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || this.failureLogged) return;
      this.failureLogged = true; // once: when the OS is out of watches, every further one fails too
      this.log(`cannot watch ${full} (further watch failures are not logged): ${(error as Error).message}`);
      return;
    }
    watcher.on('error', () => {
      // Typically the directory was removed; report it as a change so its parent is rescanned.
      this.close(dir);
      this.onChange(dir, undefined);
    });
    this.watchers.set(dir, watcher);
  }

  private close(dir: string): void {
    this.watchers.get(dir)?.close();
    this.watchers.delete(dir);
  }

  /** Closes every watch. */
  dispose(): void {
    if (this.pendingSlice) clearImmediate(this.pendingSlice);
    this.pendingSlice = undefined;
    this.toAdd = [];
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }
}
