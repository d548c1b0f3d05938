import { raceWithSignal, throwIfCancelled } from '../resolver';

/**
 * Workspace listings for file-mention completion: one-level listings kept as short-lived snapshots (so that
 * the keystrokes of one `@` token are answered from memory instead of a directory read each), and searches
 * by name that walk the tree breadth first, a bounded number of entries per request, and resume where the
 * previous keystroke's search stopped.
 */

/** One child of a listed folder. */
export interface WorkspaceEntry {
  /** Its name (one segment). */
  name: string;
  /** The name lower-cased (`toLocaleLowerCase`) once for the prefix match of every keystroke. */
  lowerName: string;
  directory: boolean;
  /** A symbolic link (to something inside the workspace: the lister never lists a link leading out of it). */
  link: boolean;
}

/** A listing: at most `limit` entries, `cut` when more were left. */
export interface WorkspaceListing {
  entries: readonly WorkspaceEntry[];
  cut: boolean;
}

/**
 * What a lister reads: the children of `folder`, which lies in the workspace folder `root`. Nothing whose
 * real path (links resolved) leaves `root` is read or listed: a `folder` that does not really lie in
 * `root` lists nothing, a link whose target is outside it (or that leads nowhere) is left out, and a link
 * whose target is inside is listed as what it leads to (`link` set).
 */
export interface ListingRequest {
  folder: string;
  root: string;
  limit: number;
}

/** A read's outcome; `failed` when it ended on an error (its entries are answered but never kept). */
export interface ListingOutcome extends WorkspaceListing {
  failed: boolean;
}

/** Reads a folder for a listing; rejects with CANCELLED when the signal aborts. */
export type WorkspaceLister = (request: ListingRequest, signal: AbortSignal) => Promise<ListingOutcome>;

/** Never offered, never searched. */
export const SKIPPED_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** Folders a search reads at once. */
const READ_AHEAD = 8;
/** How deep a search by name goes below its folder (entries of the folder itself are at depth 1). */
export const MAX_SEARCH_DEPTH = 8;

/** How listings are kept and searches bounded. */
export interface WorkspaceFilesOptions {
  /** Does the reads (the host's I/O: `WorkspaceFileSystem.list`). */
  lister: WorkspaceLister;
  /** Milliseconds; injectable for tests. */
  now?: () => number;
  /**
   * A snapshot answers until it is this old (counted from the start of its read); an older one is read
   * again. A search by name is continued by the next keystroke only within the same age.
   */
  maxAgeMs?: number;
  /** Snapshots kept, least recently used dropped first. */
  maxSnapshots?: number;
  /** Entries of all snapshots together (a listing bigger than this is answered but not kept). */
  maxKeptEntries?: number;
  /** Entries per folder (a huge directory must not stall typing nor fill memory). */
  maxEntries?: number;
  /** Directory entries one search request looks at before it answers what it found (and may be continued). */
  maxVisitsPerRequest?: number;
  /** Matches a search may hold; one that found more is started afresh rather than continued. */
  maxMatches?: number;
}

/** A match of a search by name. */
export interface NamedEntry {
  /** Relative to the searched folder, `/`-separated, no trailing slash. */
  path: string;
  lowerName: string;
  directory: boolean;
  /** Segments in `path`. */
  depth: number;
}

/** What {@link WorkspaceFiles.findByName} needs besides the folder and the name. */
export interface NameSearchRequest {
  /** Hidden entries too (the typed name starts with `.`). */
  dot: boolean;
  /** How many matches are shown: a search stops once this many are certain to rank before anything deeper. */
  limit: number;
  /** Whether a match may be shown (the searches keep every match, so that a later keystroke can continue them). */
  shown: (entry: NamedEntry) => boolean;
  /** Joins a folder and a `/`-separated relative path (the host's `WorkspaceFileSystem.join`). */
  join: (folder: string, relative: string) => string;
  signal?: AbortSignal;
}

/** The matches of a search by name, and whether they are all there are. */
export interface NameSearchResult {
  /** Every match found so far, shown or not, breadth first (nearest first). */
  matches: readonly NamedEntry[];
  /**
   * False when the search stopped at a bound: its budget of entries for this request, a folder cut at
   * `maxEntries`, or enough matches to fill the list. A longer name may then find more.
   */
  complete: boolean;
}

interface Snapshot {
  listing: WorkspaceListing;
  takenAt: number;
  size: number;
}

