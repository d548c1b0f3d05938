import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { findProgram, fixtureStore } from '../../../../test/support/conformance';
import {
  SessionLogSummarizer,
  createSessionLogLoader,
  initZstdSupport,
  loadSessionLog,
  type LoadedSessionLog,
  type LogSummary,
  type ZstdFrameDecoder,
} from './index';
import { availableZstdDecoders } from '../../testing/zstdDecoders';
import { DEMO_1, DEMO_2, concatBytes, ev, headerLine, rawTranscript, toolCallBlock, zstdTranscript } from '../../testing/testLogs';
import { skimLine } from './lineSkim';

const zstdCli = findProgram('zstd');
await initZstdSupport();

type Encoding = 'raw' | 'zstd';
interface Transcript {
  name: string;
  encoding: Encoding;
  bytes: Uint8Array;
}

/** What `loadSessionLog` says, in the summary's terms. */
function expectedSummary(bytes: Uint8Array, encoding: Encoding, decoder?: ZstdFrameDecoder): LogSummary | 'header incomplete' {
  try {
    const log = loadSessionLog(bytes, encoding, { zstdDecoder: decoder });
    return {
      header: log.header,
      ...(log.title === undefined ? {} : { title: log.title }),
      capturedThroughSeq: log.capturedThroughSeq,
      surfaceCounts: log.surfaceCounts,
      eventCount: log.events.length,
    };
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    if ((error as Error).message.includes('empty or header-less')) return 'header incomplete';
    return { capturedThroughSeq: null, surfaceCounts: { user: 0, assistant: 0, tool: 0 }, eventCount: 0, error: error as SessionReadError };
  }
}

function expectSameAsLoad(summary: LogSummary, bytes: Uint8Array, encoding: Encoding, decoder?: ZstdFrameDecoder): void {
  const expected = expectedSummary(bytes, encoding, decoder);
  if (expected === 'header incomplete') {
    expect(summary.header).toBeUndefined();
    expect(summary.error).toBeUndefined();
    return;
  }
  const { header: _header, ...rest } = summary;
  const { header: expectedHeader, error, ...expectedRest } = expected;
  expect(rest).toMatchObject(expectedRest);
  if (expectedHeader) expect(summary.header).toEqual(expectedHeader);
  if (error) {
    expect(summary.error).toBeInstanceOf(SessionReadError);
    expect({ reason: summary.error?.reason, message: summary.error?.message }).toEqual({ reason: error.reason, message: error.message });
  } else {
    expect(summary.error).toBeUndefined();
  }
}

/** Summarizes `bytes` pushed in the pieces cut at `splits`. */
function summarizeInPieces(bytes: Uint8Array, encoding: Encoding, splits: number[], decoder?: ZstdFrameDecoder): LogSummary {
  const summarizer = new SessionLogSummarizer(encoding, { zstdDecoder: decoder });
  let from = 0;
  for (const at of [...splits, bytes.length]) {
    summarizer.push(bytes.slice(from, at));
    from = at;
  }
  return summarizer.summary();
}

const OPEN_TURN = [
  headerLine('open'),
  ev.turnStart(0),
  ev.stepStart(1),
  ev.user(2, 'go'),
  ev.assistant(3, [toolCallBlock('c1'), toolCallBlock('c2')]),
  ev.toolCall(4, 'c1'),
];

function baseTranscripts(): Transcript[] {
  const logs: Array<[string, string[], number[]]> = [
    ['demo-1', DEMO_1, [1, 5]],
    ['demo-2', DEMO_2, [1, 13]],
    ['open-turn', OPEN_TURN, [1, 4]],
    ['unknown-type', [...DEMO_1, ev.of('future/thing', 11, {})], [1, 11]],
  ];
  const bases: Transcript[] = [];
  for (const [name, lines, cuts] of logs) {
    bases.push({ name, encoding: 'raw', bytes: rawTranscript(lines) });
    if (zstdCli.found) {
      const parts = [lines.slice(0, cuts[0]), lines.slice(cuts[0], cuts[1]), lines.slice(cuts[1])].filter((part) => part.length > 0);
      bases.push({ name, encoding: 'zstd', bytes: zstdTranscript(parts) });
    }
  }
  if (zstdCli.found) {
    // One frame of ~1.5 MiB: more than one decoded piece.
    const titles = Array.from({ length: 30 }, (_, i) => ev.title(17 + i, `${i} ${'lorem ipsum dolor '.repeat(2900 + i)}`));
    bases.push({ name: 'big-frame', encoding: 'zstd', bytes: zstdTranscript([DEMO_2.slice(0, 1), DEMO_2.slice(1), titles]) });
  }
  for (const [encoding, file] of [['raw', 'session.jsonl'], ['zstd', 'session.jsonl.zstd']] as const) {
    const store = fixtureStore(encoding);
    for (const project of readdirSync(store)) {
      for (const session of readdirSync(path.join(store, project))) {
        bases.push({ name: session, encoding, bytes: new Uint8Array(readFileSync(path.join(store, project, session, file))) });
      }
    }
  }
  return bases;
}

