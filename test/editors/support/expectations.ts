import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { expect } from 'vitest';
import { type EditorRun, PROMPT_LINE, describeRun } from './editorRun';

const PROMPT_OPEN = '<referenced-sessions>\n';
const PROMPT_CLOSE = '\n</referenced-sessions>';

/**
 * The end-to-end claim every editor must meet: `dshSession.candidates` listed the store's sessions
 * with their mentions; the completion offered them in the server's order; accepting the first left exactly `@` + its canonical mention (no doubled `@`);
 * and `dshSession.prepare` through the editor's client referenced that session with its
 * conversation in the model-facing prompt.
 */
export function expectMentionAcceptedAndPrepared(run: EditorRun): void {
  expect(run.result, `the driver wrote no result: ${describeRun(run)}`).toBeDefined();
  const result = run.result!;
  expect(result.error, describeRun(run)).toBeUndefined();
  expect(run.timedOut, describeRun(run)).toBe(false);
  expect(result.ok, describeRun(run)).toBe(true);

  // dshSession.candidates through the same client: every session, with its canonical mention.
  expect(result.candidates).toEqual(run.sessions.map((s) => expect.objectContaining({
    sessionId: s.sessionId, label: s.label, cwd: s.cwd, createdAt: s.createdAt,
    mention: formatSessionReferenceMention({ sessionId: s.sessionId, label: s.label }) })));

  const [first] = run.sessions;
  expect(result.menu?.map((item) => item.label)).toEqual(run.sessions.map((s) => s.label));

  const mention = formatSessionReferenceMention({ sessionId: first.sessionId, label: first.label });
  expect(result.lineAfterAccept).toBe(PROMPT_LINE + mention);

  const prepared = result.prepare;
  expect(prepared?.content?.[0]?.text?.startsWith(`${PROMPT_LINE}@${first.label}`), JSON.stringify(prepared?.content)).toBe(true);
  const context = prepared?.additionalContext;
  expect(context?.role).toBe('user');
  expect(context?.source?.kind).toBe('session-reference');
  expect(context?.source?.references?.map((r) => r.sessionId)).toEqual([first.sessionId]);
  expect(context?.source?.references?.[0].label).toBe(first.label);

  const prompt = context?.content?.[0]?.text ?? '';
  const open = prompt.indexOf(PROMPT_OPEN);
  expect(open, prompt).toBeGreaterThanOrEqual(0);
  expect(prompt.endsWith(PROMPT_CLOSE), prompt).toBe(true);
  const data = JSON.parse(prompt.slice(open + PROMPT_OPEN.length, prompt.length - PROMPT_CLOSE.length)) as Array<Record<string, unknown>>;
  expect(data.map((source) => source.sessionId)).toEqual([first.sessionId]);
  expect(data[0].conversation).toEqual(first.conversation);
}
