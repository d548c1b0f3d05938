import { describe, expect, it } from 'vitest';
import { SessionCommands, encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { REFERENCED_SESSIONS_PROMPT_PREFIX } from '../resolver';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { executeSessionCommand } from './commands';
import { conversationSession } from '../testing/mentionFixtures';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

function hostile(): InMemorySession {
  const log = new SessionLogBuilder();
  log.user('run ```\n[x](command:evil) <b>bold</b>');
  log.assistant('ok');
  return { header: { id: 'hostile', createdAt: 1 }, events: log.events() };
}

const SESSIONS = [
  conversationSession('a', { cwd: '/w', title: 'Alpha | pipe' }),
  conversationSession('huge', { cwd: '/w', exchanges: 40, size: 300 }),
  hostile(),
];
const DOCUMENT = openDocument('file:///w/m.md', `compare ${formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha | pipe' })} with ${encodeSessionReferenceUri('huge')}`);

function preview(argument: unknown, section?: Record<string, unknown>) {
  const { workspace } = testWorkspace(SESSIONS, { folders: ['/w'], documents: [DOCUMENT], ...(section === undefined ? {} : { section }) });
  return { result: executeSessionCommand(SessionCommands.preview, [argument], workspace), workspace };
}

describe('dshSession.preview', () => {
  it('shows the readable message, each source’s bytes against the budget, and the exact context text', async () => {
    const { result, workspace } = preview({ textDocument: { uri: DOCUMENT.uri } }, { maxReferenceBytes: 3000 });
    const markdown = await result;
    const prepared = (await executeSessionCommand(SessionCommands.prepare, [{ textDocument: { uri: DOCUMENT.uri } }], workspace)) as {
      additionalContext: { content: Array<{ text: string }> };
    };
    expect(markdown).toContain('## The message\n\n```text\ncompare @Alpha | pipe with @huge\n```');
    expect(markdown).toMatch(/\| 1 \| Alpha \\\| pipe \| \d+ of 3000 \| no \|/);
    expect(markdown).toMatch(/\| 2 \| huge \| 2\d{3} of 3000 \| \d+ of 80 messages dropped, \d+ bytes omitted \|/);
    // The context text is shown whole (the fence is longer than any backtick run in it).
    const context = prepared.additionalContext.content[0]!.text;
    expect(context.startsWith(REFERENCED_SESSIONS_PROMPT_PREFIX)).toBe(true);
    expect(markdown).toContain('## The context message\n\n```text\n' + context + '\n```');
  });

  it('says nothing else is sent without references, and shows a refusal with its code', async () => {
    expect(await preview({ text: 'just text' }).result).toContain('No sessions are referenced: nothing else is sent.');
    expect(await preview({ text: `${encodeSessionReferenceUri('nope')}` }).result).toBe(
      '# What the model will see\n\nNothing: dsh refuses this message with SESSION_REFERENCE_READ_FAILED: failed to read referenced session: session "nope" not found\n',
    );
    expect(await preview({ text: 'x', config: { maxReferences: 1 } }).result).toContain('No sessions are referenced');
  });

  it('fences session text in the context so it cannot break out', async () => {
    const markdown = await preview({ text: encodeSessionReferenceUri('hostile') }).result;
    const fence = markdown.slice(markdown.indexOf('## The context message') + '## The context message\n\n'.length).split('text\n')[0]!;
    expect(fence.length).toBeGreaterThan(3);
    expect(markdown.trimEnd().endsWith(fence)).toBe(true);
  });

  it('rejects a malformed argument, an unopened document, content forms and a bad config', async () => {
    const failures = [
      { text: 'a', textDocument: { uri: DOCUMENT.uri } },
      {},
      { textDocument: { uri: 'file:///not-open.md' } },
      { content: [], references: [] },
      { text: 3 },
    ];
    for (const argument of failures) {
      await expect(preview(argument).result).rejects.toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
    }
    await expect(preview({ text: 'a', config: { maxReferences: 9 } }).result).rejects.toMatchObject({ code: 'SESSION_REFERENCE_INVALID_CONFIG' });
  });

  it('answers CANCELLED when cancelled, never a refusal preview', async () => {
    const { workspace } = testWorkspace(SESSIONS, { documents: [DOCUMENT] });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(executeSessionCommand(SessionCommands.preview, [{ text: encodeSessionReferenceUri('a') }], workspace, controller.signal)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_CANCELLED',
    });
  });
});
