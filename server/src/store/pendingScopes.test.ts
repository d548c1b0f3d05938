import { describe, expect, it } from 'vitest';
import { PendingScopes } from './pendingScopes';

describe('PendingScopes', () => {
  it('coalesces: sessions of a pending project are covered by it, duplicates collapse', () => {
    const pending = new PendingScopes();
    pending.add({ kind: 'session', projectDir: 'p', sessionDir: 'a' });
    pending.add({ kind: 'session', projectDir: 'p', sessionDir: 'a' });
    pending.add({ kind: 'session', projectDir: 'q', sessionDir: 'b' });
    pending.add({ kind: 'project', projectDir: 'p' });
    expect(pending.includesRoot).toBe(false);
    expect(pending.take()).toEqual([
      { kind: 'project', projectDir: 'p' },
      { kind: 'session', projectDir: 'q', sessionDir: 'b' },
    ]);
    expect(pending.take()).toEqual([]);
  });

  it('lets the root cover everything', () => {
    const pending = new PendingScopes();
    pending.add({ kind: 'project', projectDir: 'p' });
    pending.add({ kind: 'root' });
    expect(pending.includesRoot).toBe(true);
    expect(pending.take()).toEqual([{ kind: 'root' }]);
    expect(pending.includesRoot).toBe(false);
  });
});
