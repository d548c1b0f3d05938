import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { findProgram } from '../../../../test/support/conformance';
import { createSessionLogLoader, initZstdSupport, loadSessionLog, type LoadedSessionLog } from './index';
import { availableZstdDecoders } from '../../testing/zstdDecoders';
import { SURFACE_EVENT_TYPES } from './eventRules';
import { StoredLine } from './storedLines';
import { SessionLogReader } from './sessionLogReader';
import { ev, headerLine, rawTranscript, toolCallBlock, zstdTranscript } from '../../testing/testLogs';

const zstdCli = findProgram('zstd');
await initZstdSupport();

const compact = { kind: 'plugin', plugin: 'compact', compactionId: 'k' };
const replace = (start: number, end: number, sources: number[]) => ({ surfaceOp: { op: 'replace', start, end }, sourceEventSeqs: sources });

/**
 * Two nested compactions, a tool/result rewrite after them, a title, and a turn left open (so a
 * closer is appended in memory): every way a surface node is shadowed, and one that is never folded.
 */
const LINES = [
  headerLine('collect'),
  ev.turnStart(0),
  ev.stepStart(1),
  ev.user(2, 'U1'),
  ev.assistant(3, [toolCallBlock('c1')]),
  ev.toolCall(4, 'c1'),
  ev.toolResult(5, 'c1', 'out', { surfaceOp: 'append', sourceEventSeqs: [4] }),
  ev.assistant(6, [{ type: 'text', text: 'A2' }]),
  ev.stepEnd(7),
  ev.turnEnd(8),
  ev.of('compaction/start', 9, { compactionId: 'c1', turn: null }),
  ev.user(10, 'C1', replace(2, 5, [9, 2, 3, 5]), compact),
  ev.of('compaction/end', 11, { compactionId: 'c1', turn: null }),
  ev.title(12, 'Collected'),
  ev.turnStart(13, 2),
  ev.stepStart(14, 1, 2),
  ev.user(15, 'U2'),
  ev.assistant(16, [{ type: 'text', text: 'A3' }, toolCallBlock('c2'), toolCallBlock('c3')]),
  ev.toolCall(17, 'c2'),
  ev.toolResult(18, 'c2', 'a very long output', { surfaceOp: 'append', sourceEventSeqs: [17] }, 'r-2'),
  ev.of('compaction/prune', 19, { shadowedRange: { start: 18, end: 18 }, shadowedSeqs: [18], shadowedTokenCount: 5 }),
  ev.toolResult(20, 'c2', 'short', replace(18, 18, [18]), 'r-2'),
  ev.of('compaction/start', 21, { compactionId: 'c2', turn: null }),
  ev.user(22, 'C2', replace(10, 6, [21, 10, 6]), compact),
  ev.of('compaction/end', 23, { compactionId: 'c2', turn: null }),
  ev.toolCall(24, 'c3'),
];

const MODES = [true, false, 'surface-types'] as const;

type Answer = { log: LoadedSessionLog } | { error: { reason: string; message: string } };

function answer(load: () => LoadedSessionLog): Answer {
  try {
    return { log: load() };
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return { error: { reason: (error as SessionReadError).reason, message: (error as SessionReadError).message } };
  }
}

/** What a load keeping `mode` must give, derived from the load that keeps every event. */
function expectedFor(full: Answer, mode: (typeof MODES)[number]): Answer {
  if ('error' in full || mode === true) return full;
  const events = mode === false ? [] : full.log.events.filter((event) => SURFACE_EVENT_TYPES.has(event.type));
  return { log: { ...full.log, events } };
}

function transcripts(): Array<{ encoding: 'raw' | 'zstd'; bytes: Uint8Array }> {
  const files: Array<{ encoding: 'raw' | 'zstd'; bytes: Uint8Array }> = [{ encoding: 'raw', bytes: rawTranscript(LINES) }];
  if (zstdCli.found) {
    // Frames end inside a compaction and inside the rewrite, so a torn frame can hold a replace.
    const cuts = [1, 5, 11, 20, 23, LINES.length];
    files.push({ encoding: 'zstd', bytes: zstdTranscript(cuts.map((end, index) => LINES.slice(index === 0 ? 0 : cuts[index - 1], end))) });
  }
  return files;
}

