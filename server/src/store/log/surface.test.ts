import { describe, expect, it } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { loadSessionLog, type LoadedSessionLog } from './index';
import { ev, headerLine, rawTranscript, toolCallBlock } from '../../testing/testLogs';

const HEADER = headerLine('fold');

function load(lines: string[]): LoadedSessionLog {
  return loadSessionLog(rawTranscript([HEADER, ...lines]), 'raw');
}

function failure(lines: string[]): SessionReadError {
  try {
    load(lines);
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return error as SessionReadError;
  }
  throw new Error('expected the load to fail');
}

const compact = { kind: 'plugin', plugin: 'compact', compactionId: 'k' };
const replace = (start: number, end: number, sources: number[]) => ({
  surfaceOp: { op: 'replace', start, end },
  sourceEventSeqs: sources,
});

/** store doc §6.3: two compactions, the second starting at the first checkpoint. */
const NESTED = [
  ev.user(0, 'U1'),
  ev.assistant(1, [toolCallBlock('c1')]),
  ev.toolCall(2, 'c1'),
  ev.toolResult(3, 'c1', 'out', { surfaceOp: 'append', sourceEventSeqs: [2] }),
  ev.assistant(4, [{ type: 'text', text: 'A2' }]),
  ev.user(5, 'U2'),
  ev.assistant(6, [{ type: 'text', text: 'A3' }]),
  ev.of('compaction/start', 7, { compactionId: 'c1', turn: null }),
  ev.of('compaction/summary', 8, { compactionId: 'c1', summary: [], shadowedRange: { start: 0, end: 4 }, shadowedSeqs: [0, 1, 3, 4] }),
  ev.user(9, 'C1', replace(0, 4, [7, 8, 0, 1, 3, 4]), compact),
  ev.of('compaction/end', 10, { compactionId: 'c1', turn: null }),
  ev.user(11, 'U3'),
  ev.assistant(12, [{ type: 'text', text: 'A4' }]),
  ev.of('compaction/start', 13, { compactionId: 'c2', turn: null }),
  ev.of('compaction/summary', 14, { compactionId: 'c2', summary: [], shadowedRange: { start: 9, end: 6 }, shadowedSeqs: [9, 5, 6] }),
  ev.user(15, 'C2', replace(9, 6, [13, 14, 9, 5, 6]), compact),
  ev.of('compaction/end', 16, { compactionId: 'c2', turn: null }),
];

