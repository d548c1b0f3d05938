/**
 * A set of root-relative keys (folders and session files under a layout's base) that lists the
 * keys of one discovery scope looking only at its project folder's keys: a watch event re-reads
 * one session folder or file, and at 100,000 sessions filtering every key for it would make each
 * event cost as much as a full rescan.
 */
import { inScope, projectKeyOf, type DiscoveryScope } from './layoutScopes';

/** How many `/`-separated segments a key has. */
function segmentCount(key: string): number {
  let segments = 1;
  for (let i = key.indexOf('/'); i !== -1; i = key.indexOf('/', i + 1)) segments++;
  return segments;
}

/**
 * Root-relative keys grouped by project folder (the folder one level below the layout's base):
 * one set per project rather than per session folder, since a set costs ~150 bytes and most
 * session folders hold one key. A key no deeper than a project folder is a group of its own.
 */
export class ScopedKeys implements Iterable<string> {
  private readonly byProject = new Map<string, Set<string>>();
  private count = 0;

  /** `baseDepth`: how many segments the layout's base has (0: the base is the root). */
  constructor(private readonly baseDepth = 0) {}

  /** How many keys are held. */
  get size(): number {
    return this.count;
  }

  /** Whether `key` is held. */
  has(key: string): boolean {
    return this.byProject.get(projectKeyOf(key, this.baseDepth))?.has(key) ?? false;
  }

  /** Adds `key`; false when it was already held. */
  add(key: string): boolean {
    const project = projectKeyOf(key, this.baseDepth);
    let keys = this.byProject.get(project);
    if (!keys) this.byProject.set(project, (keys = new Set()));
    if (keys.has(key)) return false;
    keys.add(key);
    this.count++;
    return true;
  }

  /** Removes `key`; false when it was not held. */
  delete(key: string): boolean {
    const project = projectKeyOf(key, this.baseDepth);
    const keys = this.byProject.get(project);
    if (!keys?.delete(key)) return false;
    this.count--;
    if (keys.size === 0) this.byProject.delete(project);
    return true;
  }

  /** The project folders (and keys no deeper) holding at least one key. */
  projects(): string[] {
    return [...this.byProject.keys()];
  }

  /** Every key. */
  *[Symbol.iterator](): Iterator<string> {
    for (const keys of this.byProject.values()) yield* keys;
  }

  /**
   * The keys inside a scope (a folder scope's own folder included), as a copy so the caller may
   * add and delete while going through them. Same answer as filtering with `inScope`; a scope
   * inside a project folder looks only at that project's keys.
   */
  inScope(scope: DiscoveryScope): string[] {
    if (scope.kind === 'root') return [...this];
    if (scope.kind === 'file') return this.has(scope.key) ? [scope.key] : [];
    const { dir } = scope;
    if (this.baseDepth > 0 && segmentCount(dir) <= this.baseDepth) {
      // The base or a folder above it: every project below it.
      const found: string[] = [];
      for (const [project, keys] of this.byProject) if (inScope(project, scope)) for (const key of keys) found.push(key);
      return found;
    }
    const project = projectKeyOf(dir, this.baseDepth);
    const keys = this.byProject.get(project);
    if (!keys) return [];
    if (project === dir) return [...keys];
    const prefix = `${dir}/`;
    const found: string[] = [];
    for (const key of keys) if (key === dir || key.startsWith(prefix)) found.push(key);
    return found;
  }
}
