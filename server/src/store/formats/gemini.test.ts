// Gemini CLI's operation log read as the CLI reads it (0.61.0): the listing facts of its metadata-only
// load and list command, the history it resumes, and the project registry and markers.
import { describe, expect, it } from 'vitest';
import { geminiFormat, geminiListLabel, geminiMarkerCwd, geminiProjectCwds } from './gemini';
import { parseJsonl } from './records';

const ID = '5e55a0e1-0000-4000-8000-000000000001';
const header = (extra: Record<string, unknown> = {}) => ({ sessionId: ID, projectHash: 'f'.repeat(64), startTime: '2026-12-01T10:00:00.000Z', lastUpdated: '2026-12-01T10:00:00.000Z', kind: 'main', ...extra });
const CONTEXT = { id: 'ctx', timestamp: '2026-12-01T10:00:00.001Z', type: 'user', content: [{ text: '<session_context>\nThis is the Gemini CLI.\n</session_context>' }] };
const user = (id: string, text: unknown) => ({ id, timestamp: '2026-12-01T10:00:01.000Z', type: 'user', content: typeof text === 'string' ? [{ text }] : text });
const gemini = (id: string, content: unknown, extra: Record<string, unknown> = {}) => ({ id, timestamp: '2026-12-01T10:00:02.000Z', type: 'gemini', content, ...extra });
const SNAPSHOT = '<state_snapshot>\n<overall_goal>日本語 summary</overall_goal>\n</state_snapshot>';
const ACK = 'Got it. Thanks for the additional context!';

function fileOf(...lines: unknown[]): string {
  return lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';
}
const facts = (text: string) => geminiFormat.summarize('session-2026-12-01T10-00-5e55a0e1.jsonl', text, 42);
const texts = (events: ReturnType<typeof geminiFormat.surface>) =>
  events.map((event) => {
    const data = event.data as { source?: { kind: string }; content?: Array<{ text: string }>; message?: { content: Array<{ text: string }> } };
    if (event.type === 'assistant/message') return 'assistant: ' + data.message!.content.map((b) => b.text).join('\n');
    return (data.source!.kind === 'plugin' ? 'checkpoint: ' : 'user: ') + data.content!.map((b) => b.text).join('\n');
  });

describe('geminiListLabel (what gemini --list-sessions shows)', () => {
  it('is the summary, cleaned of terminal escapes and invisible controls, else the first prompt as the CLI cleans it', () => {
    expect(geminiListLabel('Fix the \u001b[31mparser\u001b[0m\u200b 日本語', 'ignored')).toBe('Fix the parser 日本語');
    // The first prompt: whitespace runs as one space, every character outside printable ASCII dropped.
    expect(geminiListLabel(undefined, '日本語のセッション:\n\n  compress   me ')).toBe(': compress me');
    expect(geminiListLabel('', '')).toBe('Empty conversation');
    expect(geminiListLabel(undefined, '日本語')).toBeUndefined();
  });

  it('cuts a label over 100 UTF-16 units to 97 and "...", as the list does', () => {
    expect(geminiListLabel(undefined, 'a'.repeat(100))).toBe('a'.repeat(100));
    expect(geminiListLabel(undefined, 'b'.repeat(101))).toBe('b'.repeat(97) + '...');
    // A surrogate pair the cut would halve is left out whole.
    expect(geminiListLabel('c'.repeat(96) + '😀' + 'd'.repeat(10), undefined)).toBe('c'.repeat(96) + '...');
  });
});

describe('Gemini CLI listing facts', () => {
  it('lists a session by its id, first start time and first real prompt; the CLI context and slash commands do not count', () => {
    const text = fileOf(header(), { $set: { messages: [CONTEXT] } }, user('u0', '/compress'), user('u1', 'Hello, first prompt'), gemini('g1', 'Hi'), header({ startTime: '2026-12-02T00:00:00.000Z' }));
    expect(facts(text)).toEqual({ id: ID, createdAt: Date.parse('2026-12-01T10:00:00.000Z'), title: 'Hello, first prompt' });
  });

  it('titles by the latest summary set, and falls back to the first prompt without one', () => {
    const text = fileOf(header(), user('u1', 'Prompt'), { $set: { summary: 'First summary' } }, { $set: { summary: 'Second summary' } });
    expect(facts(text)?.title).toBe('Second summary');
    // A summary that is not text makes the CLI's list skip the file.
    expect(facts(fileOf(header(), user('u1', 'Prompt'), { $set: { summary: 7 } }))).toBeUndefined();
  });

  it('is no session without something worth resuming, after rewinds and replacements, or for a subagent', () => {
    // Only the CLI's own context: a resume that never got a turn.
    expect(facts(fileOf(header(), { $set: { messages: [CONTEXT] } }))).toBeUndefined();
    // A failed turn rolled back by a replacement of the history.
    expect(facts(fileOf(header(), { $set: { messages: [CONTEXT] } }, user('u1', 'Lost prompt'), { $set: { messages: [CONTEXT] } }))).toBeUndefined();
    // Rewound to before the only prompt; a rewind to an unknown id drops everything.
    expect(facts(fileOf(header(), user('u1', 'Prompt'), gemini('g1', 'Reply'), { $rewindTo: 'u1' }))).toBeUndefined();
    expect(facts(fileOf(header(), user('u1', 'Prompt'), { $rewindTo: 'nowhere' }))).toBeUndefined();
    expect(facts(fileOf(header({ kind: 'subagent' }), user('u1', 'Prompt')))).toBeUndefined();
    // No header (no session id and project hash): not a session file of this format.
    expect(facts(fileOf(user('u1', 'Prompt')))).toBeUndefined();
    // The first prompt ever written stays the label, even rewound away, while a later message keeps it listed.
    expect(facts(fileOf(header(), user('u1', 'Rewound prompt'), { $rewindTo: 'u1' }, user('u2', 'Second')))?.title).toBe('Rewound prompt');
  });

  it('takes the session id a later line sets, and a tool-output-only first user message is not the label', () => {
    const functionResponse = [{ functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: 'x' } } }];
    const text = fileOf(header(), user('t1', functionResponse), { $set: { sessionId: 'another-id' } }, user('u1', [{ text: 'Part one, ' }, { inlineData: { mimeType: 'image/png', data: '' } }, { text: 'part two' }]));
    expect(facts(text)).toMatchObject({ id: 'another-id', title: 'Part one, part two' });
  });
});