const bases = baseTranscripts();

type Damage = { kind: 'none' } | { kind: 'flip'; at: number; mask: number } | { kind: 'insert'; at: number; bytes: Uint8Array };

function damaged(bytes: Uint8Array, damage: Damage): Uint8Array {
  if (damage.kind === 'none') return bytes;
  const at = damage.at % (bytes.length + 1);
  if (damage.kind === 'insert') return concatBytes([bytes.subarray(0, at), damage.bytes, bytes.subarray(at)]);
  const copy = bytes.slice();
  if (at < copy.length) copy[at] ^= damage.mask;
  return copy;
}

const damageArbitrary: fc.Arbitrary<Damage> = fc.oneof(
  fc.constant<Damage>({ kind: 'none' }),
  fc.record({ kind: fc.constant<'flip'>('flip'), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({
    kind: fc.constant<'insert'>('insert'),
    at: fc.nat(),
    bytes: fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 12 }), fc.constantFrom(...['\n', 'garbage\n', 'null\n', '{"seq":1}\n'].map((text) => new TextEncoder().encode(text)))),
  }),
);

describe('SessionLogSummarizer gives what loadSessionLog gives', () => {
  it('property: any file (damaged or not), cut anywhere and pushed in any pieces', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...bases),
        damageArbitrary,
        fc.nat(),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.constantFrom(...availableZstdDecoders()),
        (base, damage, cutSeed, splitSeeds, decoder) => {
          const file = damaged(base.bytes, damage);
          const bytes = file.subarray(0, cutSeed % (file.length + 1));
          const splits = [...new Set(splitSeeds.map((seed) => seed % (bytes.length + 1)))].sort((a, b) => a - b);
          expectSameAsLoad(summarizeInPieces(bytes, base.encoding, splits, decoder), bytes, base.encoding, decoder);
        },
      ),
      { numRuns: Number(process.env.LOG_PROPERTY_RUNS ?? 400) },
    );
  });

  it('byte by byte, after every byte, for each base transcript of the demos', () => {
    for (const base of bases.filter((candidate) => candidate.name.startsWith('demo-') || candidate.name === 'open-turn').slice(0, 6)) {
      const summarizer = new SessionLogSummarizer(base.encoding);
      for (let i = 0; i < base.bytes.length; i++) {
        summarizer.push(base.bytes.subarray(i, i + 1));
        expectSameAsLoad(summarizer.summary(), base.bytes.subarray(0, i + 1), base.encoding);
      }
    }
  });

  it('counts the in-memory closers of an open turn', () => {
    const summarizer = new SessionLogSummarizer('raw');
    summarizer.push(rawTranscript(OPEN_TURN));
    expect(summarizer.summary()).toEqual({
      header: expect.objectContaining({ id: 'open' }),
      capturedThroughSeq: 8,
      surfaceCounts: { user: 1, assistant: 1, tool: 2 },
      eventCount: 9,
    });
  });

  it('reports an incomplete header as neither header nor error, and a version ≠ 0 as a listed header with an unsupported error', () => {
    const incomplete = new SessionLogSummarizer('raw');
    incomplete.push(new TextEncoder().encode(DEMO_1[0]));
    expect(incomplete.summary()).toEqual({ capturedThroughSeq: null, surfaceCounts: { user: 0, assistant: 0, tool: 0 }, eventCount: 0 });
    const newer = new SessionLogSummarizer('raw');
    newer.push(rawTranscript([headerLine('v1', { version: 1 }), ev.title(0, 't')]));
    const summary = newer.summary();
    expect(summary.header).toMatchObject({ id: 'v1', version: 1 });
    expect(summary.error?.reason).toBe('unsupported');
    expect(summary.title).toBeUndefined();
  });
});

type Loaded = { log: LoadedSessionLog } | { error: { name: string; reason: string; message: string } };

/** A load's answer, its failure as plain data. */
function loadedOrError(load: () => LoadedSessionLog): Loaded {
  try {
    return { log: load() };
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    const { name, reason, message } = error as SessionReadError;
    return { error: { name, reason, message } };
  }
}

