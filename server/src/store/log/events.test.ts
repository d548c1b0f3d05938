import { describe, expect, it } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { loadSessionLog, type LoadedSessionLog } from './index';
import { ev, headerLine, rawTranscript, toolCallBlock } from '../../testing/testLogs';

const HEADER = headerLine('s-1');

function load(...lines: string[]): LoadedSessionLog {
  return loadSessionLog(rawTranscript([HEADER, ...lines]), 'raw');
}

function failure(...lines: string[]): SessionReadError {
  try {
    load(...lines);
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return error as SessionReadError;
  }
  throw new Error('expected the load to fail');
}

describe('unknown event types (store doc §3.1)', () => {
  it('refuses an unknown type as unsupported', () => {
    const error = failure(ev.title(0, 'x'), ev.of('future/thing', 1, {}));
    expect(error.reason).toBe('unsupported');
    expect(error.message).toMatch(/"future\/thing" \(seq 1\).*newer harness/);
  });

  it('keeps an unknown type marked ignorable:true as a log-only event', () => {
    const log = load(ev.of('future/thing', 0, { a: 1 }, { ignorable: true }), ev.title(1, 'kept'));
    expect(log.events.map((event) => event.type)).toEqual(['future/thing', 'session/title']);
    expect(log).toMatchObject({ title: 'kept', capturedThroughSeq: 1, surface: [] });
  });

  it('a corrupt event anywhere wins over an earlier unknown type (dsh checks messages first)', () => {
    const error = failure(ev.of('future/thing', 0, {}), ev.of('user/message', 1, { content: [] }, { surfaceOp: 'append' }));
    expect(error.reason).toBe('corrupt');
  });

  it('an unknown type wins over a later envelope error', () => {
    const error = failure(ev.of('future/thing', 0, {}), ev.of('turn/start', 1, { turn: 1 }, { extra: true }));
    expect(error.reason).toBe('unsupported');
  });
});

describe('event envelope (store doc §3.1)', () => {
  const invalid: Array<[string, string]> = [
    ['an unknown top-level key', ev.of('step/start', 0, { turn: 1, step: 1 }, { meta: 1 })],
    ['ignorable other than true', ev.of('step/start', 0, { turn: 1, step: 1 }, { ignorable: false })],
    ['a fractional time', JSON.stringify({ type: 'step/start', seq: 0, time: 1.5, data: {} })],
    ['no time', JSON.stringify({ type: 'step/start', seq: 0, data: {} })],
    ['no data', JSON.stringify({ type: 'session/end-seed', seq: 0, time: 1 })],
    ['surfaceOp on a log-only type', ev.of('step/start', 0, { turn: 1, step: 1 }, { surfaceOp: 'append' })],
    ['sourceEventSeqs on a log-only type', ev.of('step/start', 0, { turn: 1, step: 1 }, { sourceEventSeqs: [0] })],
    ['a surface type without surfaceOp', ev.user(0, 'hi', {})],
    ['an unknown surfaceOp', ev.user(0, 'hi', { surfaceOp: 'prepend' })],
    ['a replace with an extra key', ev.user(0, 'hi', { surfaceOp: { op: 'replace', start: 0, end: 0, x: 1 } })],
    ['sourceEventSeqs citing itself', ev.user(0, 'hi', { surfaceOp: 'append', sourceEventSeqs: [0] })],
    ['empty sourceEventSeqs on a user message', ev.user(0, 'hi', { surfaceOp: 'append', sourceEventSeqs: [] })],
    ['a request header without provider/model', ev.of('request/header', 0, { header: { config: { provider: 'p' } }, reason: 'initial' })],
    ['an assistant message without model source', ev.of('assistant/message', 0, { turn: 1, step: 1, message: { id: 'a', role: 'assistant', content: [], source: { kind: 'user' } } }, { surfaceOp: 'append' })],
    ['a tool result whose block names another call', ev.of('tool/result', 0, { turn: 1, step: 1, message: { id: 't', role: 'user', source: { kind: 'tool', callId: 'c1' }, content: [{ type: 'tool-result', toolCallId: 'c2', content: [] }] } }, { surfaceOp: 'append' })],
    ['a user message with an empty id', ev.of('user/message', 0, { id: '', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: 'append' })],
  ];
  for (const [what, line] of invalid) {
    it(`rejects ${what} as corrupt`, () => {
      expect(failure(line).reason).toBe('corrupt');
    });
  }

  it('allows empty sourceEventSeqs on an assistant message ("known empty stream")', () => {
    expect(load(ev.assistant(0, [], { surfaceOp: 'append', sourceEventSeqs: [] })).surface).toHaveLength(1);
  });
});