describe('surface fold (store doc §6)', () => {
  it('§6.3: a replace range is taken in surface order, so {start: 9, end: 6} is legal; the surface is [15, 11, 12]', () => {
    const log = load(NESTED);
    expect(log.surface.map((event) => event.seq)).toEqual([15, 11, 12]);
    const message = (event: (typeof log.surface)[number]) => (event.type === 'user/message' ? event.data : event.data.message);
    expect(log.surface.map((event) => message(event).content[0].text)).toEqual(['C2', 'U3', 'A4']);
    expect(log.capturedThroughSeq).toBe(16);
    expect(log.surfaceCounts).toEqual({ user: 2, assistant: 1, tool: 0 });
  });

  it('after the first compaction the surface is [9, 5, 6]', () => {
    expect(load(NESTED.slice(0, 11)).surface.map((event) => event.seq)).toEqual([9, 5, 6]);
  });

  it('a checkpoint may replace the middle of the surface', () => {
    const log = load([ev.user(0, 'a'), ev.user(1, 'b'), ev.user(2, 'c'), ev.user(3, 'C', replace(1, 1, [1]), compact)]);
    expect(log.surface.map((event) => event.seq)).toEqual([0, 3, 2]);
  });

  const invalidRanges: Array<[string, string[], RegExp]> = [
    ['a start that is not on the surface', [...NESTED.slice(0, 9), ev.user(9, 'C', replace(2, 4, [7, 8, 2, 3, 4]), compact)], /start seq 2 not found/],
    ['an end that was already shadowed', [...NESTED.slice(0, 11), ev.user(11, 'C', replace(9, 4, [9, 4]), compact)], /end seq 4 not found/],
    ['a start after the end in surface order', [...NESTED.slice(0, 11), ev.user(11, 'C', replace(6, 9, [6, 5, 9]), compact)], /start seq 6 \(index 2\) is after end seq 9 \(index 0\)/],
    ['a source list missing a shadowed node', [...NESTED.slice(0, 9), ev.user(9, 'C', replace(0, 4, [7, 8, 0, 1, 4]), compact)], /missing 3/],
    ['a replace without sources', [...NESTED.slice(0, 9), ev.user(9, 'C', { surfaceOp: { op: 'replace', start: 0, end: 0 } }, compact)], /missing 0/],
    ['a negative start', [ev.user(0, 'a'), ev.user(1, 'C', replace(-1, 0, [0]), compact)], /invalid replace/],
  ];
  for (const [what, lines, message] of invalidRanges) {
    it(`rejects ${what}`, () => {
      const error = failure(lines);
      expect(error.reason).toBe('corrupt');
      expect(error.message).toMatch(message);
    });
  }

  describe('sourceEventSeqs on an append', () => {
    const chunks = [ev.of('step/start', 0, { turn: 1, step: 1 }), ev.of('llm/retry', 1, {}), ev.of('llm/retry', 2, {})];
    const assistant = (sources: unknown) => ev.assistant(3, [{ type: 'text', text: 'A' }], { surfaceOp: 'append', sourceEventSeqs: sources });
    const cases: Array<[string, unknown, RegExp | undefined]> = [
      ['ascending earlier seqs', [0, 1, 2], undefined],
      ['earlier seqs in another order', [2, 0, 1], undefined],
      ['an empty list on an assistant message', [], undefined],
      ['a repeat in ascending runs', [0, 1, 1, 2], /must not contain duplicates/],
      ['a repeat out of order', [2, 0, 2], /must not contain duplicates/],
      ['a repeat and a later seq (the repeat is reported first)', [0, 0, 5], /must not contain duplicates/],
      ['a later seq (the first in list order is named)', [0, 7, 4, 1], /references? earlier events: 7 >= current seq 3/],
      ['the current seq', [3], /3 >= current seq 3/],
      ['a non-integer before a later seq', [9, 1.5], /must contain non-negative safe integers/],
      ['a negative seq', [-1], /must contain non-negative safe integers/],
      ['not an array', { 0: 1 }, /must be an array when present/],
    ];
    for (const [what, sources, problem] of cases) {
      it(`${problem ? 'rejects' : 'accepts'} ${what}`, () => {
        const lines = [...chunks, assistant(sources)];
        if (problem === undefined) expect(load(lines).surface.map((event) => event.seq)).toEqual([3]);
        else expect(failure(lines).message).toMatch(problem);
      });
    }
  });

  describe('tool/result rewrites (compaction/prune)', () => {
    const base = [
      ev.assistant(0, [toolCallBlock('c1'), toolCallBlock('c2')]),
      ev.toolCall(1, 'c1'),
      ev.toolResult(2, 'c1', 'a very long output', { surfaceOp: 'append', sourceEventSeqs: [1] }, 'r-1'),
      ev.toolResult(3, 'c2', 'other', { surfaceOp: 'append' }, 'r-2'),
      ev.of('compaction/prune', 4, { shadowedRange: { start: 2, end: 2 }, shadowedSeqs: [2], shadowedTokenCount: 5 }),
    ];

    it('may shorten only the tool-result content, keeping the message id', () => {
      const log = load([...base, ev.toolResult(5, 'c1', 'short', replace(2, 2, [2]), 'r-1')]);
      expect(log.surface.map((event) => event.seq)).toEqual([0, 5, 3]);
      expect(log.surfaceCounts).toEqual({ user: 0, assistant: 1, tool: 2 });
    });

    it('rejects a rewrite changing anything else, covering two nodes, or targeting a non-tool node', () => {
      expect(failure([...base, ev.toolResult(5, 'c1', 'short', replace(2, 2, [2]), 'r-other')]).message).toMatch(/may change only content/);
      expect(failure([...base, ev.toolResult(5, 'c1', 'short', replace(2, 3, [2, 3]), 'r-1')]).message).toMatch(/exactly one current node/);
      expect(failure([...base, ev.toolResult(5, 'c1', 'short', replace(0, 0, [0]), 'r-1')]).message).toMatch(/must target a current tool\/result/);
    });
  });
});

describe('surface fold robustness', () => {
  it('keeps a deeply nested tool result (only a rewrite of it would need comparing it)', () => {
    const deep = `${'['.repeat(20000)}1${']'.repeat(20000)}`;
    const nested = ev.toolResult(1, 'c1', 'x').replace('"isError":false', `"isError":false,"extra":${deep}`);
    const log = load([ev.assistant(0, [toolCallBlock('c1')]), nested]);
    expect(log.surface.map((event) => event.seq)).toEqual([0, 1]);
    const rewrite = ev.toolResult(3, 'c1', 'y', replace(1, 1, [1]), 't-1').replace('"isError":false', `"isError":false,"extra":${deep}`);
    const error = failure([ev.assistant(0, [toolCallBlock('c1')]), nested, ev.of('compaction/prune', 2, {}), rewrite]);
    expect(error.message).toMatch(/nested too deeply/);
  });
});
