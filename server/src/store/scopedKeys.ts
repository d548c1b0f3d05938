/**
 * A set of root-relative keys (`<projectDir>`, `<projectDir>/<sessionDir>` or deeper) that lists
 * the keys of one discovery scope without looking at the others: a watch event re-reads one
 * session directory, and at 100,000 sessions filtering every key for it would make each
 * event cost as much as a full rescan.
 */
import type { DiscoveryScope } from './discovery';

/** The session-directory group of a key: its first two segments (a project directory is its own group). */
function groupOf(key: string): string {
  const first = key.indexOf('/');
  if (first === -1) return key;
  const second = key.indexOf('/', first + 1);
  return second === -1 ? key : key.slice(0, second);
}

function projectOf(group: string): string {
  const slash = group.indexOf('/');
  return slash === -1 ? group : group.slice(0, slash);
}

/** Root-relative keys grouped by project and session directory. */
export class ScopedKeys implements Iterable<string> {
  private readonly groups = new Map<string, Set<string>>();
  private readonly groupsOfProject = new Map<string, Set<string>>();
  private count = 0;

  /** How many keys are held. */
  get size(): number {
    return this.count;
  }

  /** Whether `key` is held. */
  has(key: string): boolean {
    return this.groups.get(groupOf(key))?.has(key) ?? false;
  }

  /** Adds `key`; false when it was already held. */
  add(key: string): boolean {
    const group = groupOf(key);
    let keys = this.groups.get(group);
    if (!keys) {
      keys = new Set();
      this.groups.set(group, keys);
      const project = projectOf(group);
      let groups = this.groupsOfProject.get(project);
      if (!groups) this.groupsOfProject.set(project, (groups = new Set()));
      groups.add(group);
    }
    if (keys.has(key)) return false;
    keys.add(key);
    this.count++;
    return true;
  }

  /** Removes `key`; false when it was not held. */
  delete(key: string): boolean {
    const group = groupOf(key);
    const keys = this.groups.get(group);
    if (!keys?.delete(key)) return false;
    this.count--;
    if (keys.size === 0) {
      this.groups.delete(group);
      const project = projectOf(group);
      const groups = this.groupsOfProject.get(project);
      groups?.delete(group);
      if (groups?.size === 0) this.groupsOfProject.delete(project);
    }
    return true;
  }

  /** Every key. */
  *[Symbol.iterator](): Iterator<string> {
    for (const keys of this.groups.values()) yield* keys;
  }

  /**
   * The keys inside a scope (the scope's own directory included), as a copy so the caller may
   * add and delete while going through them. Same answer as filtering with `inScope`.
   */
  inScope(scope: DiscoveryScope): string[] {
    if (scope.kind === 'root') return [...this];
    if (scope.kind === 'session') return [...(this.groups.get(`${scope.projectDir}/${scope.sessionDir}`) ?? [])];
    const found: string[] = [];
    for (const group of this.groupsOfProject.get(scope.projectDir) ?? []) found.push(...(this.groups.get(group) ?? []));
    return found;
  }
}
