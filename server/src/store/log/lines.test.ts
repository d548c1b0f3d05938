/**
 * The line splitter with long pending lines: past 1 MiB a pending line is kept in one resizable
 * buffer, which must give the same lines in any chunking, copies that do not change afterwards,
 * and memory handed back the moment the line ends or passes the limit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from './lines';

const MiB = 1024 * 1024;

/** Every line `push`es of `chunks` give (null past the limit), and the pending bytes left. */
function split(chunks: readonly Uint8Array[], maxLineBytes: number): { lines: Array<string | null>; pending: number } {
  const splitter = new LineSplitter(maxLineBytes);
  const lines: Array<string | null> = [];
  for (const chunk of chunks) splitter.push(chunk, (line) => lines.push(line === undefined ? null : Buffer.from(line).toString('latin1')));
  return { lines, pending: splitter.pendingBytes };
}

/** `text` cut at `cuts` (offsets in any order). */
function chunked(text: Buffer, cuts: readonly number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...at, text.length]) {
    chunks.push(new Uint8Array(text.subarray(from, cut)));
    from = cut;
  }
  return chunks;
}

describe('long pending lines', () => {
  it('give the lines a plain split gives, in any chunking, across the 1 MiB switch and the limit', () => {
    const max = 3 * MiB;
    const sizes = fc.constantFrom(0, 10, MiB - 1, MiB, MiB + 1, 2 * MiB + 7, max, max + 1);
    fc.assert(
      fc.property(fc.array(fc.tuple(sizes, fc.integer({ min: 0, max: 25 })), { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), (lines, cuts, torn) => {
        const texts = lines.map(([size, letter]) => String.fromCharCode(97 + letter).repeat(size));
        const text = Buffer.from(texts.join('\n') + (torn ? '' : '\n'), 'latin1');
        const complete = torn ? texts.slice(0, -1) : texts;
        const result = split(chunked(text, cuts.map((cut) => cut * 65_537)), max);
        expect(result.lines).toEqual(complete.map((line) => (line.length > max ? null : line)));
        expect(result.pending).toBe(torn ? texts.at(-1)!.length : 0);
      }),
      { numRuns: 40 },
    );
  });

  it('a saved or forked pending line is a copy: later bytes do not change it', () => {
    const splitter = new LineSplitter(8 * MiB);
    splitter.push(new Uint8Array(2 * MiB).fill(0x61), () => undefined);
    const saved = splitter.pendingLine()!;
    const fork = splitter.fork();
    splitter.push(new Uint8Array(MiB).fill(0x62), () => undefined);
    splitter.push(Uint8Array.of(0x0a), () => undefined);
    splitter.push(new Uint8Array(3 * MiB).fill(0x63), () => undefined);
    expect(saved.length).toBe(2 * MiB);
    expect(saved.every((byte) => byte === 0x61)).toBe(true);
    const lines: number[] = [];
    fork.push(Uint8Array.of(0x7a, 0x0a), (line) => lines.push(line!.length, line!.at(-2)!, line!.at(-1)!));
    expect(lines).toEqual([2 * MiB + 1, 0x61, 0x7a]);
    const restored = new LineSplitter(8 * MiB);
    restored.restorePending(saved, saved.length);
    restored.push(Uint8Array.of(0x0a), (line) => lines.push(line!.length));
    expect(lines.at(-1)).toBe(2 * MiB);
  });

  it('hands the memory of a long line back as soon as it passes the limit, not at a later collection', () => {
    const max = 64 * MiB;
    const splitter = new LineSplitter(max);
    const chunk = new Uint8Array(MiB).fill(0x78);
    for (let pushed = 0; pushed < max; pushed += chunk.length) splitter.push(chunk, () => undefined);
    const holding = process.memoryUsage().rss;
    splitter.push(chunk, () => undefined); // past the limit: the line is only counted from here
    const after = process.memoryUsage().rss;
    expect(splitter.heldBytes).toBe(0);
    expect(holding - after).toBeGreaterThan(48 * MiB);
  });
});