describe('Gemini CLI surface and whole log', () => {
  const toolCall = { id: 'c1', name: 'run_shell_command', args: { command: 'echo x' }, result: [{ functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: 'x' } } }] };
  const log = fileOf(
    header(),
    { $set: { messages: [CONTEXT] } },
    user('u1', 'First prompt'),
    gemini('g1', ''),
    gemini('g1', '', { toolCalls: [toolCall] }),
    user('t1', toolCall.result),
    gemini('g2', [{ text: 'thinking', thought: true }, { text: 'The tool said x.' }]),
    user('u2', 'Second prompt'),
    gemini('g3', 'Second reply'),
    { $rewindTo: 'u2' },
    user('u3', 'Third prompt, 日本語'),
    { $set: { messages: [CONTEXT, user('s1', SNAPSHOT), gemini('a1', [{ text: ACK }]), user('k1', 'Third prompt, 日本語')] } },
    gemini('g4', 'After the compression'),
    '{"id":"torn", "type":"gemini", "content":"cut sh',
  );

  it('is the history the CLI resumes: the snapshot as a checkpoint, prompts and text, no tool output, thought or CLI context', () => {
    expect(texts(geminiFormat.surface(parseJsonl(log)))).toEqual([`checkpoint: ${SNAPSHOT}`, 'user: Third prompt, 日本語', 'assistant: After the compression']);
  });

  it('replays updates in place, rewinds and replacements', () => {
    const before = fileOf(header(), user('u1', 'First prompt'), gemini('g1', 'Draft'), user('u2', 'Second'), gemini('g1', 'Final'), { $rewindTo: 'u2' });
    expect(texts(geminiFormat.surface(parseJsonl(before)))).toEqual(['user: First prompt', 'assistant: Final']);
    // A user's own text that merely quotes a snapshot (no acknowledgement after it) stays a prompt.
    expect(texts(geminiFormat.surface(parseJsonl(fileOf(header(), user('u1', SNAPSHOT), gemini('g1', 'Sure')))))).toEqual([`user: ${SNAPSHOT}`, 'assistant: Sure']);
  });

  it('is, as the user saw it, every prompt and reply once, the compression where it happened, the kept history not repeated', () => {
    const events = geminiFormat.log(parseJsonl(log));
    expect(texts(events)).toEqual([
      'user: First prompt',
      'assistant: The tool said x.',
      'user: Second prompt',
      'assistant: Second reply',
      'user: Third prompt, 日本語',
      `checkpoint: ${SNAPSHOT}`,
      'assistant: After the compression',
    ]);
    expect(events[5]!.surfaceOp).toEqual({ op: 'replace', start: 0, end: 4 });
    expect(new Set(events.map((event) => event.seq)).size).toBe(events.length);
  });
});

describe('Gemini CLI project registry and markers', () => {
  it('maps each project folder to its cwd; damage gives none', () => {
    expect(geminiProjectCwds(JSON.stringify({ projects: { '/w/proj a': 'proj-a', '/w/proj 日本': 'proj', '/w/other': 7 } }))).toEqual(
      new Map([
        ['proj-a', '/w/proj a'],
        ['proj', '/w/proj 日本'],
      ]),
    );
    expect(geminiProjectCwds('{"projects": [')).toEqual(new Map());
    expect(geminiProjectCwds('[1]')).toEqual(new Map());
    expect(geminiMarkerCwd('/w/proj a\n')).toBe('/w/proj a');
    expect(geminiMarkerCwd('  ')).toBeUndefined();
  });

  it('reads session files only in chats folders, by the CLI’s names', () => {
    expect(geminiFormat.leafName).toBe('chats');
    expect(geminiFormat.isSessionFile('session-2026-12-06T10-35-c3000003.jsonl')).toBe(true);
    expect(geminiFormat.isSessionFile('c3000003-7a1e-4c5d-9b2a-3f4e5d6c7b03.jsonl')).toBe(false);
    expect(geminiFormat.isSessionFile('session-2026-12-06T10-35-c3000003.jsonl.tmp-12')).toBe(false);
  });
});