interface Walk {
  outcome: Promise<ListingOutcome>;
  controller: AbortController;
  /** Requests waiting for it; when the last one is cancelled the read stops, unless it is a refresh nobody asked for. */
  waiters: number;
  background: boolean;
}

/** A search by name in progress: folders are read breadth first, in name order. */
interface NameSearch {
  /** The lower-cased name its matches start with. */
  query: string;
  startedAt: number;
  /** Folders to read (relative, `''` the searched folder) with the depth of their entries; read up to `next`. */
  queue: { path: string; depth: number }[];
  next: number;
  matches: NamedEntry[];
  /** A folder was cut at `maxEntries`. */
  cut: boolean;
}

const byName = (a: WorkspaceEntry, b: WorkspaceEntry): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Listings by (workspace folder, folder). A snapshot younger than `maxAgeMs` answers from memory; past half
 * that age it is also refreshed in the background, so steady typing never waits for a read. An expired one
 * is not answered: the request waits for a fresh read. Why wait rather than answer stale: a client given a
 * complete list filters it itself and does not ask again, so a stale answer would hide a file created a
 * moment ago for the whole completion; the wait is one read after a pause, as without the cache.
 * Concurrent requests share one read; a failed or cancelled read leaves nothing behind. Entries come in
 * name order whatever order the lister gives, so the same tree always gets the same answer.
 */
export class WorkspaceFiles {
  private readonly lister: WorkspaceLister;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private readonly maxSnapshots: number;
  private readonly maxKeptEntries: number;
  private readonly maxEntries: number;
  private readonly maxVisitsPerRequest: number;
  private readonly maxMatches: number;
  private readonly snapshots = new Map<string, Snapshot>();
  private keptEntries = 0;
  private readonly walks = new Map<string, Walk>();
  private readonly searches = new Map<string, NameSearch>();
  /** The end of the last search request per searched folder: requests take turns. */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(options: WorkspaceFilesOptions) {
    this.lister = options.lister;
    this.now = options.now ?? Date.now;
    this.maxAgeMs = options.maxAgeMs ?? 2000;
    this.maxSnapshots = options.maxSnapshots ?? 4096;
    this.maxKeptEntries = options.maxKeptEntries ?? 200_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.maxVisitsPerRequest = options.maxVisitsPerRequest ?? 10_000;
    this.maxMatches = options.maxMatches ?? 50_000;
  }

