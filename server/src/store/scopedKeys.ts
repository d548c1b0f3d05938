/**
 * A set of root-relative keys (`<projectDir>`, `<projectDir>/<sessionDir>` or deeper) that lists
 * the keys of one discovery scope looking only at its project's keys: a watch event re-reads one
 * session directory, and at 100,000 sessions filtering every key for it would make each
 * event cost as much as a full rescan.
 */
import type { DiscoveryScope } from './discovery';

function projectOf(key: string): string {
  const slash = key.indexOf('/');
  return slash === -1 ? key : key.slice(0, slash);
}

/**
 * Root-relative keys grouped by project directory: one set per project rather than per
 * session directory, since a set costs ~150 bytes and most session directories hold one key.
 */
export class ScopedKeys implements Iterable<string> {
  private readonly byProject = new Map<string, Set<string>>();
  private count = 0;

  /** How many keys are held. */
  get size(): number {
    return this.count;
  }

  /** Whether `key` is held. */
  has(key: string): boolean {
    return this.byProject.get(projectOf(key))?.has(key) ?? false;
  }

  /** Adds `key`; false when it was already held. */
  add(key: string): boolean {
    const project = projectOf(key);
    let keys = this.byProject.get(project);
    if (!keys) this.byProject.set(project, (keys = new Set()));
    if (keys.has(key)) return false;
    keys.add(key);
    this.count++;
    return true;
  }

  /** Removes `key`; false when it was not held. */
  delete(key: string): boolean {
    const project = projectOf(key);
    const keys = this.byProject.get(project);
    if (!keys?.delete(key)) return false;
    this.count--;
    if (keys.size === 0) this.byProject.delete(project);
    return true;
  }

  /** The project directories holding at least one key. */
  projects(): string[] {
    return [...this.byProject.keys()];
  }

  /** Every key. */
  *[Symbol.iterator](): Iterator<string> {
    for (const keys of this.byProject.values()) yield* keys;
  }

  /**
   * The keys inside a scope (the scope's own directory included), as a copy so the caller may
   * add and delete while going through them. Same answer as filtering with `inScope`; a
   * session scope looks only at its project's keys.
   */
  inScope(scope: DiscoveryScope): string[] {
    if (scope.kind === 'root') return [...this];
    const keys = this.byProject.get(scope.projectDir);
    if (!keys) return [];
    if (scope.kind === 'project') return [...keys];
    const dir = `${scope.projectDir}/${scope.sessionDir}`;
    const prefix = `${dir}/`;
    const found: string[] = [];
    for (const key of keys) if (key === dir || key.startsWith(prefix)) found.push(key);
    return found;
  }
}
