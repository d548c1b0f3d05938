/**
 * Damage a decoder must survive: plaintexts of three shapes (dsh lines, binary bytes, a block far
 * over one piece), and a property run that flips one byte of one compressed frame at a time and
 * hands each result that still scans as one whole frame to `check`.
 */
import fc from 'fast-check';
import { scanZstdFrame, type ZstdFrame } from '../store/log/zstdFrames';

const encoder = new TextEncoder();

/** What the damage tests compress: dsh-like lines, a line of binary bytes, and a 150 KB line with many short ones. */
export const DAMAGE_PLAINTEXTS: readonly Uint8Array[] = [
  encoder.encode('{"type":"user/message","seq":1,"text":"hello hello hello"}\n'.repeat(20)),
  Buffer.concat([encoder.encode('{"a":1}\n'), new Uint8Array(700).map((_, i) => (i * 131) & 0xff), encoder.encode('\n')]),
  encoder.encode('x'.repeat(150_000) + '\n' + '{"b":2}\n'.repeat(5000)),
];

/**
 * Runs `numRuns` single-byte flips (never in the magic number) over `frames`; `check` gets each
 * damaged buffer that still scans as one frame spanning it. Returns how many did.
 */
export function forEachDamagedFrame(frames: readonly Uint8Array[], numRuns: number, check: (damaged: Uint8Array, frame: ZstdFrame) => void): number {
  let stillFrames = 0;
  fc.assert(
    fc.property(fc.nat(frames.length - 1), fc.nat(), fc.integer({ min: 1, max: 255 }), (which, at, mask) => {
      const damaged = Uint8Array.from(frames[which]!);
      damaged[4 + (at % (damaged.length - 4))]! ^= mask;
      const scan = scanZstdFrame(damaged, 0);
      if (!('frame' in scan) || scan.frame.end !== damaged.length) return;
      stillFrames++;
      check(damaged, scan.frame);
    }),
    { numRuns },
  );
  return stillFrames;
}