  /** The children of `folder` (in the workspace folder `root`), in name order. */
  async children(folder: string, root: string, signal?: AbortSignal): Promise<WorkspaceListing> {
    throwIfCancelled(signal);
    const request: ListingRequest = { folder, root, limit: this.maxEntries };
    const key = `${root}\0${folder}`;
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

  /**
   * The entries below `root` whose name starts with `query` (lower-cased), nearest first: folders are read
   * breadth first in name order (not `.git`, `node_modules`, hidden ones only with `dot`, no links followed,
   * at most {@link MAX_SEARCH_DEPTH} levels), at most `maxVisitsPerRequest` entries per request. A request
   * whose name extends the previous request's (same folder, within `maxAgeMs` of its start) continues
   * that search where it stopped, so typing on finds what lies further; requests take turns, and a
   * cancelled one leaves the search as far as it got.
   */
  async findByName(root: string, query: string, request: NameSearchRequest): Promise<NameSearchResult> {
    const { signal } = request;
    throwIfCancelled(signal);
    const key = `${request.dot ? 'dot' : ''}\0${root}`;
    const previous = this.turns.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const turn = previous.then(() => mine);
    this.turns.set(key, turn);
    try {
      await raceWithSignal(previous, signal);
      return await this.continueSearch(key, root, query, request);
    } finally {
      release();
      if (this.turns.get(key) === turn) this.turns.delete(key);
    }
  }

  private async continueSearch(key: string, root: string, query: string, request: NameSearchRequest): Promise<NameSearchResult> {
    const { dot, limit, shown, join, signal } = request;
    throwIfCancelled(signal);
    let search = this.searches.get(key);
    const age = search === undefined ? Infinity : this.now() - search.startedAt;
    if (search === undefined || !(age >= 0 && age < this.maxAgeMs) || !query.startsWith(search.query) || search.matches.length > this.maxMatches) {
      search = { query, startedAt: this.now(), queue: [{ path: '', depth: 1 }], next: 0, matches: [], cut: false };
    } else if (query !== search.query) {
      search.matches = search.matches.filter((match) => match.lowerName.startsWith(query));
      search.query = query;
    }
    // Most recently used last; two folders' searches are kept (a window with two workspace folders).
    this.searches.delete(key);
    this.searches.set(key, search);
    while (this.searches.size > 2) this.searches.delete(this.searches.keys().next().value!);

    // Shown matches per depth: once more than `limit` lie above the next folder's entries, nothing deeper can make the list.
    const shownAtDepth: number[] = [];
    for (const match of search.matches) if (shown(match)) shownAtDepth[match.depth] = (shownAtDepth[match.depth] ?? 0) + 1;
    let shownAbove = 0;
    let countedDepth = 0;
    let budget = this.maxVisitsPerRequest;
    let filled = false;
    while (search.next < search.queue.length) {
      const folder = search.queue[search.next]!;
      while (countedDepth < folder.depth) shownAbove += shownAtDepth[countedDepth++] ?? 0;
      if (shownAbove > limit) {
        filled = true;
        break;
      }
      if (budget <= 0) break;
      // The next folders are read meanwhile (each read waits on the disk, not the processor); they are kept as snapshots.
      // Only folders of the same depth: whether the next depth is read at all is decided when it is reached.
      for (const ahead of search.queue.slice(search.next + 1, search.next + READ_AHEAD)) {
        if (ahead.depth === folder.depth) this.children(join(root, ahead.path), root, signal).catch(() => undefined);
      }
      const listing = await this.children(folder.path === '' ? root : join(root, folder.path), root, signal);
      for (const entry of listing.entries) {
        if (SKIPPED_NAMES.has(entry.name) || (!dot && entry.name.startsWith('.'))) continue;
        const path = folder.path === '' ? entry.name : `${folder.path}/${entry.name}`;
        if (entry.lowerName.startsWith(search.query)) {
          const match: NamedEntry = { path, lowerName: entry.lowerName, directory: entry.directory, depth: folder.depth };
          search.matches.push(match);
          if (shown(match)) shownAtDepth[folder.depth] = (shownAtDepth[folder.depth] ?? 0) + 1;
        }
        // A link is offered, never entered: what it leads to is inside the workspace and found there, and no cycle is walked.
        if (entry.directory && !entry.link && folder.depth < MAX_SEARCH_DEPTH) search.queue.push({ path, depth: folder.depth + 1 });
      }
      search.cut ||= listing.cut;
      budget -= Math.max(1, listing.entries.length);
      search.next++;
      // The folders already read are not needed again.
      if (search.next > 1024 && search.next * 2 > search.queue.length) {
        search.queue.splice(0, search.next);
        search.next = 0;
      }
    }
    const exhausted = search.next >= search.queue.length;
    return { matches: search.matches, complete: exhausted && !filled && !search.cut };
  }

  /** The read in flight for `key`, else a new one. */
  private start(key: string, request: ListingRequest, background: boolean): Walk {
    const current = this.walks.get(key);
    if (current !== undefined) {
      // A request joining a refresh makes it one worth stopping when that request is cancelled.
      if (!background) current.background = false;
      return current;
    }
    const controller = new AbortController();
    const takenAt = this.now();
    const outcome = this.lister(request, controller.signal).then((read) => ({ ...read, entries: [...read.entries].sort(byName) }));
    const walk: Walk = { controller, waiters: 0, background, outcome };
    walk.outcome.then(
      (read) => {
        if (this.walks.get(key) === walk) this.walks.delete(key);
        if (!read.failed && !controller.signal.aborted) this.keep(key, { listing: { entries: read.entries, cut: read.cut }, takenAt, size: read.entries.length });
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
    // A slower, older read never replaces a newer snapshot.
    if (kept !== undefined && kept.takenAt > snapshot.takenAt) return;
    if (kept !== undefined) this.drop(key, kept);
    if (snapshot.size > this.maxKeptEntries) return;
    this.snapshots.set(key, snapshot);
    this.keptEntries += snapshot.size;
    while (this.snapshots.size > this.maxSnapshots || this.keptEntries > this.maxKeptEntries) {
      const [oldestKey, oldest] = this.snapshots.entries().next().value!;
      this.drop(oldestKey, oldest);
    }
  }

  private drop(key: string, snapshot: Snapshot): void {
    this.snapshots.delete(key);
    this.keptEntries -= snapshot.size;
  }
}
