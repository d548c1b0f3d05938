import { describe, expect, it } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { findProgram } from '../../../../test/support/conformance';
import { initZstdSupport, loadSessionLog, type LoadedSessionLog, type ZstdFrameDecoder } from './index';
import { availableZstdDecoders } from '../../testing/zstdDecoders';
import xxhash from 'xxhash-wasm';
import { MAX_RECORD_BYTES } from './lines';
import { DEMO_2, concatBytes, ev, headerLine, rawTranscript, zstdFrame, zstdFrameOf, zstdTranscript } from '../../testing/testLogs';
import { MAX_PLAINTEXT_PIECE_BYTES } from './zstdDecoder';

const zstdCli = findProgram('zstd');
await initZstdSupport();
const decoders = availableZstdDecoders();

/** Length of a zstd frame header (RFC 8878 §3.1.1), walked independently of the code under test. */
function frameHeaderLength(frame: Uint8Array): number {
  const descriptor = frame[4];
  const singleSegment = (descriptor & 0x20) !== 0;
  const sizeFlag = descriptor >> 6;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3];
  return 5 + (singleSegment ? 0 : 1) + dictionaryBytes + (sizeFlag === 0 ? (singleSegment ? 1 : 0) : 1 << sizeFlag);
}

/** Where each block of a zstd frame ends. */
function blockEnds(frame: Uint8Array): number[] {
  let offset = frameHeaderLength(frame);
  const ends: number[] = [];
  for (;;) {
    const header = frame[offset] | (frame[offset + 1] << 8) | (frame[offset + 2] << 16);
    offset += 3 + (((header >> 1) & 3) === 1 ? 1 : header >> 3);
    ends.push(offset);
    if (header & 1) return ends;
  }
}

const text = (value: string) => new TextEncoder().encode(value);

type Attempt = { log: LoadedSessionLog } | { error: SessionReadError };

/** Loads, requiring that any failure is a SessionReadError. */
function attempt(bytes: Uint8Array, decoder: ZstdFrameDecoder, options: { maxRecordBytes?: number } = {}): Attempt {
  try {
    return { log: loadSessionLog(bytes, 'zstd', { ...options, zstdDecoder: decoder }) };
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return { error: error as SessionReadError };
  }
}

function expectCorrupt(bytes: Uint8Array, decoder: ZstdFrameDecoder, message: RegExp): void {
  const result = attempt(bytes, decoder);
  expect(result).toHaveProperty('error');
  if ('error' in result) {
    expect(result.error.reason).toBe('corrupt');
    expect(result.error.message).toMatch(message);
  }
}

const DEMO_2_PARTS = [DEMO_2.slice(0, 1), DEMO_2.slice(1, 13), DEMO_2.slice(13)];

