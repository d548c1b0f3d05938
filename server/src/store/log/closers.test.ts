import { describe, expect, it } from 'vitest';
import { loadSessionLog, type LoadedSessionLog } from './index';
import { ev, headerLine, rawTranscript, toolCallBlock } from '../../testing/testLogs';

function load(lines: string[]): LoadedSessionLog {
  return loadSessionLog(rawTranscript([headerLine('open'), ...lines]), 'raw');
}

const LAST_TIME = 1767300000000 + 5;

describe('crash-repair closers appended in memory (store doc §6.5)', () => {
  it('closes pending tool calls (outcome unknown after tool/call, not started without), the step and the turn', () => {
    const log = load([
      ev.turnStart(0),
      ev.stepStart(1),
      ev.user(2, 'run both'),
      ev.assistant(3, [{ type: 'text', text: 'ok' }, toolCallBlock('c1'), toolCallBlock('c2')]),
      ev.toolCall(4, 'c1'),
      ev.of('hook/invoked', 5, { turn: 1, point: 'PreToolUse', dialect: 'claude-code', handlerId: 'h' }),
    ]);
    const closers = log.events.slice(6);
    expect(closers.map((event) => [event.seq, event.type, event.time])).toEqual([
      [6, 'tool/result', LAST_TIME],
      [7, 'tool/result', LAST_TIME],
      [8, 'step/end', LAST_TIME],
      [9, 'turn/end', LAST_TIME],
    ]);
    expect(closers[0]).toMatchObject({
      data: {
        turn: 1,
        step: 1,
        message: {
          id: 'interrupted-tool-result-c1-6',
          role: 'user',
          source: { kind: 'tool', callId: 'c1' },
          content: [{ type: 'tool-result', toolCallId: 'c1', isError: true }],
        },
        error: { name: 'ToolOutcomeUnknownError', code: 'TOOL_OUTCOME_UNKNOWN' },
      },
      surfaceOp: 'append',
      sourceEventSeqs: [4],
    });
    expect(closers[0].data.message.content[0].content[0].text).toMatch(/^The tool call was interrupted after it was recorded/);
    expect(closers[1]).toMatchObject({
      data: { message: { id: 'interrupted-tool-result-c2-7' }, error: { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' } },
    });
    expect(closers[1]).not.toHaveProperty('sourceEventSeqs');
    expect(closers[1].data.message.content[0].content[0].text).toMatch(/^The tool call was interrupted before the Harness recorded it/);
    expect(closers.slice(2).map((event) => event.data)).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, reason: { kind: 'interrupted' } },
    ]);
    expect(log.capturedThroughSeq).toBe(9);
    expect(log.surface.map((event) => event.seq)).toEqual([2, 3, 6, 7]);
    expect(log.surfaceCounts).toEqual({ user: 1, assistant: 1, tool: 2 });
  });

  it('answered calls need no closer; step/end forgets the calls of its step', () => {
    const answered = load([
      ev.turnStart(0),
      ev.stepStart(1),
      ev.assistant(2, [toolCallBlock('c1')]),
      ev.toolCall(3, 'c1'),
      ev.toolResult(4, 'c1', 'done', { surfaceOp: 'append', sourceEventSeqs: [3] }),
    ]);
    expect(answered.events.slice(5).map((event) => event.type)).toEqual(['step/end', 'turn/end']);

    const nextStep = load([ev.turnStart(0), ev.stepStart(1), ev.assistant(2, [toolCallBlock('c1')]), ev.stepEnd(3), ev.stepStart(4, 2)]);
    expect(nextStep.events.slice(5).map((event) => [event.type, event.data])).toEqual([
      ['step/end', { turn: 1, step: 2 }],
      ['turn/end', { turn: 1, reason: { kind: 'interrupted' } }],
    ]);
  });

  it('an open turn without an open step gets only turn/end', () => {
    const log = load([ev.turnStart(0, 3)]);
    expect(log.events).toHaveLength(2);
    expect(log.events[1]).toEqual({ type: 'turn/end', seq: 1, time: 1767300000000, data: { turn: 3, reason: { kind: 'interrupted' } } });
    expect(log.capturedThroughSeq).toBe(1);
  });

  it('a balanced log, or one with no turn at all, gets nothing', () => {
    expect(load([ev.turnStart(0), ev.stepStart(1), ev.stepEnd(2), ev.turnEnd(3)]).events).toHaveLength(4);
    expect(load([ev.user(0, 'between turns'), ev.title(1, 't')]).events).toHaveLength(2);
  });

  it('a call requested again while pending keeps its place but forgets its tool/call', () => {
    const log = load([
      ev.turnStart(0),
      ev.stepStart(1),
      ev.assistant(2, [toolCallBlock('c1'), toolCallBlock('c2')]),
      ev.toolCall(3, 'c1'),
      ev.assistant(4, [toolCallBlock('c1')]),
    ]);
    expect(log.events.slice(5, 7).map((event) => [event.data.message.source.callId, event.data.error.code])).toEqual([
      ['c1', 'TOOL_NOT_STARTED'],
      ['c2', 'TOOL_NOT_STARTED'],
    ]);
  });
});
