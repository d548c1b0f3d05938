/**
 * Scanning: discovers a scope of the attached root, reconciles the index, the known directories
 * and the discovery problems with what is there (`reconcile.ts`, which returns the change), then
 * refreshes the scope's transcripts. What that changed it reports on the store's event stream.
 * The scanner owns those three ({@link RootContents}): it makes them for a root being attached,
 * is the only part that writes them, and the others read them through the root's read-only views.
 */
import { forEachConcurrently, storeWorkSlices } from '../concurrency';
import { discover, discoverRootLevel } from '../discovery';
import { baseDepthOf, depthBelowBase, scopeOfKey, type DiscoveryScope } from '../layoutScopes';
import type { EngineFormat } from '../formats/engineFormat';
import { ScopedKeys } from '../scopedKeys';
import type { FileIdentity } from '../transcriptFiles';
import { TranscriptIndex, type RefreshOutcome } from '../transcriptIndex';
import type { CacheWriter } from './cacheWriter';
import type { StoreEvents } from './events';
import { applyRootLevel, applyScope, type Reconciled } from './reconcile';
import type { SideFiles } from './sideFiles';
import type { Attached, RootContents, StoreState } from './state';

/** Project directories scanned at once during a root scan (their listings overlap the reads). */
const PROJECT_SCANS_IN_FLIGHT = 4;

export class Scanner {
  /** Discovery and reconciliation run one at a time so scopes never undo each other. */
  private reconciling: Promise<unknown> = Promise.resolve();
  /** What the scanner writes of each attached root it made. */
  private readonly contents = new WeakMap<Attached, RootContents>();
  /** How many segments the layout's base has (0: the base is the root). */
  private readonly baseDepth: number;

  constructor(
    private readonly state: StoreState,
    private readonly events: StoreEvents,
    private readonly cache: Pick<CacheWriter, 'adopt' | 'loaded'>,
    /** The format the root's files are read in. */
    private readonly format: EngineFormat,
    /** The format's side files, read again at each scan that may change them (absent: it names none). */
    private readonly sides?: Pick<SideFiles, 'root' | 'project' | 'titlesFor'>,
  ) {
    this.baseDepth = baseDepthOf(format.layout);
  }

  /** A root being attached, with an empty index, no known directories and no problems yet. */
  open(root: Omit<Attached, 'index' | 'directories' | 'discoveryProblems'>): Attached {
    const { tuning } = this.state;
    const contents: RootContents = {
      index: new TranscriptIndex(root.realRoot, tuning.files, tuning.concurrency, this.format),
      directories: new ScopedKeys(this.baseDepth),
      discoveryProblems: new Map(),
    };
    const attached: Attached = { ...root, ...contents };
    this.contents.set(attached, contents);
    return attached;
  }

  private contentsOf(attached: Attached): RootContents {
    const contents = this.contents.get(attached);
    if (contents === undefined) throw new Error('a root the scanner did not open');
    return contents;
  }

  /**
   * Discovers a scope, reconciles what is known about it, then refreshes its transcripts; then
   * the title index, if the format keeps one (for sessions it was not read for).
   */
  async scan(attached: Attached, scope: DiscoveryScope): Promise<void> {
    if (this.state.windingDown) return;
    if (scope.kind === 'root') await this.scanRoot(attached);
    else await this.scanScope(attached, scope);
    await this.sides?.titlesFor(attached);
  }