describe.skipIf(!zstdCli.found)('zstd torn last frame: keep the records of the whole blocks received', () => {
  it('demo-2 cut at every byte of frame 3: 12 events until its only block is whole, then 17; both decoders agree', () => {
    const head = zstdTranscript(DEMO_2_PARTS.slice(0, 2));
    const last = zstdFrame(DEMO_2_PARTS[2]);
    const bytes = concatBytes([head, last]);
    const ends = blockEnds(last);
    expect(ends).toHaveLength(1);
    for (let cut = head.length; cut < bytes.length; cut++) {
      const whole = cut - head.length >= ends[0];
      const results = decoders.map((decoder) => attempt(bytes.subarray(0, cut), decoder));
      for (const result of results) {
        expect(result, `cut at ${cut}`).toHaveProperty('log');
        if (!('log' in result)) continue;
        expect(result.log.events).toHaveLength(whole ? 17 : 12);
        expect(result.log.title).toBe(whole ? 'Alpha file check' : 'Read a.txt');
      }
      expect(results.slice(1)).toEqual(results.slice(0, -1).map(() => results[0]));
    }
  });

  it('a multi-block last frame cut at every byte keeps exactly the lines of its whole 128 KiB blocks', () => {
    // Long, compressible texts make the reference compressor cut the frame into several 128 KiB blocks.
    const turns = Array.from({ length: 7 }, (_, i) =>
      JSON.stringify({
        type: 'session/title',
        seq: 17 + i,
        time: 1767225900000 + i,
        data: { title: `title ${i} ${'lorem ipsum '.repeat(5000 + 37 * i)}`, messageSeqs: [], source: { kind: 'user' } },
      }),
    );
    const head = zstdTranscript([DEMO_2.slice(0, 1), DEMO_2.slice(1)]);
    const last = zstdFrame(turns);
    const bytes = concatBytes([head, last]);
    const plaintext = rawTranscript(turns);
    const ends = blockEnds(last);
    expect(ends.length).toBeGreaterThanOrEqual(3);
    for (let cut = head.length; cut < bytes.length; cut++) {
      const wholeBlocks = ends.filter((end) => end <= cut - head.length).length;
      const received = plaintext.subarray(0, Math.min(wholeBlocks * 128 * 1024, plaintext.length));
      const keptLines = received.filter((byte) => byte === 0x0a).length;
      const results = decoders.map((decoder) => attempt(bytes.subarray(0, cut), decoder));
      for (const result of results) {
        expect(result, `cut at ${cut}`).toHaveProperty('log');
        if ('log' in result) expect(result.log.events, `cut at ${cut}`).toHaveLength(17 + keptLines);
      }
      expect(results.slice(1)).toEqual(results.slice(0, -1).map(() => results[0]));
    }
  });

  it('a file cut anywhere only ever fails with a SessionReadError, the same for both decoders', () => {
    const bytes = zstdTranscript(DEMO_2_PARTS);
    const headerLength = zstdFrame(DEMO_2_PARTS[0]).length;
    for (let cut = 0; cut <= bytes.length; cut++) {
      const results = decoders.map((decoder) => attempt(bytes.subarray(0, cut), decoder));
      const headerComplete = cut >= headerLength;
      expect(results[0], `cut at ${cut}`).toHaveProperty(headerComplete ? 'log' : 'error');
      expect(results.slice(1)).toEqual(results.slice(0, -1).map(() => results[0]));
    }
  });

  for (const decoder of decoders) {
    describe(`damage, with ${decoder.name}`, () => {
      it('a complete frame with a wrong checksum is corrupt, wherever it is', () => {
        const bytes = zstdTranscript(DEMO_2_PARTS);
        const secondEnd = zstdTranscript(DEMO_2_PARTS.slice(0, 2)).length;
        for (const at of [secondEnd - 1, bytes.length - 4]) {
          const damaged = bytes.slice();
          damaged[at] ^= 0x01;
          expectCorrupt(damaged, decoder, /failed validation/);
        }
      });

      it('a flipped payload byte in a complete frame is corrupt (never garbage events)', () => {
        const bytes = zstdTranscript(DEMO_2_PARTS);
        const headerEnd = zstdFrame(DEMO_2_PARTS[0]).length;
        const damaged = bytes.slice();
        damaged[headerEnd + 40] ^= 0x20;
        expectCorrupt(damaged, decoder, /corrupt/);
      });

      it('invalid frame magic after the last frame is corrupt; fewer than 4 stray bytes are a torn frame', () => {
        const bytes = zstdTranscript(DEMO_2_PARTS);
        expectCorrupt(concatBytes([bytes, new TextEncoder().encode('garbage\n')]), decoder, new RegExp(`invalid zstd frame magic at byte ${bytes.length}`));
        const stray = attempt(concatBytes([bytes, new Uint8Array([0x28, 0xb5, 0x2f])]), decoder);
        expect('log' in stray && stray.log.events.length).toBe(17);
      });

      it('frame structure is checked over the whole file first: it wins over a refused header or a bad checksum', () => {
        const garbage = new TextEncoder().encode('garbage');
        const newer = concatBytes([zstdFrame([JSON.stringify({ ...JSON.parse(DEMO_2[0]), version: 1 })]), zstdFrame(DEMO_2.slice(1)), garbage]);
        expectCorrupt(newer, decoder, /invalid zstd frame magic/);
        const checksum = zstdTranscript(DEMO_2_PARTS);
        checksum[checksum.length - 1] ^= 0x01;
        expectCorrupt(concatBytes([checksum, garbage]), decoder, /invalid zstd frame magic/);
        const refused = attempt(newer.subarray(0, newer.length - garbage.length), decoder);
        expect('error' in refused && refused.error.reason).toBe('unsupported');
      });

      it('a reserved frame-header bit or block type is corrupt', () => {
        const bytes = zstdTranscript(DEMO_2_PARTS);
        const headerEnd = zstdFrame(DEMO_2_PARTS[0]).length;
        const reservedBit = bytes.slice();
        reservedBit[headerEnd + 4] |= 0x08;
        expectCorrupt(reservedBit, decoder, /reserved zstd frame-header bit/);
        // Block type 3 (bits 1-2 of the first block header, right after the frame header) is reserved.
        const reservedType = bytes.slice();
        reservedType[headerEnd + frameHeaderLength(zstdFrame(DEMO_2_PARTS[1]))] |= 0x06;
        expectCorrupt(reservedType, decoder, /reserved zstd block type/);
      });

      it('a header frame holding more than one line, or an unterminated one, is corrupt', () => {
        const rest = zstdFrame(DEMO_2.slice(2));
        expectCorrupt(concatBytes([zstdFrame(DEMO_2.slice(0, 2)), rest]), decoder, /first frame is not exactly one header line/);
        for (const plaintext of [`${DEMO_2[0]}\n{`, DEMO_2[0], '']) {
          expectCorrupt(concatBytes([zstdFrameOf(text(plaintext)), rest]), decoder, /first frame is not exactly one header line/);
        }
      });

      it('no complete frame at all is "empty or header-less"', () => {
        expectCorrupt(new Uint8Array(0), decoder, /empty or header-less/);
        const header = zstdFrame(DEMO_2_PARTS[0]);
        expectCorrupt(header.subarray(0, header.length - 1), decoder, /empty or header-less/);
      });

      it('a line may straddle two complete frames', () => {
        const body = rawTranscript(DEMO_2.slice(1));
        const split = body.indexOf(0x0a) + 10;
        const frames = [zstdFrame(DEMO_2_PARTS[0]), zstdFrameOf(body.subarray(0, split)), zstdFrameOf(body.subarray(split))];
        const result = attempt(concatBytes(frames), decoder);
        expect('log' in result && result.log.events.length).toBe(17);
      });

      it('a complete last frame ending inside a line, or holding an unparsable line, is corrupt', () => {
        const body = rawTranscript(DEMO_2.slice(1));
        const open = concatBytes([zstdFrame(DEMO_2_PARTS[0]), zstdFrameOf(body.subarray(0, body.length - 5))]);
        expectCorrupt(open, decoder, /complete frame contains a torn JSONL record/);
        const garbage = concatBytes([zstdTranscript(DEMO_2_PARTS), zstdFrame(['not json'])]);
        expectCorrupt(garbage, decoder, /complete frame contains a torn JSONL record/);
      });

      it('in the torn frame, a bad line is cut silently unless a later whole line ends a turn', () => {
        const turnEnd = '{"type":"turn/end","seq":17,"time":1767225802001,"data":{"turn":1,"reason":{"kind":"completed"}}}';
        const cutChecksum = (bytes: Uint8Array) => bytes.subarray(0, bytes.length - 2);
        const cut = attempt(cutChecksum(zstdTranscript([...DEMO_2_PARTS, [turnEnd, 'garbage', '{"seq":99}']])), decoder);
        expect('log' in cut && cut.log.events.length).toBe(18);
        expectCorrupt(cutChecksum(zstdTranscript([...DEMO_2_PARTS, ['garbage', turnEnd]])), decoder, /unparsable committed event.*turn\/end/);
      });
    });
  }
});

