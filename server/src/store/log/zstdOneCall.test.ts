/**
 * The one-call decoding of a zstd frame (fzstd straight into one buffer of the frame's plaintext
 * bound) against the reference compressor's input and against the streaming decoder: the same
 * bytes, or no answer at all, never other bytes.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findProgram, fixtureStore } from '../../../../test/support/conformance';
import { loadSessionLog } from './load';
import { concatBytes, ev, headerLine, rawTranscript } from '../../testing/testLogs';
import { DAMAGE_PLAINTEXTS, forEachDamagedFrame } from '../../testing/zstdDamage';
import { MAX_ONE_CALL_FRAME_BYTES, decodeZstdFrameInOneCall, fzstdDecoder, initZstdSupport, type ZstdFrameDecoder } from './zstdDecoder';
import { scanZstdFrame, type ZstdFrame } from './zstdFrames';

const zstdCli = findProgram('zstd');
await initZstdSupport();

const oneCallDecoder = fzstdDecoder();
const streamingDecoder = fzstdDecoder({ oneCall: false });

/** How the reference compressor is asked to write a frame. */
interface FrameShape {
  level: number;
  /** Declare the content size in the header (the CLI then may write a single-segment frame). */
  sizeKnown: boolean;
  checksum: boolean;
  /** Window log; undefined for the level's default (2 MiB and more, as dsh's frames). */
  windowLog?: number;
}

const DSH_SHAPE: FrameShape = { level: 3, sizeKnown: false, checksum: true };

/** One frame of `plaintext` made by the `zstd` command (stdin, so no content size unless declared). */
function compress(plaintext: Uint8Array, shape: FrameShape): Uint8Array {
  const args = ['-q', '-c', `-${shape.level}`, shape.checksum ? '--check' : '--no-check'];
  if (shape.sizeKnown) args.push(`--stream-size=${plaintext.length}`);
  if (shape.windowLog !== undefined) args.push(`--zstd=wlog=${shape.windowLog}`);
  return new Uint8Array(execFileSync('zstd', args, { input: plaintext, maxBuffer: 64 * 1024 * 1024 }));
}

function frameInfo(frame: Uint8Array): ZstdFrame {
  const scan = scanZstdFrame(frame, 0);
  if (!('frame' in scan)) throw new Error(`not one complete frame: ${JSON.stringify(scan)}`);
  expect(scan.frame.end).toBe(frame.length);
  return scan.frame;
}

/** A full decoding's outcome: the plaintext as hex, or the failure's message. */
function outcome(decoder: ZstdFrameDecoder, frame: Uint8Array, info: ZstdFrame): { hex: string } | { error: string } {
  const pieces: Buffer[] = [];
  try {
    decoder.decodeFrame(frame, info, (piece) => pieces.push(Buffer.from(piece)));
  } catch (error) {
    return { error: (error as Error).message };
  }
  return { hex: Buffer.concat(pieces).toString('hex') };
}

const encoder = new TextEncoder();

/** Pieces of plaintext that exercise every block type: JSONL text, incompressible bytes, long runs, NULs. */
const segmentArbitrary: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc
    .array(fc.record({ seq: fc.nat(), text: fc.string({ unit: 'grapheme', maxLength: 80 }) }), { maxLength: 40 })
    .map((records) => encoder.encode(records.map((record) => `${JSON.stringify({ type: 'user/message', ...record })}\n`).join(''))),
  fc.uint8Array({ maxLength: 3000 }),
  fc.record({ byte: fc.integer({ min: 0, max: 255 }), length: fc.integer({ min: 1, max: 200_000 }) }).map(({ byte, length }) => new Uint8Array(length).fill(byte)),
  fc.constant(encoder.encode('a\u0000b\n\u0000\u0000')),
  fc.integer({ min: 1, max: 300 }).map((repeat) => encoder.encode('{"type":"assistant/chunk","text":"lorem ipsum dolor"}\n'.repeat(repeat * 40))),
);

const plaintextArbitrary = fc.array(segmentArbitrary, { maxLength: 6 }).map((segments) => Buffer.concat(segments));

const shapeArbitrary: fc.Arbitrary<FrameShape> = fc.record({
  level: fc.constantFrom(1, 3, 19),
  sizeKnown: fc.boolean(),
  checksum: fc.constant(true),
  windowLog: fc.constantFrom(undefined, 10, 17),
});

