import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareStoreOrder } from './storeOrder';

describe('compareStoreOrder', () => {
  it('puts the newest createdAt first', () => {
    const sessions = [
      { id: 'old', createdAt: 1 },
      { id: 'new', createdAt: 9 },
      { id: 'mid', createdAt: 5 },
    ];
    expect(sessions.sort(compareStoreOrder).map((s) => s.id)).toEqual(['new', 'mid', 'old']);
  });

  it('breaks createdAt ties exactly as a.id.localeCompare(b.id) does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(Math.sign(compareStoreOrder({ id: a, createdAt: 1 }, { id: b, createdAt: 1 }))).toBe(Math.sign(a.localeCompare(b)));
      }),
      { numRuns: 2000 },
    );
  });
});
