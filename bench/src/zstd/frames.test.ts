import { execFileSync } from 'node:child_process';
import { decompress } from 'fzstd';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameCompressor } from '../generate/frameCompressor';
import { Random } from '../generate/random';
import { completeFrames, decodedLength, decompressFrames, frameEnds, initFrameDecoding } from './frames';

function text(random: Random, bytes: number): string {
  let out = '';
  while (out.length < bytes) out += `{"seq":${out.length},"text":"${random.uuid()} ${'abc '.repeat(random.int(0, 30))}"}\n`;
  return out;
}

describe('zstd frames', () => {
  const compressor = new FrameCompressor();
  beforeAll(() => initFrameDecoding());
  afterAll(() => compressor.dispose());

  it('splits concatenated frames and decodes them with the store decoder, equal to fzstd and the CLI', async () => {
    const random = new Random(11);
    // Single-block, multi-block (> 128 KiB) and larger-than-window (> 2 MiB) plaintexts, and an empty one.
    const parts = [text(random, 100), text(random, 4000), text(random, 300_000), '', text(random, 2_500_000), text(random, 50)].map((t) => Buffer.from(t));
    const file = Buffer.concat(await compressor.compress(parts));
    const frames = completeFrames(file);
    expect(frames).toHaveLength(parts.length);
    expect(frames.every((f, i) => f.plaintextBound >= parts[i].length && f.contentSize === undefined)).toBe(true);
    const expected = Buffer.concat(parts);
    expect(Buffer.from(decompressFrames(file)).equals(expected)).toBe(true);
    expect(decodedLength(file)).toBe(expected.length);
    expect(Buffer.from(decompress(file)).equals(expected)).toBe(true);
    expect(execFileSync('zstd', ['-dc'], { input: file, maxBuffer: 1 << 28 }).equals(expected)).toBe(true);
  });

  it('fails on a checksum that does not match, counting as when decompressing', async () => {
    const file = Buffer.concat(await compressor.compress([Buffer.from('{"type":"session"}\n'), Buffer.from('{"a":1}\n')]));
    expect(decodedLength(file)).toBe(decompressFrames(file).length);
    const flipped = Buffer.from(file);
    flipped[flipped.length - 1] ^= 0xff; // the last frame's checksum
    expect(() => decodedLength(flipped)).toThrow(/checksum/);
    expect(() => decompressFrames(flipped)).toThrow(/checksum/);
  });

  it('reports a torn last frame and stops after `limit` frames', async () => {
    const file = Buffer.concat(await compressor.compress([Buffer.from('{"type":"session"}\n'), Buffer.from('{"a":1}\n{"b":2}\n')]));
    const ends = frameEnds(file);
    expect(ends).toHaveLength(2);
    expect(frameEnds(file, 1)).toEqual([ends[0]]);
    expect(() => frameEnds(file.subarray(0, file.length - 2))).toThrow(/torn/);
    expect(() => frameEnds(Buffer.from('not zstd at all'))).toThrow(/magic/);
  });
});