describe('createSessionLogLoader gives what loadSessionLog gives', () => {
  it('property: any file (damaged or not), cut anywhere, pushed in any pieces from one reused buffer', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...bases),
        damageArbitrary,
        fc.nat(),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.constantFrom(...availableZstdDecoders()),
        fc.boolean(),
        (base, damage, cutSeed, splitSeeds, decoder, keepEvents) => {
          const file = damaged(base.bytes, damage);
          const bytes = file.subarray(0, cutSeed % (file.length + 1));
          // Repeated cuts make empty pieces, which must change nothing.
          const splits = splitSeeds.map((seed) => seed % (bytes.length + 1)).sort((a, b) => a - b);
          const options = { zstdDecoder: decoder, keepEvents };
          const streamed = loadedOrError(() => {
            const loader = createSessionLogLoader(base.encoding, options);
            const buffer = new Uint8Array(bytes.length);
            let from = 0;
            for (const at of [...splits, bytes.length]) {
              buffer.set(bytes.subarray(from, at));
              loader.push(buffer.subarray(0, at - from));
              // The caller may reuse its buffer at once: the loader copied what it keeps.
              buffer.fill(0x0a);
              from = at;
            }
            return loader.finish();
          });
          expect(streamed).toEqual(loadedOrError(() => loadSessionLog(bytes, base.encoding, options)));
        },
      ),
      { numRuns: Number(process.env.LOG_PROPERTY_RUNS ?? 400) },
    );
  });

  it('finishes once: pushing or finishing again is a programming error', () => {
    const loader = createSessionLogLoader('raw');
    loader.push(rawTranscript(DEMO_1));
    expect(loader.finish().title).toBe(loadSessionLog(rawTranscript(DEMO_1), 'raw').title);
    expect(() => loader.push(new Uint8Array(1))).toThrow(/already finished/);
    expect(() => loader.finish()).toThrow(/already finished/);
  });
});

describe('SessionLogSummarizer continues from the committed position', () => {
  it('raw: each complete line is parsed once however the file is pushed, a skimmed one never', () => {
    const bytes = rawTranscript(DEMO_2);
    // A tool result the skim does not fold is skimmed to find its output, then parsed without it.
    const parsed = DEMO_2.filter((line) => {
      const skimmed = skimLine(new TextEncoder().encode(line));
      return skimmed === undefined || (!skimmed.row && skimmed.surface === 't');
    });
    // Skimmed: the compaction start, summary and end, three appended messages, the tool result
    // (folded), and seven tracked events (the turn's start and end, two steps' starts and ends, the
    // tool call). Parsed: the header, the two titles and the compacted summary.
    expect(parsed.length).toBe(DEMO_2.length - 14);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const summarizer = new SessionLogSummarizer('raw');
      for (let i = 0; i < bytes.length; i += 7) {
        summarizer.push(bytes.subarray(i, i + 7));
        summarizer.summary();
      }
      expect(parse).toHaveBeenCalledTimes(parsed.length);
    } finally {
      parse.mockRestore();
    }
  });

  it.skipIf(!zstdCli.found)('zstd: each complete frame is decoded once; only the torn frame is read again', () => {
    const [decoder] = availableZstdDecoders();
    const counting: ZstdFrameDecoder = {
      name: decoder.name,
      decodeFrame: vi.fn((frame, info, sink) => decoder.decodeFrame(frame, info, sink)),
      decodeBlocks: vi.fn((prefix, info, sink) => decoder.decodeBlocks(prefix, info, sink)),
    };
    const bytes = zstdTranscript([DEMO_2.slice(0, 1), DEMO_2.slice(1, 13), DEMO_2.slice(13)]);
    const summarizer = new SessionLogSummarizer('zstd', { zstdDecoder: counting });
    for (let i = 0; i < bytes.length; i += 50) {
      summarizer.push(bytes.subarray(i, i + 50));
      summarizer.summary();
    }
    expect(counting.decodeFrame).toHaveBeenCalledTimes(3);
    expect(summarizer.summary().eventCount).toBe(17);
  });

  it('saves to plain JSON without event payloads, and a restored one continues from resumeOffset', () => {
    for (const base of bases.filter((candidate) => candidate.name === 'demo-2' || candidate.name === 'open-turn')) {
      for (const stop of [0, 40, Math.floor(base.bytes.length / 2), base.bytes.length - 3, base.bytes.length]) {
        const first = new SessionLogSummarizer(base.encoding);
        first.push(base.bytes.subarray(0, stop));
        const saved = JSON.stringify(first.toJSON());
        expect(saved).not.toContain('a.txt contains');
        const restored = SessionLogSummarizer.fromJSON(JSON.parse(saved));
        expect(restored.resumeOffset).toBeLessThanOrEqual(stop);
        restored.push(base.bytes.subarray(restored.resumeOffset));
        expect(restored.summary()).toEqual(expectedSummary(base.bytes, base.encoding));
      }
    }
  });

  it('refuses something that is not a saved state', () => {
    const summarizer = new SessionLogSummarizer('raw');
    summarizer.push(rawTranscript(DEMO_1));
    const saved = summarizer.toJSON();
    expect(() => SessionLogSummarizer.fromJSON({ ...saved, version: 2 } as never)).toThrow(TypeError);
    const damaged = JSON.parse(JSON.stringify(saved));
    delete damaged.reader.fold.surface;
    expect(() => SessionLogSummarizer.fromJSON(damaged)).toThrow(TypeError);
    expect(SessionLogSummarizer.fromJSON(JSON.parse(JSON.stringify(saved))).summary()).toEqual(summarizer.summary());
  });
});
