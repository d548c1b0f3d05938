import { describe, expect, it } from 'vitest';
import { QuickSync } from './quickSync';

/** A call during which `ms` pass on the gate's clock. */
function callTaking(gate: QuickSync, clock: { now: number }, ms: number, fail = false): void {
  gate.call(() => {
    clock.now += ms;
    if (fail) throw new Error('ENOENT');
  });
}

describe('QuickSync', () => {
  it('stays synchronous through quick calls and a lone slow one (a descheduled thread)', () => {
    const clock = { now: 0 };
    const gate = new QuickSync(() => clock.now, 2, 1000);
    expect(gate.call(() => 'result')).toBe('result');
    for (let i = 0; i < 200; i++) callTaking(gate, clock, i % 50 === 0 ? 5 : 0.01);
    expect(gate.quick).toBe(true);
  });

  it('goes to the thread pool for a while once calls keep being slow (a cold disk), then tries again', () => {
    const clock = { now: 0 };
    const gate = new QuickSync(() => clock.now, 2, 1000);
    callTaking(gate, clock, 5);
    callTaking(gate, clock, 5);
    expect(gate.quick).toBe(true);
    // A failing call (a file gone meanwhile) counts too, and its error goes to the caller.
    expect(() => callTaking(gate, clock, 5, true)).toThrow('ENOENT');
    expect(gate.quick).toBe(false);
    clock.now += 999;
    expect(gate.quick).toBe(false);
    clock.now += 1;
    expect(gate.quick).toBe(true);
    // Back to quick calls: stays synchronous.
    for (let i = 0; i < 10; i++) callTaking(gate, clock, 0.01);
    expect(gate.quick).toBe(true);
  });

  it('rethrows what the call throws', () => {
    const gate = new QuickSync(() => 0, 2, 1000);
    expect(() => gate.call(() => JSON.parse('{'))).toThrow(SyntaxError);
  });
});
