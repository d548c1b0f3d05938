import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineArena, StoredLine, keptEvent, type KeptEvent } from './storedLines';

const encoder = new TextEncoder();
const lineOf = (seq: number, text: string): Uint8Array => encoder.encode(JSON.stringify({ type: 'user/message', seq, data: { text } }));

describe('LineArena', () => {
  it('property: kept lines read back exactly whatever was released in between, and the buffer stays within a few times the live bytes', () => {
    fc.assert(
      fc.property(
        // Each step stores a line of some length, then lets go of a run of the kept lines (as a replace does).
        fc.array(fc.tuple(fc.integer({ min: 2_000, max: 8_000 }), fc.nat(), fc.nat({ max: 12 })), { minLength: 30, maxLength: 80 }),
        (steps) => {
          const arena = new LineArena();
          const live: KeptEvent[] = [];
          const texts: string[] = [];
          let maxLive = 0;
          steps.forEach(([length, start, count], seq) => {
            texts.push(`${seq}:${'é'.repeat(length / 2)}${'x'.repeat(length % 2)}`);
            live.push(arena.store(seq, lineOf(seq, texts[seq]), live));
            maxLive = Math.max(maxLive, live.reduce((sum, kept) => sum + (kept as StoredLine).length, 0));
            const dropped = live.splice(start % live.length, count);
            arena.release(dropped, live);
          });
          for (const kept of live) {
            expect(keptEvent(kept)).toEqual(JSON.parse(new TextDecoder().decode(lineOf(kept.seq, texts[kept.seq]))));
          }
          // Dead bytes are squeezed out before the buffer grows, so it grows only past twice the live bytes.
          expect(arena.bytes.length).toBeLessThanOrEqual(Math.max(64 * 1024, 2 * maxLive));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('compacts a shadowed run away: the survivors move to the front in log order', () => {
    const arena = new LineArena();
    const live: KeptEvent[] = [];
    for (let seq = 0; seq < 10; seq++) live.push(arena.store(seq, lineOf(seq, 'x'.repeat(1000)), live));
    const dropped = live.splice(0, 8);
    arena.release(dropped, live);
    expect(live.map((kept) => (kept as StoredLine).offset)).toEqual([0, (live[0] as StoredLine).length]);
    expect(live.map((kept) => keptEvent(kept).seq)).toEqual([8, 9]);
  });

  it('leaves lines of another arena alone (a torn tail is read by a copy of the fold)', () => {
    const main = new LineArena();
    const fork = new LineArena();
    const shared = main.store(0, lineOf(0, 'main'), []);
    const live: KeptEvent[] = [shared];
    live.push(fork.store(1, lineOf(1, 'fork'), live));
    const dropped = live.splice(1, 1);
    fork.release(dropped, live);
    expect(shared.offset).toBe(0);
    expect(keptEvent(shared).data).toEqual({ text: 'main' });
  });

  it('hands a finished arena\'s buffer to the next arena, and a grown arena\'s old buffer too', () => {
    const first = new LineArena();
    first.store(0, lineOf(0, 'x'.repeat(100)), []);
    const used = first.bytes;
    first.recycle();
    expect(first.bytes.length).toBe(0);
    const next = new LineArena();
    next.store(0, lineOf(0, 'y'), []);
    expect(next.bytes).toBe(used);
    const live: KeptEvent[] = [];
    for (let seq = 0; seq < 40; seq++) live.push(next.store(seq, lineOf(seq, 'z'.repeat(2000)), live));
    expect(next.bytes).not.toBe(used);
    const third = new LineArena();
    third.store(0, lineOf(0, 'w'), []);
    expect(third.bytes).toBe(used);
    // The grown arena's lines read its current buffer, untouched by the arena that took the old one.
    expect(live.map((kept) => keptEvent(kept).seq)).toEqual([...Array(40).keys()]);
  });
});
