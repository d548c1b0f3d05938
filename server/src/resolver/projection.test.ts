import { describe, expect, it } from 'vitest';
import { foldSurface } from '../testing/inMemorySessionStore';
import { messageText, projectSessionSurface } from './projection';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import type { SessionEventRecord, SessionSurface, StoredSessionHeader } from './sessionStore';

const HEADER: StoredSessionHeader = { id: 'src', cwd: '/work', createdAt: 1 };

function surfaceOf(log: SessionLogBuilder, header: StoredSessionHeader = HEADER): SessionSurface {
  const events = log.events();
  return { header, capturedThroughSeq: events.length - 1, events: foldSurface(header.id, events) };
}

describe('projectSessionSurface', () => {
  it('keeps direct prompts (steering with extra source fields too) and assistant text, in surface order', () => {
    const log = new SessionLogBuilder();
    log.user('first prompt');
    log.assistant('first answer');
    log.user('steer', { kind: 'user', rpcId: 'r-1', clientTimeZone: 'UTC' });
    const { data, checkpoints } = projectSessionSurface(surfaceOf(log), 'Label');
    expect(data.conversation).toEqual([
      { role: 'user', text: 'first prompt' },
      { role: 'assistant', text: 'first answer' },
      { role: 'user', text: 'steer' },
    ]);
    expect(checkpoints).toEqual([false, false, false]);
  });

  it('builds the data object with keys in dsh order, cwd null when absent, the given label and capturedThroughSeq', () => {
    const log = new SessionLogBuilder();
    log.user('x');
    const surface: SessionSurface = { ...surfaceOf(log, { id: 'no-cwd', createdAt: 5 }), capturedThroughSeq: 42 };
    const { data } = projectSessionSurface(surface, 'shown');
    expect(Object.keys(data)).toEqual(['sessionId', 'label', 'cwd', 'capturedThroughSeq', 'conversation']);
    expect(data).toEqual({ sessionId: 'no-cwd', label: 'shown', cwd: null, capturedThroughSeq: 42, conversation: [{ role: 'user', text: 'x' }] });
    const empty = projectSessionSurface({ header: HEADER, capturedThroughSeq: null, events: [] }, 'e');
    expect(empty.data).toEqual({ sessionId: 'src', label: 'e', cwd: '/work', capturedThroughSeq: null, conversation: [] });
  });

  it('keeps a compaction checkpoint as a user message, flagged, with its text blocks joined by \\n', () => {
    const log = new SessionLogBuilder();
    const u = log.user('old prompt');
    const a = log.assistant('old answer');
    log.checkpoint(
      [
        { type: 'text', text: '<compacted-summary>' },
        { type: 'text', text: 'summary' },
        { type: 'text', text: '</compacted-summary>' },
      ],
      u,
      a,
    );
    log.assistant('after');
    const { data, checkpoints } = projectSessionSurface(surfaceOf(log), 'l');
    expect(data.conversation).toEqual([
      { role: 'user', text: '<compacted-summary>\nsummary\n</compacted-summary>' },
      { role: 'assistant', text: 'after' },
    ]);
    expect(checkpoints).toEqual([true, false]);
  });

  it('drops plugin context, earlier session-reference snapshots, unknown or missing sources, so references never nest', () => {
    const log = new SessionLogBuilder();
    log.user('kept');
    log.user('runtime snapshot', { kind: 'plugin', plugin: '@deepseek-ai/dsh-system-prompt', form: 'snapshot', sections: [] });
    log.user('a hook said so', { kind: 'plugin', plugin: 'hooks-claude-code' });
    log.user('## Referenced sessions\n…', { kind: 'session-reference', form: 'recall', version: 1, references: [] });
    log.user('goal text', { kind: 'goal' });
    // No dsh log holds a message without a source (the store refuses it), so that one is added to
    // the folded surface by hand: the projection must still drop it.
    const surface = surfaceOf(log);
    const noSource = { id: 'n', role: 'user', content: [{ type: 'text', text: 'no source' }] };
    const events = [...surface.events, { type: 'user/message', seq: surface.events.length, data: noSource, surfaceOp: 'append' as const }];
    const { data } = projectSessionSurface({ ...surface, events }, 'l');
    expect(data.conversation).toEqual([{ role: 'user', text: 'kept' }]);
  });

  it('drops tool results, reasoning, tool calls and images, keeping only text blocks', () => {
    const log = new SessionLogBuilder();
    log.user([
      { type: 'text', text: 'look' },
      { type: 'image', attachment: { attachmentId: 'sha256:0', mediaType: 'image/png', bytes: 1, width: 1, height: 1 } },
      { type: 'text', text: 'here' },
    ]);
    log.assistant([
      { type: 'reasoning', text: 'thinking…' },
      { type: 'text', text: 'answer' },
      { type: 'tool-call', id: 'c1', name: 'bash', arguments: '{}' },
    ]);
    log.toolResult('c1', 'tool output');
    const { data } = projectSessionSurface(surfaceOf(log), 'l');
    expect(data.conversation).toEqual([
      { role: 'user', text: 'look\nhere' },
      { role: 'assistant', text: 'answer' },
    ]);
  });

  it('drops a message whose text is empty, but not one whose joined text is a lone \\n', () => {
    const log = new SessionLogBuilder();
    log.user([{ type: 'image', attachment: {} }]);
    log.assistant([{ type: 'tool-call', id: 'c', name: 'n', arguments: '' }]);
    log.assistant([]);
    log.user('');
    log.user([
      { type: 'text', text: '' },
      { type: 'text', text: '' },
    ]);
    const { data, checkpoints } = projectSessionSurface(surfaceOf(log), 'l');
    expect(data.conversation).toEqual([{ role: 'user', text: '\n' }]);
    expect(checkpoints).toEqual([false]);
  });

  it('ignores events that are not on the current surface: shadowed messages and log-only records', () => {
    const log = new SessionLogBuilder();
    const u = log.user('shadowed prompt');
    log.event('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'unfinished' } });
    log.checkpoint('summary', u, u);
    log.title('a title');
    const { data } = projectSessionSurface(surfaceOf(log), 'l');
    expect(data.conversation).toEqual([{ role: 'user', text: 'summary' }]);
  });

  it('does not throw on malformed untrusted payloads and projects nothing from them', () => {
    const events: SessionEventRecord[] = [
      { type: 'user/message', seq: 0, data: null, surfaceOp: 'append' },
      { type: 'user/message', seq: 1, data: { source: { kind: 'user' }, content: 'not an array' }, surfaceOp: 'append' },
      { type: 'user/message', seq: 2, data: { source: { kind: 'user' }, content: [null, 7, { type: 'text', text: 3 }] }, surfaceOp: 'append' },
      { type: 'assistant/message', seq: 3, data: { message: null }, surfaceOp: 'append' },
      { type: 'assistant/message', seq: 4, data: 'text', surfaceOp: 'append' },
      { type: 'user/message', seq: 5, data: { source: null, content: [{ type: 'text', text: 'x' }] }, surfaceOp: 'append' },
    ];
    const { data } = projectSessionSurface({ header: HEADER, capturedThroughSeq: 5, events }, 'l');
    expect(data.conversation).toEqual([]);
  });
});

describe('messageText', () => {
  it('joins text blocks with \\n and skips everything else', () => {
    expect(messageText([{ type: 'text', text: 'a' }, { type: 'reasoning', text: 'r' }, { type: 'text', text: 'b' }])).toBe('a\nb');
    expect(messageText(undefined)).toBe('');
  });
});
