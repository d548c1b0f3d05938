import { describe, expect, it } from 'vitest';
import type { SessionStore, SessionSurface } from '../resolver';
import { SessionSurfaceCache } from './surfaceCache';

function countingStore() {
  const reads: string[] = [];
  const store = {
    readSurface: (sessionId: string, _signal?: AbortSignal, agent?: string) => {
      reads.push(`${agent ?? 'dsh'}:${sessionId}`);
      return Promise.resolve({ header: { id: sessionId }, capturedThroughSeq: null, events: [] } as unknown as SessionSurface);
    },
  } as unknown as SessionStore;
  return { store, reads };
}

describe('the surface cache', () => {
  it('caches another agent’s surfaces apart from dsh’s same id, and forgets one whose content changed', async () => {
    const { store, reads } = countingStore();
    const cache = new SessionSurfaceCache(() => store);
    const claude = await cache.read('x', undefined, 'claude-code');
    expect(await cache.read('x', undefined, 'claude-code')).toBe(claude);
    await cache.read('x');
    expect(reads).toEqual(['claude-code:x', 'dsh:x']);
    cache.forget([{ agent: 'claude-code', id: 'x' }]);
    await cache.read('x', undefined, 'claude-code');
    await cache.read('x');
    expect(reads).toEqual(['claude-code:x', 'dsh:x', 'claude-code:x']);
  });
});