type HandBlock = { raw: Uint8Array } | { rle: number; size: number };

/** Splits `size` bytes of `byte` into RLE blocks of at most 128 KiB (zstd's block maximum). */
function rleBlocks(byte: number, size: number): HandBlock[] {
  const blocks: HandBlock[] = [];
  for (let left = size; left > 0; left -= 128 * 1024) blocks.push({ rle: byte, size: Math.min(left, 128 * 1024) });
  return blocks;
}

/**
 * A zstd frame written by hand (RFC 8878) from raw and RLE blocks, so its window, declared content
 * size and checksum are whatever the test says: window descriptor byte (default 1 MiB), an 8-byte
 * content size when given, and a correct XXH64 checksum.
 */
async function handFrame(blocks: HandBlock[], options: { windowDescriptor?: number; contentSize?: number } = {}): Promise<Uint8Array> {
  const hasher = (await xxhash()).create64(0n);
  const parts: Uint8Array[] = [];
  const descriptor = (options.contentSize === undefined ? 0 : 0xc0) | 0x04;
  const header = Buffer.alloc(options.contentSize === undefined ? 6 : 14);
  header.writeUInt32LE(0xfd2fb528, 0);
  header[4] = descriptor;
  header[5] = options.windowDescriptor ?? 0x50;
  if (options.contentSize !== undefined) header.writeBigUInt64LE(BigInt(options.contentSize), 6);
  parts.push(header);
  blocks.forEach((block, i) => {
    const size = 'raw' in block ? block.raw.length : block.size;
    const head = (size << 3) | (('raw' in block ? 0 : 1) << 1) | (i === blocks.length - 1 ? 1 : 0);
    parts.push(new Uint8Array([head & 0xff, (head >> 8) & 0xff, (head >> 16) & 0xff]));
    if ('raw' in block) {
      parts.push(block.raw);
      hasher.update(block.raw);
    } else {
      parts.push(new Uint8Array([block.rle]));
      hasher.update(new Uint8Array(block.size).fill(block.rle));
    }
  });
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32LE(Number(hasher.digest() & 0xffffffffn));
  parts.push(checksum);
  return concatBytes(parts);
}

