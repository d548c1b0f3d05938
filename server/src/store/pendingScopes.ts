/** Scopes waiting to be re-read, coalesced: the root covers everything, a folder what lies below it. */
import type { DiscoveryScope } from './layoutScopes';

/** The set of scopes changed since the last flush. */
export class PendingScopes {
  private root = false;
  private readonly dirs = new Set<string>();
  private readonly files = new Set<string>();

  /** Records a changed scope. */
  add(scope: DiscoveryScope): void {
    if (scope.kind === 'root') this.root = true;
    else if (scope.kind === 'dir') this.dirs.add(scope.dir);
    else this.files.add(scope.key);
  }

  /** Whether `take` would return the whole root. */
  get includesRoot(): boolean {
    return this.root;
  }

  /** Whether a folder pending holds `key` (a folder key or a file key). */
  private covered(key: string): boolean {
    for (let slash = key.lastIndexOf('/'); slash > 0; slash = key.lastIndexOf('/', slash - 1)) {
      if (this.dirs.has(key.slice(0, slash))) return true;
    }
    return false;
  }

  /**
   * The smallest set of scopes covering every recorded change, folders first (in the order
   * recorded), then files; empties the set.
   */
  take(): DiscoveryScope[] {
    const scopes: DiscoveryScope[] = [];
    if (this.root) {
      scopes.push({ kind: 'root' });
    } else {
      for (const dir of this.dirs) if (!this.covered(dir)) scopes.push({ kind: 'dir', dir });
      for (const key of this.files) if (!this.dirs.has(key) && !this.covered(key)) scopes.push({ kind: 'file', key });
    }
    this.root = false;
    this.dirs.clear();
    this.files.clear();
    return scopes;
  }
}
