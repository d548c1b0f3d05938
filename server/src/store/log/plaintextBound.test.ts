/**
 * The bound on a zstd log's total plaintext (over all its frames, the torn one included), the
 * lines after a defect that are only counted, and reads that yield to the event loop and stop
 * when told: a few KB of RLE blocks declare a GiB of newlines.
 */
import { describe, expect, it, vi } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { concatBytes, headerLine, rawTranscript, zstdFrame } from '../../testing/testLogs';
import { availableZstdDecoders } from '../../testing/zstdDecoders';
import { initZstdSupport, loadSessionLog, SessionLogSummarizer, type ZstdFrameDecoder } from './index';
import { MAX_LOG_PLAINTEXT_BYTES } from './zstdDecoder';

await initZstdSupport();
const decoders = availableZstdDecoders();

const HEADER = headerLine('bound');
const at = (seq: number) => 1767300000000 + seq;
const event = (type: string, seq: number, data: unknown) => JSON.stringify({ type, seq, time: at(seq), data });
const TURN = (seq: number, turn: number) => [
  event('turn/start', seq, { turn }),
  event('turn/end', seq + 1, { turn, reason: { kind: 'completed' } }),
];
const BATCHES = [[HEADER], TURN(0, 1), TURN(2, 2), TURN(4, 3)];
const plaintextOf = (batch: readonly string[]) => rawTranscript(batch).length;

/** A frame of `blocks` RLE blocks of 128 KiB of `byte` each (no checksum, dsh's 2 MiB window). */
function rleFrame(blocks: number, byte = 0x0a): Uint8Array {
  const body = new Uint8Array(blocks * 4);
  for (let i = 0; i < blocks; i++) {
    const blockHeader = ((128 * 1024) << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    body.set([blockHeader & 0xff, (blockHeader >> 8) & 0xff, blockHeader >> 16, byte], i * 4);
  }
  return concatBytes([Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]), body]);
}

function loadError(bytes: Uint8Array, decoder: ZstdFrameDecoder, options: { maxPlaintextBytes?: number; maxRecordBytes?: number } = {}): SessionReadError | undefined {
  try {
    loadSessionLog(bytes, 'zstd', { ...options, zstdDecoder: decoder });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return error as SessionReadError;
  }
}

it('the bound is the per-frame bound, 1 GiB', () => {
  expect(MAX_LOG_PLAINTEXT_BYTES).toBe(1024 * 1024 * 1024);
});

for (const decoder of decoders) {
  describe(`the log's plaintext bound, with ${decoder.name}`, () => {
    const bytes = concatBytes(BATCHES.map(zstdFrame));
    const total = BATCHES.map(plaintextOf).reduce((a, b) => a + b, 0);

    it('a log whose frames together decode to the bound loads; one byte less and it is too-large, listed by its header', () => {
      expect(loadError(bytes, decoder, { maxPlaintextBytes: total })).toBeUndefined();
      const error = loadError(bytes, decoder, { maxPlaintextBytes: total - 1 });
      expect(error?.reason).toBe('too-large');
      expect(error?.message).toMatch(/zstd frames decode past \d+ bytes/);
      const summarizer = new SessionLogSummarizer('zstd', { zstdDecoder: decoder, maxPlaintextBytes: total - 1 });
      summarizer.push(bytes);
      const summary = summarizer.summary();
      expect(summary.header?.id).toBe('bound');
      expect(summary.error?.reason).toBe('too-large');
    });

    it('the whole blocks of a torn last frame count too', () => {
      const torn = bytes.subarray(0, bytes.length - 2); // inside the last frame's checksum: all its blocks are whole
      const complete = BATCHES.slice(0, -1).map(plaintextOf).reduce((a, b) => a + b, 0);
      expect(loadError(torn, decoder, { maxPlaintextBytes: total })).toBeUndefined();
      expect(loadError(bytes.subarray(0, bytes.length - zstdFrame(BATCHES[3]).length), decoder, { maxPlaintextBytes: complete })).toBeUndefined();
      expect(loadError(torn, decoder, { maxPlaintextBytes: complete })?.reason).toBe('too-large');
    });

    it('frames of RLE newlines, each under the per-frame bound, stop at the log bound', () => {
      // 3 × 16 MiB of newlines against a 40 MiB bound: the third frame passes it.
      const bomb = concatBytes([zstdFrame([HEADER]), rleFrame(128), rleFrame(128), rleFrame(128)]);
      const error = loadError(bomb, decoder, { maxPlaintextBytes: 40 * 1024 * 1024 });
      expect(error?.reason).toBe('too-large');
      // Under the default bound the same frames are read to dsh's answer: empty lines are a torn record.
      expect(loadError(bomb, decoder)?.message).toMatch(/complete frame contains a torn JSONL record/);
    });
  });
}