/** A decoder that records the pieces it hands over. */
function watched(decoder: ZstdFrameDecoder): { decoder: ZstdFrameDecoder; frames: number; largestPiece: number; decoded: number } {
  const watch = {
    frames: 0,
    largestPiece: 0,
    decoded: 0,
    decoder: {
      name: decoder.name,
      decodeFrame(frame, info, sink) {
        watch.frames++;
        decoder.decodeFrame(frame, info, (piece) => {
          watch.largestPiece = Math.max(watch.largestPiece, piece.length);
          watch.decoded += piece.length;
          sink(piece);
        });
      },
      decodeBlocks: (prefix, info, sink) => decoder.decodeBlocks(prefix, info, sink),
    } satisfies ZstdFrameDecoder,
  };
  return watch;
}

/** A header frame and an event frame of one huge `session/title` line: `size` bytes of title, `\n`-terminated or not. */
async function hugeTitleLog(size: number, terminated = true): Promise<{ bytes: Uint8Array; lineBytes: number }> {
  const [open, close] = ev.title(0, '\u0000').split('\\u0000');
  const tail = close + (terminated ? '\n' : '');
  const frame = await handFrame([{ raw: text(open) }, ...rleBlocks(0x78, size), { raw: text(tail) }]);
  const header = await handFrame([{ raw: text(`${headerLine('huge')}\n`) }]);
  return { bytes: concatBytes([header, frame]), lineBytes: open.length + size + close.length };
}

