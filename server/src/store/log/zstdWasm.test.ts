/**
 * libzstd in WebAssembly, the store's zstd decoder wherever it loads: the same plaintext as the
 * reference compressor's input and as fzstd, the same refusals on damage, a fallback when the
 * binary is missing or not the expected build.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as zlib from 'node:zlib';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { findProgram } from '../../../../test/support/conformance';
import {
  MAX_ONE_CALL_FRAME_BYTES,
  defaultZstdDecoder,
  fzstdDecoder,
  initZstdSupport,
  wasmZstdDecoder,
  type ZstdFrameDecoder,
} from './zstdDecoder';
import { scanZstdFrame, type ZstdFrame } from './zstdFrames';
import { instantiateWasmZstd, loadWasmZstd } from './zstdWasm';
import { DAMAGE_PLAINTEXTS, forEachDamagedFrame } from '../../testing/zstdDamage';

const zstdCli = findProgram('zstd');
await initZstdSupport();

const wasm = wasmZstdDecoder();
const streaming = fzstdDecoder({ oneCall: false });
const encoder = new TextEncoder();

function compress(plaintext: Uint8Array, args: string[] = []): Uint8Array {
  return new Uint8Array(execFileSync('zstd', ['-q', '-c', '--check', ...args], { input: plaintext, maxBuffer: 64 * 1024 * 1024 }));
}

function frameInfo(frame: Uint8Array): ZstdFrame {
  const scan = scanZstdFrame(frame, 0);
  if (!('frame' in scan)) throw new Error(`not one complete frame: ${JSON.stringify(scan)}`);
  return scan.frame;
}

type Outcome = { sha256: string } | { failed: true };

const digest = (bytes: Uint8Array): Outcome => ({ sha256: createHash('sha256').update(bytes).digest('hex') });

/** A decoding's outcome: the plaintext's digest, or that it failed. */
function outcome(decoder: ZstdFrameDecoder, frame: Uint8Array, info: ZstdFrame): Outcome {
  const pieces: Buffer[] = [];
  try {
    decoder.decodeFrame(frame, info, (piece) => pieces.push(Buffer.from(piece)));
  } catch {
    return { failed: true };
  }
  return digest(Buffer.concat(pieces));
}

/** `node:zlib`'s zstd where this runtime has it (Node ≥ 22.15): dsh's own decoder. */
const nodeZstd = (zlib as { zstdDecompressSync?: (input: Uint8Array) => Buffer }).zstdDecompressSync;

/**
 * The reference decoder's outcome: dsh's own, `node:zlib` (libzstd 1.5.7 on Node 22.23 and 24.21),
 * where present; else `zstd -d` (the CLI's libzstd, 1.5.4 here), checksums verified either way.
 */
function referenceOutcome(frame: Uint8Array): Outcome & { by: 'node:zlib' | 'zstd -d' } {
  try {
    if (nodeZstd) return { ...digest(nodeZstd(frame)), by: 'node:zlib' };
  } catch {
    return { failed: true, by: 'node:zlib' };
  }
  try {
    return { ...digest(execFileSync('zstd', ['-q', '-d', '-c'], { input: frame, maxBuffer: 64 * 1024 * 1024, stdio: ['pipe', 'pipe', 'ignore'] })), by: 'zstd -d' };
  } catch {
    return { failed: true, by: 'zstd -d' };
  }
}

describe('loading libzstd’s wasm build', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'dsh-zstd-wasm-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads on this runtime from the installed package, and is the store’s decoder', () => {
    expect(wasm?.name).toBe('zstd-wasm');
    expect(defaultZstdDecoder().name).toBe('zstd-wasm');
  });

  it('gives no decoder (never an exception) when the binary is missing, not wasm, or another build', async () => {
    const notWasm = path.join(dir, 'not.wasm');
    writeFileSync(notWasm, 'not a wasm module');
    // The smallest valid module: no imports, no exports.
    const empty = path.join(dir, 'empty.wasm');
    writeFileSync(empty, Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
    expect(await loadWasmZstd([path.join(dir, 'missing.wasm')])).toBeUndefined();
    expect(await loadWasmZstd([notWasm])).toBeUndefined();
    expect(await loadWasmZstd([empty])).toBeUndefined();
    expect(await instantiateWasmZstd(new Uint8Array(3))).toBeUndefined();
  });

  it('takes the first candidate that loads', async () => {
    const installed = path.join(path.dirname(require.resolve('@bokuweb/zstd-wasm')), 'zstd.wasm');
    expect(await loadWasmZstd([path.join(dir, 'missing.wasm'), installed])).toBeDefined();
  });
});

