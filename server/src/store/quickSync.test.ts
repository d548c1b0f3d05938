import { describe, expect, it } from 'vitest';
import { QuickSync } from './quickSync';

describe('QuickSync', () => {
  it('stays synchronous while calls are quick, and goes to the thread pool for a while after a slow one', () => {
    let now = 0;
    const gate = new QuickSync(() => now, 2, 1000);
    expect(gate.quick).toBe(true);
    expect(gate.call(() => 'fast')).toBe('fast');
    expect(gate.quick).toBe(true);
    // A call during which 5 ms pass.
    expect(gate.call(() => ((now += 5), 'slow'))).toBe('slow');
    expect(gate.quick).toBe(false);
    now += 999;
    expect(gate.quick).toBe(false);
    now += 1;
    expect(gate.quick).toBe(true);
  });

  it('counts a call that throws (a missing file) by its time too, and rethrows', () => {
    let now = 0;
    const gate = new QuickSync(() => now, 2, 1000);
    expect(() =>
      gate.call(() => {
        now += 3;
        throw new Error('ENOENT');
      }),
    ).toThrow('ENOENT');
    expect(gate.quick).toBe(false);
    now += 1000;
    expect(gate.quick).toBe(true);
    expect(() => gate.call(() => { throw new Error('ENOENT'); })).toThrow('ENOENT');
    expect(gate.quick).toBe(true);
  });
});
