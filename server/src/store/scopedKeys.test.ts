import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inScope, type DiscoveryScope } from './layoutScopes';
import { ScopedKeys } from './scopedKeys';

const segment = fc.constantFrom('p', 'q', 'p.q', 's', 's1', 'session.jsonl', 'session.jsonl.zstd');
const key = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('/'));
const scope: fc.Arbitrary<DiscoveryScope> = fc.oneof(
  fc.constant<DiscoveryScope>({ kind: 'root' }),
  key.map((dir): DiscoveryScope => ({ kind: 'dir', dir })),
  key.map((file): DiscoveryScope => ({ kind: 'file', key: file })),
);

describe('ScopedKeys', () => {
  it('holds what a Set would and lists a scope exactly as filtering with inScope does, whatever the depth of the base', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), fc.array(fc.tuple(fc.boolean(), key)), fc.array(scope, { minLength: 1, maxLength: 5 }), (baseDepth, ops, scopes) => {
        const keys = new ScopedKeys(baseDepth);
        const model = new Set<string>();
        for (const [add, k] of ops) {
          expect(add ? keys.add(k) : keys.delete(k)).toBe(add ? !model.has(k) : model.has(k));
          if (add) model.add(k);
          else model.delete(k);
        }
        expect(keys.size).toBe(model.size);
        expect([...keys].sort()).toEqual([...model].sort());
        for (const k of model) expect(keys.has(k)).toBe(true);
        for (const s of scopes) expect(keys.inScope(s).sort()).toEqual([...model].filter((k) => inScope(k, s)).sort());
      }),
    );
  });

  it('returns a copy the caller may change the set while going through', () => {
    const keys = new ScopedKeys();
    for (const k of ['p', 'p/s', 'p/s/session.jsonl', 'q/s/session.jsonl']) keys.add(k);
    for (const k of keys.inScope({ kind: 'dir', dir: 'p' })) keys.delete(k);
    expect([...keys]).toEqual(['q/s/session.jsonl']);
    const home = new ScopedKeys(1);
    for (const k of ['projects', 'projects/p', 'projects/p/x.jsonl', 'projects/q/y.jsonl']) home.add(k);
    for (const k of home.inScope({ kind: 'dir', dir: 'projects' })) home.delete(k);
    expect(home.size).toBe(0);
    expect([...keys]).toEqual(['q/s/session.jsonl']);
  });
});