for (const decoder of decoders) {
  describe(`records and frames past the limits, with ${decoder.name}`, () => {
    it('a record over 64 MiB inside one frame is too-large; the frame reaches the scanner in bounded pieces, to its end', async () => {
      const { bytes, lineBytes } = await hugeTitleLog(MAX_RECORD_BYTES + 1024);
      const watch = watched(decoder);
      const result = attempt(bytes, watch.decoder);
      expect('error' in result && { reason: result.error.reason, message: result.error.message }).toEqual({
        reason: 'too-large',
        message: `record too large: event line 1 has ${lineBytes} bytes (limit ${MAX_RECORD_BYTES})`,
      });
      expect(watch.largestPiece).toBeLessThanOrEqual(MAX_PLAINTEXT_PIECE_BYTES);
      // The whole frame is decoded (its checksum verified), though the scanner stopped keeping bytes at the limit.
      expect(watch.decoded).toBe(text(`${headerLine('huge')}\n`).length + lineBytes + 1);
    });

    it('the same frame with a wrong checksum is corrupt: a failing frame wins over what its plaintext said', async () => {
      const { bytes } = await hugeTitleLog(MAX_RECORD_BYTES + 1024);
      bytes[bytes.length - 1] ^= 0x01;
      expectCorrupt(bytes, decoder, /frame at byte \d+ failed validation/);
    });

    it('a record over the limit across two frames, or terminated in the torn last frame, is too-large', async () => {
      const maxRecordBytes = 1000;
      const header = await handFrame([{ raw: text(`${headerLine('split')}\n`) }]);
      const [open, close] = ev.title(0, '\u0000').split('\\u0000');
      const first = await handFrame([{ raw: text(open) }, ...rleBlocks(0x78, 600)]);
      const second = await handFrame([...rleBlocks(0x78, 600), { raw: text(`${close}\n`) }]);
      const load = (bytes: Uint8Array) => attempt(bytes, decoder, { maxRecordBytes });
      const reasonOf = (result: Attempt) => ('error' in result ? result.error.reason : 'loaded');
      expect(reasonOf(load(concatBytes([header, first, second])))).toBe('too-large');
      const whole = await handFrame([{ raw: text(open) }, ...rleBlocks(0x78, 1200), { raw: text(`${close}\n`) }]);
      // Cut inside its checksum: every block is whole, so the line is read, and refused.
      expect(reasonOf(load(concatBytes([header, whole]).subarray(0, header.length + whole.length - 2)))).toBe('too-large');
      const unterminated = await handFrame([{ raw: text(open) }, ...rleBlocks(0x78, 1200)]);
      const dropped = load(concatBytes([header, unterminated]).subarray(0, header.length + unterminated.length - 2));
      expect('log' in dropped && dropped.log.events).toEqual([]);
    });

    it('a frame that may decode past the frame-size guard is too-large without being decoded', async () => {
      const header = await handFrame([{ raw: text(`${headerLine('guard')}\n`) }]);
      const frame = await handFrame(rleBlocks(0x0a, 16), { contentSize: 2 ** 31 });
      const watch = watched(decoder);
      const result = attempt(concatBytes([header, frame]), watch.decoder);
      expect('error' in result && result.error.reason).toBe('too-large');
      expect('error' in result && result.error.message).toMatch(/may decode past/);
      expect(watch.frames).toBe(1);
    });

    it('a window past libzstd’s limit is corrupt in a complete frame, and a torn frame with one holds nothing', async () => {
      const header = await handFrame([{ raw: text(`${headerLine('window')}\n`) }]);
      const body = [{ raw: text(`${ev.title(0, 'kept')}\n`) }];
      // Window descriptor 0x89: 2^(10+17) plus an eighth of it, past libzstd's default limit of 2^27 + 1.
      const wide = await handFrame(body, { windowDescriptor: 0x89 });
      expectCorrupt(concatBytes([header, wide]), decoder, /failed validation/);
      const tornWide = attempt(concatBytes([header, wide]).subarray(0, header.length + wide.length - 2), decoder);
      expect('log' in tornWide && tornWide.log.events).toEqual([]);
      // At exactly 2^27 the same frame decodes, whole or torn.
      const limit = await handFrame(body, { windowDescriptor: 0x88 });
      const torn = attempt(concatBytes([header, limit]).subarray(0, header.length + limit.length - 2), decoder);
      expect('log' in torn && torn.log.title).toBe('kept');
      const whole = attempt(concatBytes([header, limit]), decoder);
      expect('log' in whole && whole.log.title).toBe('kept');
    });
  });
}