  /** A folder or a file of the root (see {@link scan}); a project folder's marker with it. */
  private async scanScope(attached: Attached, scope: Exclude<DiscoveryScope, { kind: 'root' }>): Promise<void> {
    if (this.state.windingDown) return;
    if (scope.kind === 'dir') await this.sides?.project(attached, scope.dir);
    const run = this.reconciling.then(() => this.reconcile(attached, scope));
    // Not `run.catch(…)`: that would keep the last scope's key list alive until the next scan.
    this.reconciling = run.then(
      () => undefined,
      () => undefined,
    );
    const found = await run;
    if (!found) return;
    const { seen } = found;
    // Transcripts the lookup saw unchanged settle here, without a refresh each.
    const { index } = this.contentsOf(attached);
    const keys = found.keys.filter((key) => !index.unchanged(key, seen.get(key)));
    if (keys.length < found.keys.length) this.statusChanged();
    // A fixed set of workers pulls the keys: 100,000 keys never become 100,000 pending refreshes.
    await forEachConcurrently(keys, this.state.tuning.concurrency, (key) => this.refreshInSlices(attached, key, seen.get(key)), (error) =>
      this.state.log(`refreshing a transcript failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /**
   * The whole root, one project folder (a folder one level below the layout's base) at a time (a few in flight, so reading never waits
   * for the next listing): discovering 100,000 sessions at once held ~40 MB of locations, keys
   * and directory names besides the index, at every full rescan.
   */
  private async scanRoot(attached: Attached): Promise<void> {
    const run = this.reconciling.then(() => this.reconcileRootLevel(attached));
    this.reconciling = run.then(
      () => undefined,
      () => undefined,
    );
    const projects = await run;
    if (!projects) return;
    await this.sides?.root(attached, projects);
    await forEachConcurrently(projects, PROJECT_SCANS_IN_FLIGHT, (dir) => this.scanScope(attached, { kind: 'dir', dir }), (error) =>
      this.state.log(`scanning a project directory failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /**
   * Reconciles the root's own level (see {@link applyRootLevel}); returns the project
   * folders to scan.
   */
  private async reconcileRootLevel(attached: Attached): Promise<string[] | undefined> {
    const { state } = this;
    if (!state.isCurrent(attached)) return undefined;
    const found = await discoverRootLevel(attached.realRoot, state.tuning.directories, this.format.layout);
    await this.cache.loaded(attached);
    if (!state.isCurrent(attached)) return undefined;
    this.report(attached, applyRootLevel(this.contentsOf(attached), found, this.baseDepth));
    // The base's own folders are on that level too.
    return this.baseDepth === 0 ? found.directories : found.directories.filter((dir) => depthBelowBase(dir, this.baseDepth, 1) === 1);
  }

  /** The scope's transcripts after reconciling, and what discovery's lookups of them saw. */
  private async reconcile(attached: Attached, scope: DiscoveryScope): Promise<{ keys: string[]; seen: ReadonlyMap<string, FileIdentity> } | undefined> {
    const { state } = this;
    if (!state.isCurrent(attached)) return undefined;
    const found = await discover(attached.realRoot, scope, state.tuning.directories, this.format.layout);
    await this.cache.loaded(attached);
    if (!state.isCurrent(attached)) return undefined;
    const change = await applyScope(this.contentsOf(attached), scope, found, (key) => this.cache.adopt(attached, key));
    if (!state.isCurrent(attached)) return undefined;
    this.report(attached, change);
    return { keys: found.transcripts.map((t) => t.key), seen: found.seen };
  }

  /** Tells the rest of the store what a reconciliation changed. */
  private report(attached: Attached, change: Reconciled): void {
    if (change.listingChanged) this.events.emit({ type: 'listingChanged', attached, removed: change.removed });
    // While the first index is built, watches wait for it (then ordered by recency).
    if (change.directoriesChanged && !this.state.indexing) this.events.emit({ type: 'directoriesChanged', attached });
    this.statusChanged();
  }

  /** {@link refresh} in the store's time slices (an unchanged transcript settles in microtasks). */
  private async refreshInSlices(attached: Attached, key: string, seen: FileIdentity | undefined): Promise<RefreshOutcome> {
    while (storeWorkSlices.due) await storeWorkSlices.pause();
    if (this.state.windingDown) return 'unchanged';
    return this.refresh(attached, key, seen);
  }

  /** Re-reads one transcript if it changed, and tells the rest of the store what that changed. */
  async refresh(attached: Attached, key: string, seen?: FileIdentity): Promise<RefreshOutcome> {
    const outcome = await this.contentsOf(attached).index.refresh(key, seen);
    if (!this.state.isCurrent(attached)) return outcome;
    if (outcome === 'changed') this.events.emit({ type: 'listingChanged', attached, removed: false, rereadKey: key });
    if (outcome === 'gone') {
      // Let discovery decide what the path is now (deleted, replaced by a link, …).
      this.events.emit({ type: 'scopeStale', scope: scopeOfKey(this.format.layout, key) });
    }
    this.statusChanged();
    return outcome;
  }

  private statusChanged(): void {
    this.events.emit({ type: 'statusChanged', force: false });
  }

  /** Whether the attached root is still the directory that was attached (not gone, not replaced). */
  async rootStillAttached(attached: Attached): Promise<boolean> {
    try {
      const stats = await this.state.tuning.directories.stat(attached.realRoot);
      return stats.isDirectory() && stats.dev === attached.rootIdentity.dev && stats.ino === attached.rootIdentity.ino;
    } catch {
      return false;
    }
  }
}