describe.skipIf(!zstdCli.found)(`one-call frame decoding ${zstdCli.reason ?? ''}`, () => {
  it('gives exactly the compressed bytes whenever the frame has a checksum, its plaintext fits its window and its bound the one-call limit', () => {
    let decodedInOneCall = 0;
    fc.assert(
      fc.property(plaintextArbitrary, shapeArbitrary, (plaintext, shape) => {
        const frame = compress(plaintext, shape);
        const info = frameInfo(frame);
        const applies = plaintext.length <= info.windowSize && info.plaintextBound <= MAX_ONE_CALL_FRAME_BYTES;
        const decoded = decodeZstdFrameInOneCall(frame, info);
        expect(decoded !== undefined).toBe(applies);
        if (decoded !== undefined) {
          decodedInOneCall++;
          expect(Buffer.from(decoded).equals(plaintext)).toBe(true);
        }
        const expected = { hex: plaintext.toString('hex') };
        expect(outcome(oneCallDecoder, frame, info)).toEqual(expected);
        expect(outcome(streamingDecoder, frame, info)).toEqual(expected);
      }),
      { numRuns: 60 },
    );
    // The one-call path must be exercised, not skipped: about half the random frames take it (mean ~32 of
    // 60, standard deviation ~4), so more than 10 is certain unless the path stopped applying.
    expect(decodedInOneCall).toBeGreaterThan(10);
  });

  it("decodes dsh's frame shape (checksum, 2 MiB window, no content size) in one call, NUL bytes included", () => {
    const plaintext = encoder.encode(`${'{"type":"user/message","text":"x\u0000y"}\n'.repeat(50)}\u0000\u0000tail`);
    const frame = compress(plaintext, DSH_SHAPE);
    const info = frameInfo(frame);
    expect(info.contentSize).toBeUndefined();
    expect(info.windowSize).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    expect(Buffer.from(decodeZstdFrameInOneCall(frame, info) ?? []).equals(Buffer.from(plaintext))).toBe(true);
  });

  it('a frame without a checksum is never decoded in one call (nothing could verify it); both decoders still agree', () => {
    const plaintext = encoder.encode('{"type":"user/message"}\n'.repeat(100));
    const frame = compress(plaintext, { ...DSH_SHAPE, checksum: false });
    const info = frameInfo(frame);
    expect(info.checksum).toBe(false);
    expect(decodeZstdFrameInOneCall(frame, info)).toBeUndefined();
    expect(outcome(oneCallDecoder, frame, info)).toEqual({ hex: Buffer.from(plaintext).toString('hex') });
  });

  it('a frame whose bound passes the one-call limit streams, to the same bytes', () => {
    const plaintext = encoder.encode('{"type":"assistant/chunk","text":"a longer line of text, compressible"}\n'.repeat(150_000));
    const frame = compress(plaintext, DSH_SHAPE);
    const info = frameInfo(frame);
    expect(info.plaintextBound).toBeGreaterThan(MAX_ONE_CALL_FRAME_BYTES);
    expect(decodeZstdFrameInOneCall(frame, info)).toBeUndefined();
    const pieces: Uint8Array[] = [];
    oneCallDecoder.decodeFrame(frame, info, (piece) => pieces.push(piece));
    expect(Buffer.concat(pieces).equals(Buffer.from(plaintext))).toBe(true);
  });

  it('a declared content size that the plaintext does not have is not answered in one call; both decoders fail alike', () => {
    const plaintext = encoder.encode('{"type":"user/message","n":1}\n'.repeat(30));
    const frame = compress(plaintext, { ...DSH_SHAPE, sizeKnown: true });
    const info = frameInfo(frame);
    expect(info.contentSize).toBe(plaintext.length);
    const lying = { ...info, contentSize: plaintext.length - 1 };
    expect(decodeZstdFrameInOneCall(frame, lying)).toBeUndefined();
    const failed = outcome(oneCallDecoder, frame, lying);
    expect(failed).toHaveProperty('error');
    expect(failed).toEqual(outcome(streamingDecoder, frame, lying));
  });

  it('a damaged frame (any byte changed) gives the same outcome both ways, and never other bytes in one call', () => {
    const frames = DAMAGE_PLAINTEXTS.map((plaintext) => compress(plaintext, DSH_SHAPE));
    const stillFrames = forEachDamagedFrame(frames, 400, (damaged, info) => {
      const streamed = outcome(streamingDecoder, damaged, info);
      expect(outcome(oneCallDecoder, damaged, info)).toEqual(streamed);
      // (A window libzstd refuses is refused before either way is tried.)
      const decoded = decodeZstdFrameInOneCall(damaged, info);
      if (decoded !== undefined && 'hex' in streamed) expect(streamed).toEqual({ hex: Buffer.from(decoded).toString('hex') });
    });
    expect(stillFrames).toBeGreaterThan(100);
  });

  it('a line cut across frames decoded into the one reused buffer comes out whole (the reader copies what it keeps)', () => {
    const lines = [headerLine('straddle'), ev.turnStart(0), ...Array.from({ length: 40 }, (_, i) => ev.user(i + 1, `prompt ${i} ${'é'.repeat(i * 7)}`)), ev.turnEnd(41)];
    const plaintext = rawTranscript(lines);
    // Frame boundaries everywhere but after the header line, most of them inside a line.
    const headerEnd = plaintext.indexOf(0x0a) + 1;
    const cuts = [0, headerEnd];
    for (let at = headerEnd + 37; at < plaintext.length; at += 97) cuts.push(at);
    cuts.push(plaintext.length);
    const frames = cuts.slice(1).map((end, i) => compress(plaintext.subarray(cuts[i], end), DSH_SHAPE));
    const zstd = loadSessionLog(concatBytes(frames), 'zstd', { zstdDecoder: oneCallDecoder });
    expect(zstd).toEqual(loadSessionLog(plaintext, 'raw'));
    expect(zstd.events).toHaveLength(42);
  });
});

describe('one-call decoding over the fixture store', () => {
  it('decodes every frame of every zstd transcript in one call, to exactly what streaming decodes', () => {
    const root = fixtureStore('zstd');
    let frames = 0;
    for (const project of readdirSync(root)) {
      for (const session of readdirSync(path.join(root, project))) {
        const bytes = new Uint8Array(readFileSync(path.join(root, project, session, 'session.jsonl.zstd')));
        for (let at = 0; at < bytes.length; ) {
          const scan = scanZstdFrame(bytes, at);
          if (!('frame' in scan)) break; // a torn last frame is not a complete frame
          const frame = bytes.subarray(at, scan.frame.end);
          const info = { ...scan.frame, start: 0, end: frame.length };
          // The one-call plaintext is valid until the next decoding: copied at once.
          const decoded = decodeZstdFrameInOneCall(frame, info);
          expect(decoded, `${session} frame at ${at}`).toBeDefined();
          const hex = Buffer.from(decoded ?? []).toString('hex');
          expect({ hex }).toEqual(outcome(streamingDecoder, frame, info));
          frames++;
          at = scan.frame.end;
        }
      }
    }
    expect(frames).toBeGreaterThan(20);
  });
});
