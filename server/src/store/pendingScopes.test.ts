import { describe, expect, it } from 'vitest';
import { PendingScopes } from './pendingScopes';

describe('PendingScopes', () => {
  it('coalesces: sessions of a pending project are covered by it, duplicates collapse', () => {
    const pending = new PendingScopes();
    pending.add({ kind: 'dir', dir: 'p/a' });
    pending.add({ kind: 'dir', dir: 'p/a' });
    pending.add({ kind: 'dir', dir: 'q/b' });
    pending.add({ kind: 'dir', dir: 'p' });
    expect(pending.includesRoot).toBe(false);
    expect(pending.take()).toEqual([
      { kind: 'dir', dir: 'q/b' },
      { kind: 'dir', dir: 'p' },
    ]);
    expect(pending.take()).toEqual([]);
  });

  it('lets the root cover everything', () => {
    const pending = new PendingScopes();
    pending.add({ kind: 'dir', dir: 'p' });
    pending.add({ kind: 'file', key: 'projects/p/x.jsonl' });
    pending.add({ kind: 'root' });
    expect(pending.includesRoot).toBe(true);
    expect(pending.take()).toEqual([{ kind: 'root' }]);
    expect(pending.includesRoot).toBe(false);
  });

  it('lets a folder at any depth cover the folders and files below it (a 3-deep layout)', () => {
    const pending = new PendingScopes();
    pending.add({ kind: 'file', key: 'sessions/2025/01/02/rollout-a.jsonl' });
    pending.add({ kind: 'file', key: 'sessions/2025/01/03/rollout-b.jsonl' });
    pending.add({ kind: 'dir', dir: 'sessions/2025/01/03' });
    pending.add({ kind: 'dir', dir: 'sessions/2025/02/01' });
    pending.add({ kind: 'dir', dir: 'sessions/2025/02' });
    pending.add({ kind: 'file', key: 'sessions/2025/02/01/rollout-c.jsonl' });
    pending.add({ kind: 'file', key: 'sessions/2025/01/02/rollout-a.jsonl' });
    expect(pending.take()).toEqual([
      { kind: 'dir', dir: 'sessions/2025/01/03' },
      { kind: 'dir', dir: 'sessions/2025/02' },
      { kind: 'file', key: 'sessions/2025/01/02/rollout-a.jsonl' },
    ]);
    // A folder covers only what lies below it, not a sibling sharing its name's start.
    pending.add({ kind: 'dir', dir: 'tmp/p' });
    pending.add({ kind: 'file', key: 'tmp/pq/chats/session-1.json' });
    pending.add({ kind: 'file', key: 'tmp/p/chats/session-2.json' });
    expect(pending.take()).toEqual([
      { kind: 'dir', dir: 'tmp/p' },
      { kind: 'file', key: 'tmp/pq/chats/session-1.json' },
    ]);
  });
});