describe('lines after a defect', () => {
  const decoder = decoders[0];

  it('a run of empty lines is counted, and a later turn/end, null or over-long line still decides', () => {
    const blank = '\n'.repeat(100_000);
    const tail = (last: string) => concatBytes([zstdFrame([HEADER]), zstdFrame([event('turn/start', 0, { turn: 1 })]), rleFrame(1), zstdFrame([blank + last])]);
    expect(loadError(tail(event('turn/end', 1, { turn: 1, reason: { kind: 'completed' } })), decoder)?.message).toMatch(/before a later turn\/end/);
    // An escaped slash is still a turn/end.
    const escaped = JSON.stringify({ type: 'turn/end', seq: 1, time: at(1), data: { turn: 1 } }).replace('turn/end', 'turn\\/end');
    expect(loadError(tail(escaped), decoder)?.message).toMatch(/before a later turn\/end/);
    expect(loadError(tail('null'), decoder)?.message).toMatch(/null record/);
    // 1 turn/start, 128 Ki newlines in the RLE frame, 100,000 blank lines: the long line is the next one.
    const long = loadError(tail('x'.repeat(2000)), decoder, { maxRecordBytes: 1000 });
    expect(long?.message).toBe(`record too large: event line ${1 + 128 * 1024 + 100_000 + 1} has 2000 bytes (limit 1000)`);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(loadError(tail('{"not":"a turn"}'), decoder)?.message).toMatch(/complete frame contains a torn JSONL record/);
      // 228,073 event lines, almost all empty: only the lines before the defect and the first one are parsed.
      expect(parse.mock.calls.length).toBeLessThan(10);
    } finally {
      parse.mockRestore();
    }
  });

  it('raw logs read the same: counted lines never hide a later turn/end', () => {
    const raw = rawTranscript([HEADER, event('turn/start', 0, { turn: 1 }), '', ...Array.from({ length: 1000 }, () => ''), event('turn/end', 1, { turn: 1 })]);
    expect(() => loadSessionLog(raw, 'raw')).toThrow(/before a later turn\/end/);
    const cut = rawTranscript([HEADER, event('turn/start', 0, { turn: 1 }), '', ...Array.from({ length: 1000 }, () => ''), '{"seq":9}']);
    // The turn/start, then the in-memory closer of its open turn: the rest is a torn tail.
    expect(loadSessionLog(cut, 'raw').capturedThroughSeq).toBe(1);
  });
});

describe('reads that yield', () => {
  const bomb = concatBytes([zstdFrame([HEADER]), rleFrame(512), rleFrame(512)]); // 2 × 64 MiB of newlines

  it('pushAsync gives the event loop turns while it decodes, and answers as push does', async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const summarizer = new SessionLogSummarizer('zstd');
    expect(await summarizer.pushAsync(bomb)).toBe(true);
    ticking = false;
    expect(turns).toBeGreaterThan(1);
    const sync = new SessionLogSummarizer('zstd');
    sync.push(bomb);
    expect(summarizer.summary()).toEqual(sync.summary());
  });

  it('the whole blocks of a torn last frame are decoded yielding too, ahead of the summary', async () => {
    const torn = concatBytes([zstdFrame([HEADER]), zstdFrame([event('turn/start', 0, { turn: 1 })]), rleFrame(512).subarray(0, -1)]);
    const summarizer = new SessionLogSummarizer('zstd');
    summarizer.push(torn);
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    expect(await summarizer.prepareSummary()).toBe(true);
    ticking = false;
    expect(turns).toBeGreaterThan(1);
    const sync = new SessionLogSummarizer('zstd');
    sync.push(torn);
    expect(summarizer.summary()).toEqual(sync.summary());
    // The empty lines of the torn frame are a torn tail: the turn stays, closed in memory.
    expect(summarizer.summary().capturedThroughSeq).toBe(1);
  });

  it('an aborted signal stops it at its next turn', async () => {
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    const summarizer = new SessionLogSummarizer('zstd');
    expect(await summarizer.pushAsync(concatBytes([bomb, rleFrame(512), rleFrame(512), rleFrame(512)]), controller.signal)).toBe(false);
  });
});
