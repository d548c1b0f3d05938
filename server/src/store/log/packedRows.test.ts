/**
 * A packed row folds without building its events unless a full load keeps them: the index and
 * `readSurface` (which keep no chunk events) must read every log exactly as the full load does,
 * down to the time the crash-repair closers reuse from the last event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { SessionLogSummarizer, loadSessionLog, type LoadedSessionLog } from './index';
import { ev, headerLine, rawTranscript, toolCallBlock } from '../../testing/testLogs';

type Line = (seq: number) => { line: string; events: number };

const row = (type: string, payload: Record<string, unknown>, members: number, dt: number[], time0: number): Line => (seq) => ({
  line: JSON.stringify({ type, seq0: seq, time0, data: { turn: 1, step: 1, index: 0, dt, ...payload } }),
  events: members,
});

/** One line of a log: an ordinary event or a packed row of any kind (valid or not). */
const lineArbitrary: fc.Arbitrary<Line> = fc.oneof(
  fc
    .record({
      kind: fc.constantFrom('text-chunks', 'reasoning-chunks', 'tool-call-chunks'),
      members: fc.array(fc.string({ maxLength: 6 }), { minLength: 1, maxLength: 5 }),
      gaps: fc.array(fc.integer({ min: -50, max: 5000 }), { maxLength: 5 }),
      time0: fc.integer({ min: 0, max: 2 ** 45 }),
      named: fc.boolean(),
    })
    .map(({ kind, members, gaps, time0, named }) => {
      const dt = members.slice(1).map((_, i) => gaps[i] ?? 1);
      if (kind !== 'tool-call-chunks') return row(kind, { texts: members }, members.length, dt, time0);
      return row(kind, { id: 'call-1', ...(named ? { name: 'bash' } : {}), args: members }, members.length, dt, time0);
    }),
  fc.constant<Line>((seq) => ({ line: ev.stepStart(seq), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.stepEnd(seq), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.user(seq, `prompt ${seq}`), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.assistant(seq, [{ type: 'text', text: `answer ${seq}` }, toolCallBlock(`call-${seq}`)]), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.toolCall(seq, `call-${seq - 1}`), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.title(seq, `title ${seq}`), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.turnEnd(seq), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.turnStart(seq), events: 1 })),
  // Damage: a malformed row, a row that breaks the seq run, an unknown type, an unparsable line.
  fc.constant<Line>((seq) => ({ line: JSON.stringify({ type: 'text-chunks', seq0: seq, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [1], texts: ['a'] } }), events: 1 })),
  fc.constant<Line>((seq) => ({ line: JSON.stringify({ type: 'text-chunks', seq0: seq + 1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a'] } }), events: 1 })),
  fc.constant<Line>((seq) => ({ line: ev.of('mystery/type', seq, {}), events: 1 })),
  fc.constant<Line>(() => ({ line: '{"torn":', events: 0 })),
);

/** A log: header, an open turn, then the lines (seqs continue over rows). */
function logOf(lines: Line[]): Uint8Array {
  const text = [headerLine('rows'), ev.turnStart(0)];
  let seq = 1;
  for (const make of lines) {
    const { line, events } = make(seq);
    text.push(line);
    seq += events;
  }
  return rawTranscript(text);
}

function attempt(load: () => LoadedSessionLog): LoadedSessionLog | { error: string } {
  try {
    return load();
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return { error: (error as Error).message };
  }
}

describe('packed rows folded without their events', () => {
  it('property: the surface load and the summary read every log as the full load does (closer times included)', () => {
    let loaded = 0;
    let rowsInLoaded = 0;
    fc.assert(
      fc.property(fc.array(lineArbitrary, { maxLength: 25 }), (lines) => {
        const bytes = logOf(lines);
        const full = attempt(() => loadSessionLog(bytes, 'raw'));
        const surfaceOnly = attempt(() => loadSessionLog(bytes, 'raw', { keepEvents: false }));
        const summarizer = new SessionLogSummarizer('raw');
        summarizer.push(bytes);
        const summary = summarizer.summary();
        if ('error' in full) {
          expect(surfaceOnly).toEqual(full);
          expect(summary.error?.message).toBe(full.error);
          return;
        }
        loaded++;
        if (full.events.some((event) => event.type === 'assistant/chunk')) rowsInLoaded++;
        expect(surfaceOnly).toEqual({ ...full, events: [] });
        expect(summary).toEqual({
          header: full.header,
          capturedThroughSeq: full.capturedThroughSeq,
          surfaceCounts: full.surfaceCounts,
          eventCount: full.events.length,
          ...(full.title === undefined ? {} : { title: full.title }),
        });
      }),
      { numRuns: 300 },
    );
    expect(loaded).toBeGreaterThan(30);
    expect(rowsInLoaded).toBeGreaterThan(15);
  });

  it('the closers of a turn left open after a row reuse the time of the row’s last member, on the surface too', () => {
    const bytes = rawTranscript([
      headerLine('rows'),
      ev.turnStart(0),
      ev.stepStart(1),
      ev.assistant(2, [toolCallBlock('call-a')]),
      JSON.stringify({ type: 'text-chunks', seq0: 3, time0: 1000, data: { turn: 1, step: 1, index: 0, dt: [5, -2], texts: ['a', 'b', 'c'] } }),
    ]);
    const log = loadSessionLog(bytes, 'raw', { keepEvents: false });
    expect(log.capturedThroughSeq).toBe(8);
    expect(log.surface.map((event) => [event.type, event.seq, event.time])).toEqual([
      ['assistant/message', 2, 1767300000002],
      ['tool/result', 6, 1003],
    ]);
    const full = loadSessionLog(bytes, 'raw');
    expect(full.events.slice(-3).map((event) => [event.type, event.time])).toEqual([
      ['tool/result', 1003],
      ['step/end', 1003],
      ['turn/end', 1003],
    ]);
  });
});