const segmentArbitrary: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc
    .array(fc.record({ seq: fc.nat(), text: fc.string({ unit: 'grapheme', maxLength: 80 }) }), { maxLength: 40 })
    .map((records) => encoder.encode(records.map((record) => `${JSON.stringify({ type: 'user/message', ...record })}\n`).join(''))),
  fc.uint8Array({ maxLength: 3000 }),
  fc.record({ byte: fc.integer({ min: 0, max: 255 }), length: fc.integer({ min: 1, max: 300_000 }) }).map(({ byte, length }) => new Uint8Array(length).fill(byte)),
  fc.integer({ min: 1, max: 300 }).map((repeat) => encoder.encode('{"type":"assistant/chunk","text":"lorem ipsum dolor"}\n'.repeat(repeat * 40))),
);

describe.skipIf(!zstdCli.found)(`libzstd in wasm against the reference compressor and fzstd ${zstdCli.reason ?? ''}`, () => {
  const decoder = wasm as ZstdFrameDecoder;

  it('decodes every frame shape to exactly the compressed bytes, as fzstd does', () => {
    fc.assert(
      fc.property(
        fc.array(segmentArbitrary, { maxLength: 6 }).map((segments) => Buffer.concat(segments)),
        fc.constantFrom(['-1'], ['-3', '--no-content-size'], ['-19'], ['-3', '--zstd=wlog=10'], ['-3', '--no-check']),
        (plaintext, args) => {
          const frame = compress(plaintext, [...args]);
          const info = frameInfo(frame);
          const expected = digest(plaintext);
          expect(outcome(decoder, frame, info)).toEqual(expected);
          expect(outcome(streaming, frame, info)).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a damaged frame (any byte changed) fails exactly when dsh’s decoder fails, else gives its bytes; so does fzstd', () => {
    const frames = DAMAGE_PLAINTEXTS.map((plaintext) => compress(plaintext, ['-3', '--no-content-size']));
    let failures = 0;
    let fzstdLaxer = 0;
    let olderLibzstdLaxer = 0;
    const stillFrames = forEachDamagedFrame(frames, 400, (damaged, frame) => {
      const { by, ...reference } = referenceOutcome(damaged);
      const ours = outcome(decoder, damaged, frame);
      const fzstd = outcome(streaming, damaged, frame);
      if (by === 'zstd -d' && 'failed' in ours && !('failed' in reference)) {
        // libzstd 1.5.4's CLI accepts a few damaged frames whose plaintext still checks out
        // that 1.5.7 (node:zlib, dsh's decoder) and the wasm build refuse: fzstd refuses them too.
        expect(fzstd).toEqual({ failed: true });
        olderLibzstdLaxer++;
        return;
      }
      expect(ours).toEqual(reference);
      if ('failed' in ours) failures++;
      // fzstd decodes some frames that break the format (zstdDecoder.ts): it may accept what
      // libzstd refuses, never refuse what libzstd accepts, never give other bytes.
      if ('failed' in ours) fzstdLaxer += 'failed' in fzstd ? 0 : 1;
      else expect(fzstd).toEqual(ours);
    });
    expect(stillFrames).toBeGreaterThan(100);
    expect(failures).toBeGreaterThan(50);
    expect(fzstdLaxer).toBeLessThan(failures);
    expect(olderLibzstdLaxer).toBeLessThan(stillFrames / 20);
  });

  it('reuses its buffers across frames of any size, up to the one-call limit and past it', () => {
    const sizes = [10, 200_000, 5, MAX_ONE_CALL_FRAME_BYTES - 1000, 300, MAX_ONE_CALL_FRAME_BYTES + 300_000, 7];
    for (const size of sizes) {
      const plaintext = new Uint8Array(size).map((_, i) => (i % 251 === 0 ? 10 : 97 + ((i * 7) % 26)));
      const frame = compress(plaintext, ['-1', '--no-content-size']);
      const info = frameInfo(frame);
      const pieces: Buffer[] = [];
      decoder.decodeFrame(frame, info, (piece) => pieces.push(Buffer.from(piece)));
      expect(Buffer.concat(pieces).equals(Buffer.from(plaintext))).toBe(true);
      expect(Math.max(0, ...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(1024 * 1024);
    }
  });
});
