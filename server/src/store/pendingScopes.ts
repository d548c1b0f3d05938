/** Scopes waiting to be re-read, coalesced: the root covers everything, a project its sessions. */
import type { DiscoveryScope } from './discovery';

/** The set of scopes changed since the last flush. */
export class PendingScopes {
  private root = false;
  private readonly projects = new Set<string>();
  /** `<projectDir>/<sessionDir>` keys. */
  private readonly sessions = new Map<string, DiscoveryScope>();

  /** Records a changed scope. */
  add(scope: DiscoveryScope): void {
    if (scope.kind === 'root') this.root = true;
    else if (scope.kind === 'project') this.projects.add(scope.projectDir);
    else this.sessions.set(`${scope.projectDir}/${scope.sessionDir}`, scope);
  }

  /** Whether `take` would return the whole root. */
  get includesRoot(): boolean {
    return this.root;
  }

  /** The smallest set of scopes covering every recorded change; empties the set. */
  take(): DiscoveryScope[] {
    let scopes: DiscoveryScope[];
    if (this.root) {
      scopes = [{ kind: 'root' }];
    } else {
      scopes = [...this.projects].map((projectDir): DiscoveryScope => ({ kind: 'project', projectDir }));
      for (const scope of this.sessions.values()) {
        if (scope.kind === 'session' && !this.projects.has(scope.projectDir)) scopes.push(scope);
      }
    }
    this.root = false;
    this.projects.clear();
    this.sessions.clear();
    return scopes;
  }
}