describe('packed rows (store doc §4)', () => {
  it('expands a tool-call row with its name and an empty first delta, and a reasoning row', () => {
    const log = load(
      JSON.stringify({ type: 'tool-call-chunks', seq0: 0, time0: 100, data: { turn: 1, step: 2, index: 1, id: 'c', name: 'bash', dt: [0, -3], args: ['', '{', '}'] } }),
      JSON.stringify({ type: 'reasoning-chunks', seq0: 3, time0: 7, data: { turn: 1, step: 2, index: 0, dt: [], texts: ['why'] } }),
    );
    expect(log.events.map((event) => [event.seq, event.time, event.data.chunk])).toEqual([
      [0, 100, { type: 'tool-call-delta', index: 1, id: 'c', name: 'bash', argumentsDelta: '' }],
      [1, 100, { type: 'tool-call-delta', index: 1, id: 'c', name: 'bash', argumentsDelta: '{' }],
      [2, 97, { type: 'tool-call-delta', index: 1, id: 'c', name: 'bash', argumentsDelta: '}' }],
      [3, 7, { type: 'reasoning-delta', index: 0, text: 'why' }],
    ]);
  });

  const malformed: Array<[string, Record<string, unknown>]> = [
    ['an extra envelope key', { type: 'text-chunks', time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a'] }, x: 1 }],
    ['an extra data key', { type: 'text-chunks', time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a'], name: 'n' } }],
    ['empty texts', { type: 'text-chunks', time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: [] } }],
    ['dt of the wrong length', { type: 'text-chunks', time0: 1, data: { turn: 1, step: 1, index: 0, dt: [1, 2], texts: ['a', 'b'] } }],
    ['a fractional gap', { type: 'text-chunks', time0: 1, data: { turn: 1, step: 1, index: 0, dt: [0.5], texts: ['a', 'b'] } }],
    ['a time leaving the safe range', { type: 'text-chunks', time0: Number.MAX_SAFE_INTEGER, data: { turn: 1, step: 1, index: 0, dt: [1], texts: ['a', 'b'] } }],
    ['a negative seq0', { type: 'text-chunks', seq0: -1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a'] } }],
    ['a non-string tool call id', { type: 'tool-call-chunks', time0: 1, data: { turn: 1, step: 1, index: 0, id: 5, dt: [], args: ['a'] } }],
    ['a string turn', { type: 'reasoning-chunks', time0: 1, data: { turn: '1', step: 1, index: 0, dt: [], texts: ['a'] } }],
  ];
  for (const [what, row] of malformed) {
    it(`treats a row with ${what} as a defect: cut at the tail, corrupt before a turn/end`, () => {
      expect(load(ev.turnStart(0), JSON.stringify({ seq0: 1, ...row })).events.map((event) => event.type)).toEqual([
        'turn/start',
        'turn/end',
      ]);
      expect(failure(ev.turnStart(0), JSON.stringify({ seq0: 1, ...row }), ev.turnEnd(1)).reason).toBe('corrupt');
    });
  }
});

describe('legacy shapes upgraded at load (store doc §3.7)', () => {
  it('gives an id-less user message role "user" and a legacy id', () => {
    const log = load(ev.of('user/message', 0, { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }, { surfaceOp: 'append' }));
    expect(log.events[0].data).toEqual({ content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' }, id: 'legacy-message:s-1:0', role: 'user' });
  });

  it('wraps a legacy assistant message (content + provenance) into message with a model source', () => {
    const log = load(
      ev.of('assistant/message', 0, { turn: 1, step: 1, content: [{ type: 'text', text: 'a' }], provenance: { provider: 'p', model: 'm' }, usage: { inputTokens: 1 } }, { surfaceOp: 'append' }),
    );
    expect(log.events[0].data).toEqual({
      turn: 1,
      step: 1,
      usage: { inputTokens: 1 },
      message: { id: 'legacy-message:s-1:0', role: 'assistant', content: [{ type: 'text', text: 'a' }], source: { provider: 'p', model: 'm', kind: 'model' } },
    });
  });

  it('builds a legacy tool result message; a replacement inherits the replaced message id', () => {
    const legacy = (seq: number, text: string, extra: Record<string, unknown>) =>
      ev.of('tool/result', seq, { turn: 1, step: 1, callId: 'c1', content: [{ type: 'text', text }], isError: false }, extra);
    const log = load(
      ev.assistant(0, [toolCallBlock('c1')]),
      legacy(1, 'long output', { surfaceOp: 'append' }),
      ev.of('compaction/prune', 2, { shadowedRange: { start: 1, end: 1 }, shadowedSeqs: [1], shadowedTokenCount: 9 }),
      legacy(3, 'short', { surfaceOp: { op: 'replace', start: 1, end: 1 }, sourceEventSeqs: [1] }),
    );
    expect(log.events[1].data.message).toEqual({
      id: 'legacy-message:s-1:1',
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'long output' }], isError: false }],
      source: { kind: 'tool', callId: 'c1' },
    });
    expect(log.events[3].data.message.id).toBe('legacy-message:s-1:1');
    expect(log.surface.map((event) => event.seq)).toEqual([0, 3]);
  });

  it('converts steering/message (both shapes) to user/message', () => {
    const log = load(
      ev.of('steering/message', 0, { turn: 1, content: [{ type: 'text', text: 'steer' }], source: { kind: 'user' } }, { surfaceOp: 'append' }),
      ev.of('steering/message', 1, { turn: 1, message: { id: 'm', role: 'user', content: [], source: { kind: 'user' } } }, { surfaceOp: 'append' }),
    );
    expect(log.events.map((event) => [event.type, event.data])).toEqual([
      ['user/message', { content: [{ type: 'text', text: 'steer' }], source: { kind: 'user' }, id: 'legacy-message:s-1:0', role: 'user' }],
      ['user/message', { id: 'm', role: 'user', content: [], source: { kind: 'user' } }],
    ]);
  });

  it('drops turn/start trigger and upgrades legacy turn/end reasons', () => {
    const log = load(
      ev.of('turn/start', 0, { turn: 1, trigger: { kind: 'user' } }),
      ev.of('turn/end', 1, { turn: 1, reason: { kind: 'aborted' } }),
      ev.turnStart(2, 2),
      ev.of('turn/end', 3, { turn: 2, reason: { kind: 'disposed' } }),
      ev.turnStart(4, 3),
      ev.of('turn/end', 5, { turn: 3, reason: { kind: 'error', step: 1, message: 'boom' } }),
      ev.turnStart(6, 4),
      ev.of('turn/end', 7, { turn: 4, reason: { kind: 'error', step: 1, failure: { message: 'm', code: 'C', status: 500 } } }),
    );
    expect(log.events.map((event) => event.data)).toEqual([
      { turn: 1 },
      { turn: 1, reason: { kind: 'aborted', reason: { kind: 'legacy' } } },
      { turn: 2 },
      { turn: 2, reason: { kind: 'aborted', reason: { kind: 'disposed' } } },
      { turn: 3 },
      { turn: 3, reason: { kind: 'error', error: { message: 'boom', code: 'UNKNOWN' } } },
      { turn: 4 },
      { turn: 4, reason: { kind: 'error', error: { message: 'm', code: 'C', status: 500 } } },
    ]);
  });

  const malformedLegacy: Array<[string, string]> = [
    ['a turn/end with an extra key', ev.of('turn/end', 0, { turn: 1, reason: { kind: 'completed' }, extra: 1 })],
    ['a completed reason with an extra key', ev.of('turn/end', 0, { turn: 1, reason: { kind: 'completed', extra: true } })],
    ['a turn/end with turn 0', ev.of('turn/end', 0, { turn: 0, reason: { kind: 'completed' } })],
    ['a turn/start trigger without kind', ev.of('turn/start', 0, { turn: 1, trigger: {} })],
    ['a steering message of unknown shape', ev.of('steering/message', 0, { turn: 1, text: 'x' }, { surfaceOp: 'append' })],
  ];
  for (const [what, line] of malformedLegacy) {
    it(`rejects ${what} as corrupt`, () => {
      expect(failure(line).reason).toBe('corrupt');
    });
  }

  it('refuses request/header-delta, mode/set and request/header reason "fallback" as corrupt', () => {
    for (const line of [
      ev.of('request/header-delta', 0, {}),
      ev.of('mode/set', 0, {}),
      ev.of('request/header', 0, { header: { config: { provider: 'p', model: 'm' } }, reason: 'fallback' }),
    ]) {
      const error = failure(line);
      expect(error.reason).toBe('corrupt');
      expect(error.message).toMatch(/unsupported legacy/);
    }
  });
});