describe('which events a full load keeps (keepEvents)', () => {
  const [raw] = transcripts();
  const full = loadSessionLog(raw.bytes, 'raw');

  it('the test log shadows nodes in every way and has closers', () => {
    expect(full.surface.map((event) => event.seq)).toEqual([22, 15, 16, 20, 25]);
    expect(full.events.slice(-3).map(({ type, seq }) => [type, seq])).toEqual([
      ['tool/result', 25],
      ['step/end', 26],
      ['turn/end', 27],
    ]);
  });

  it('false: the same log, with no events; only the current surface is held while reading', () => {
    expect(loadSessionLog(raw.bytes, 'raw', { keepEvents: false })).toEqual({ ...full, events: [] });
    const reader = new SessionLogReader('raw', { collectEvents: 'surface' });
    reader.push(raw.bytes);
    // Log order; the closer (seq 25) is appended only when the load finishes.
    expect(reader.read().events?.map((event) => event.seq)).toEqual([15, 16, 20, 22]);
  });

  it('false: a current-shape event is held as its line, an upgraded legacy one as the upgraded event', () => {
    const legacyResult = (seq: number, text: string, extra: Record<string, unknown>) =>
      ev.of('tool/result', seq, { turn: 1, step: 1, callId: 'c1', content: [{ type: 'text', text }], isError: false }, extra);
    const bytes = rawTranscript([
      headerLine('legacy'),
      ev.assistant(0, [toolCallBlock('c1')]),
      legacyResult(1, 'long output', { surfaceOp: 'append' }),
      ev.of('compaction/prune', 2, {}),
      // A legacy rewrite inherits the message id of the node it replaces.
      legacyResult(3, 'short', { surfaceOp: { op: 'replace', start: 1, end: 1 }, sourceEventSeqs: [1] }),
      ev.of('user/message', 4, { content: [{ type: 'text', text: 'legacy prompt' }], source: { kind: 'user' } }, { surfaceOp: 'append' }),
      ev.user(5, 'current prompt'),
    ]);
    const reader = new SessionLogReader('raw', { collectEvents: 'surface' });
    reader.push(bytes);
    const held = reader.read().events ?? [];
    expect(held.map((kept) => [kept.seq, kept instanceof StoredLine])).toEqual([
      [0, true],
      [3, false],
      [4, false],
      [5, true],
    ]);
    const full = loadSessionLog(bytes, 'raw');
    expect(full.surface[1].data.message.id).toBe('legacy-message:legacy:1');
    expect(loadSessionLog(bytes, 'raw', { keepEvents: false })).toEqual({ ...full, events: [] });
  });

  it("'surface-types': every user/message, assistant/message and tool/result, shadowed ones and closers included", () => {
    const log = loadSessionLog(raw.bytes, 'raw', { keepEvents: 'surface-types' });
    expect(log.events.map((event) => event.seq)).toEqual([2, 3, 5, 6, 10, 15, 16, 18, 20, 22, 25]);
    expect({ log }).toEqual(expectedFor({ log: full }, 'surface-types'));
  });

  it.skipIf(!zstdCli.found)('property: any mode gives the full load less the events it does not keep, for any cut, damage and pieces', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...transcripts()),
        fc.nat(),
        fc.option(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 }))),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.constantFrom(...availableZstdDecoders()),
        fc.constantFrom(...MODES),
        ({ encoding, bytes: whole }, cutSeed, damage, splitSeeds, decoder, mode) => {
          const bytes = whole.slice(0, cutSeed % (whole.length + 1));
          if (damage && bytes.length > 0) bytes[damage[0] % bytes.length] ^= damage[1];
          const splits = splitSeeds.map((seed) => seed % (bytes.length + 1)).sort((a, b) => a - b);
          const streamed = answer(() => {
            const loader = createSessionLogLoader(encoding, { zstdDecoder: decoder, keepEvents: mode });
            let from = 0;
            for (const at of [...splits, bytes.length]) {
              loader.push(bytes.subarray(from, at));
              from = at;
            }
            return loader.finish();
          });
          const full = answer(() => loadSessionLog(bytes, encoding, { zstdDecoder: decoder }));
          expect(streamed).toEqual(expectedFor(full, mode));
        },
      ),
      { numRuns: Number(process.env.LOG_PROPERTY_RUNS ?? 400) },
    );
  });
});

describe('loads that run side by side (as prepare reads its sources)', () => {
  /** A log whose surface lines outgrow a fresh line buffer, compacted every few turns. */
  function longLog(id: string, turns: number, width: number): Uint8Array {
    const lines = [headerLine(id)];
    let surface: number[] = [];
    for (let turn = 1; turn <= turns; turn++) {
      const seq = lines.length - 1;
      lines.push(ev.user(seq, `${id} prompt ${turn} ${'p'.repeat(width)}`), ev.assistant(seq + 1, [{ type: 'text', text: `${id} answer ${turn} ${'a'.repeat(width)}` }]));
      surface.push(seq, seq + 1);
      if (turn % 4 === 0) {
        const start = surface[0];
        const end = surface[surface.length - 1];
        lines.push(ev.user(seq + 2, `${id} summary ${turn}`, replace(start, end, surface), compact));
        surface = [seq + 2];
      }
    }
    return rawTranscript(lines);
  }

  it('each gives what it gives alone, however they are fed, one finishing (its buffer reused) while the others go on', () => {
    const logs = [longLog('one', 30, 9_000), longLog('two', 17, 25_000), longLog('three', 9, 60_000)];
    const alone = logs.map((bytes) => loadSessionLog(bytes, 'raw', { keepEvents: false }));
    expect(alone.map((log) => log.surface.length)).toEqual([5, 3, 3]);
    for (const piece of [7_919, 65_536, 1_000]) {
      const loaders = logs.map(() => createSessionLogLoader('raw', { keepEvents: false }));
      const finished: LoadedSessionLog[] = [];
      for (let at = 0; logs.some((bytes) => at < bytes.length); at += piece) {
        logs.forEach((bytes, index) => {
          if (at >= bytes.length) return;
          loaders[index].push(bytes.subarray(at, at + piece));
          if (at + piece >= bytes.length) finished[index] = loaders[index].finish();
        });
      }
      expect(finished).toEqual(alone);
    }
  });
});
