import { raceWithSignal, throwIfCancelled } from '../resolver';

/**
 * Workspace listings for file-mention completion, kept as short-lived snapshots so that the keystrokes of
 * one `@` token are answered from memory instead of a directory walk each.
 */

/** One entry of a listing. */
export interface WorkspaceEntry {
  /** Relative to the listed folder, `/`-separated, no trailing slash (a child's name for one level). */
  path: string;
  /** The last segment, lower-cased (`toLocaleLowerCase`) once for the prefix match of every keystroke. */
  lowerName: string;
  directory: boolean;
}

/** A listing: at most `limit` entries, `cut` when more were left. */
export interface WorkspaceListing {
  entries: readonly WorkspaceEntry[];
  cut: boolean;
}

/**
 * What a lister walks: the children of `folder` (links followed), or its tree (no links followed, the
 * {@link SKIPPED_NAMES} pruned, at most {@link MAX_SEARCH_DEPTH} levels below `folder`).
 */
export interface ListingRequest {
  folder: string;
  deep: boolean;
  /** Hidden entries too. */
  dot: boolean;
  limit: number;
}

/** A walk's outcome; `failed` when it ended on an error (its entries are answered but never kept). */
export interface ListingOutcome extends WorkspaceListing {
  failed: boolean;
}

/** Reads a folder for a listing; rejects with CANCELLED when the signal aborts. */
export type WorkspaceLister = (request: ListingRequest, signal: AbortSignal) => Promise<ListingOutcome>;

/** Never offered, never searched. */
export const SKIPPED_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** How deep a tree listing goes below its folder. */
export const MAX_SEARCH_DEPTH = 8;

/** How snapshots are kept. */
export interface WorkspaceFilesOptions {
  /** Does the walks (the host's I/O: `WorkspaceFileSystem.list`). */
  lister: WorkspaceLister;
  /** Milliseconds; injectable for tests. */
  now?: () => number;
  /** A snapshot answers until it is this old (counted from the start of its walk); an older one is walked again. */
  maxAgeMs?: number;
  /** Snapshots kept, least recently used dropped first. */
  maxSnapshots?: number;
  /** Entries per listing (a huge directory or tree must not stall typing nor fill memory). */
  maxEntries?: number;
}

interface Snapshot {
  listing: WorkspaceListing;
  takenAt: number;
}

interface Walk {
  outcome: Promise<ListingOutcome>;
  controller: AbortController;
  /** Requests waiting for it; when the last one is cancelled the walk stops, unless it is a refresh nobody asked for. */
  waiters: number;
  background: boolean;
}

/**
 * Listings by (folder, one level or tree, hidden or not). A snapshot younger than `maxAgeMs` answers from
 * memory; past half that age it is also refreshed in the background, so steady typing never waits for a walk.
 * An expired one is not answered: the request waits for a fresh walk. Why wait rather than answer stale: a
 * client given a complete list filters it itself and does not ask again, so a stale answer would hide a file
 * created a moment ago for the whole completion; the wait is one walk after a pause, as without the cache.
 * Concurrent requests share one walk; a failed or cancelled walk leaves nothing behind.
 */
export class WorkspaceFiles {
  private readonly lister: WorkspaceLister;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private readonly maxSnapshots: number;
  private readonly maxEntries: number;
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly walks = new Map<string, Walk>();

  constructor(options: WorkspaceFilesOptions) {
    this.lister = options.lister;
    this.now = options.now ?? Date.now;
    this.maxAgeMs = options.maxAgeMs ?? 2000;
    this.maxSnapshots = options.maxSnapshots ?? 16;
    this.maxEntries = options.maxEntries ?? 5000;
  }

  /** The children of `folder`. */
  children(folder: string, dot: boolean, signal?: AbortSignal): Promise<WorkspaceListing> {
    return this.listing({ folder, deep: false, dot, limit: this.maxEntries }, signal);
  }

  /** The tree below `folder` (bounded depth, `.git` and `node_modules` pruned, links not followed). */
  tree(folder: string, dot: boolean, signal?: AbortSignal): Promise<WorkspaceListing> {
    return this.listing({ folder, deep: true, dot, limit: this.maxEntries }, signal);
  }

  private async listing(request: ListingRequest, signal: AbortSignal | undefined): Promise<WorkspaceListing> {
    throwIfCancelled(signal);
    const key = `${request.deep ? 'tree' : 'children'}\0${request.dot ? 'dot' : ''}\0${request.folder}`;
    const snapshot = this.snapshots.get(key);
    const age = snapshot === undefined ? Infinity : this.now() - snapshot.takenAt;
    if (snapshot !== undefined && age >= 0 && age < this.maxAgeMs) {
      // Most recently used last.
      this.snapshots.delete(key);
      this.snapshots.set(key, snapshot);
      if (age >= this.maxAgeMs / 2) this.start(key, request, true);
      return snapshot.listing;
    }
    const walk = this.start(key, request, false);
    walk.waiters++;
    try {
      const { entries, cut } = await raceWithSignal(walk.outcome, signal);
      return { entries, cut };
    } finally {
      walk.waiters--;
      if (walk.waiters === 0 && !walk.background && signal?.aborted === true && this.walks.get(key) === walk) {
        this.walks.delete(key);
        walk.controller.abort(signal.reason);
      }
    }
  }

  /** The walk in flight for `key`, else a new one. */
  private start(key: string, request: ListingRequest, background: boolean): Walk {
    const current = this.walks.get(key);
    if (current !== undefined) {
      // A request joining a refresh makes it one worth stopping when that request is cancelled.
      if (!background) current.background = false;
      return current;
    }
    const controller = new AbortController();
    const takenAt = this.now();
    const walk: Walk = { controller, waiters: 0, background, outcome: this.lister(request, controller.signal) };
    walk.outcome.then(
      (outcome) => {
        if (this.walks.get(key) === walk) this.walks.delete(key);
        if (!outcome.failed && !controller.signal.aborted) this.keep(key, { listing: { entries: outcome.entries, cut: outcome.cut }, takenAt });
      },
      () => {
        if (this.walks.get(key) === walk) this.walks.delete(key);
      },
    );
    this.walks.set(key, walk);
    return walk;
  }

  private keep(key: string, snapshot: Snapshot): void {
    const kept = this.snapshots.get(key);
    // A slower, older walk never replaces a newer snapshot.
    if (kept !== undefined && kept.takenAt > snapshot.takenAt) return;
    this.snapshots.delete(key);
    this.snapshots.set(key, snapshot);
    while (this.snapshots.size > this.maxSnapshots) this.snapshots.delete(this.snapshots.keys().next().value!);
  }
}

