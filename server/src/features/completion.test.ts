import { describe, expect, it } from 'vitest';
import { describeSessionsRootProblem, formatSessionReferenceMention, type SessionReferenceCandidate, type SessionsRootProblem } from '@dsh-session-ls/shared';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { CompletionItemKind, type CompletionItem, type TextEdit } from 'vscode-languageserver-types';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { provideSessionCompletion } from './completion';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 10);

function session(id: string, cwd: string | undefined, createdAt: number, title?: string): InMemorySession {
  const log = new SessionLogBuilder();
  log.user(`hello from ${id}`);
  if (title !== undefined) log.title(title);
  return { header: { id, createdAt, ...(cwd === undefined ? {} : { cwd }) }, events: log.events() };
}

const SESSIONS = [
  session('other', '/else', NOW - 1 * DAY, 'Other work'),
  session('none', undefined, NOW - 2 * DAY),
  session('same-later', '/same', NOW - 3 * DAY, 'Latest title'),
  session('same', '/same', NOW - 4 * DAY),
];

/** Complete at the `|` of `marked` in a document inside the `/same` workspace folder. */
async function complete(marked: string, options: Parameters<typeof testWorkspace>[1] = {}, sessions = SESSIONS) {
  const offset = marked.indexOf('|');
  const document = openDocument('file:///same/prompt.md', marked.slice(0, offset) + marked.slice(offset + 1));
  const { workspace, store } = testWorkspace(sessions, { folders: ['/same'], documents: [document], now: NOW, ...options });
  // Over what is indexed so far, as the server completes once its wait for the first index is over.
  const list = await provideSessionCompletion(document, document.positionAt(offset), workspace.view({ partial: true }));
  return { list, document, store };
}

function applyEdit(document: TextDocument, item: CompletionItem): string {
  const edit = item.textEdit as TextEdit;
  return TextDocument.applyEdits(document, [edit]);
}

describe('session completion', () => {
  it('lists the candidates in the resolver order, with the contract fields', async () => {
    const { list } = await complete('ask @|');
    expect(list.isIncomplete).toBe(false);
    expect(list.items.map((item) => item.label)).toEqual(['Latest title', 'same', 'none', 'Other work']);
    const [first] = list.items;
    expect(first).toMatchObject({
      kind: CompletionItemKind.Reference,
      detail: '/same',
      labelDetails: { description: '3 days ago' },
      sortText: 'b000000',
      filterText: ' Latest title same-later /same',
    });
    expect(list.items.map((item) => item.sortText)).toEqual(['b000000', 'b000001', 'b000002', 'b000003']);
    expect(list.items[2]!.detail).toBe('(no cwd)');
    expect(list.items[2]!.filterText).toBe(' none none');
  });

  it('edits from after the @ to the end of the token, inserting the mention without its @', async () => {
    const { list, document } = await complete('ask @Lat|est more');
    const item = list.items[0]!;
    const edit = item.textEdit as TextEdit;
    expect(edit.range).toEqual({ start: { line: 0, character: 5 }, end: { line: 0, character: 11 } });
    const mention = formatSessionReferenceMention({ sessionId: 'same-later', label: 'Latest title' });
    expect(edit.newText).toBe(mention.slice(1));
    expect(applyEdit(document, item)).toBe(`ask ${mention} more`);
    expect(item.filterText!.startsWith('Lat ')).toBe(true);
  });

  it('filters by the query as dsh does (id, cwd or label)', async () => {
    expect((await complete('@LATEST|')).list.items.map((item) => item.label)).toEqual(['Latest title']);
    expect((await complete('@els|')).list.items.map((item) => item.label)).toEqual(['Other work']);
    // Message bodies are never searched.
    expect((await complete('@hello|')).list.items).toEqual([]);
  });

  it('offers nothing outside an @ token, in an e-mail address or after @"', async () => {
    for (const marked of ['plain|', 'me@exa|', '@"fi|', '@abc |']) {
      expect((await complete(marked)).list).toEqual({ isIncomplete: false, items: [] });
    }
  });

  it('is incomplete exactly when cut at candidateLimit', async () => {
    const cut = await complete('@|', { section: { candidateLimit: 3 } });
    expect(cut.list.items).toHaveLength(3);
    expect(cut.list.isIncomplete).toBe(true);
    const whole = await complete('@|', { section: { candidateLimit: 4 } });
    expect(whole.list.items).toHaveLength(4);
    expect(whole.list.isIncomplete).toBe(false);
  });

  it('is incomplete while the store is still indexing', async () => {
    const { list } = await complete('@|', { indexing: true });
    expect(list.items).toHaveLength(4);
    expect(list.isIncomplete).toBe(true);
  });

  it('shows and inserts a display-safe label; the session id still identifies the session', async () => {
    const sneaky = session('sneaky', '/same', NOW, 'Compare\u0007 with \u202eSay hi\u202c\ttab');
    const { list, document } = await complete('@|', {}, [sneaky]);
    const item = list.items[0]!;
    expect(item.label).toBe('Compare with Say hi tab');
    const mention = formatSessionReferenceMention({ sessionId: 'sneaky', label: 'Compare with Say hi tab' });
    expect(applyEdit(document, item)).toBe(mention);
    expect(item.data).toMatchObject({ sessionId: 'sneaky' });
  });

  it('builds each item from the candidate as it is now, after a retitle, a move or a recreation with the same id', async () => {
    const versions = [
      session('kept', '/same', NOW - DAY, 'First title'),
      session('kept', '/same', NOW - DAY, 'Second title'),
      session('kept', '/moved', NOW - DAY, 'Second title'),
      session('kept', undefined, NOW - DAY, 'Second title'),
      session('kept', undefined, NOW - 2 * DAY, 'Second title'),
    ];
    const seen: unknown[][] = [];
    for (const version of versions) {
      const { list } = await complete('@ke|', {}, [version]);
      const item = list.items[0]!;
      seen.push([item.label, item.detail, item.filterText, (item.data as { cwd?: string }).cwd, (item.data as { createdAt: number }).createdAt]);
    }
    expect(seen).toEqual([
      ['First title', '/same', 'ke First title kept /same', '/same', NOW - DAY],
      ['Second title', '/same', 'ke Second title kept /same', '/same', NOW - DAY],
      ['Second title', '/moved', 'ke Second title kept /moved', '/moved', NOW - DAY],
      ['Second title', '(no cwd)', 'ke Second title kept', undefined, NOW - DAY],
      ['Second title', '(no cwd)', 'ke Second title kept', undefined, NOW - 2 * DAY],
    ]);
  });

  it('falls back to the session id when nothing of the label is displayable', async () => {
    const blank = session('blank-title', undefined, NOW, '\u202e\u0001');
    const { list } = await complete('@|', {}, [blank]);
    expect(list.items[0]!.label).toBe('blank-title');
  });

  it('counts positions in UTF-16 code units and works on CRLF lines', async () => {
    const { list, document } = await complete('line one\r\n😀 @sa|me\r\nnext');
    const item = list.items.find((candidate) => (candidate.data as SessionReferenceCandidate).sessionId === 'same')!;
    expect((item.textEdit as TextEdit).range).toEqual({ start: { line: 1, character: 4 }, end: { line: 1, character: 8 } });
    expect(applyEdit(document, item).split('\r\n')[1]).toBe(`😀 ${formatSessionReferenceMention({ sessionId: 'same', label: 'same' })}`);
  });

  it('never offers the target session (the targetSessionId setting)', async () => {
    const { list } = await complete('@|', { section: { targetSessionId: 'same-later' } });
    expect(list.items.map((item) => item.label)).toEqual(['same', 'none', 'Other work']);
  });

  it('answers CANCELLED for an aborted signal', async () => {
    const document = openDocument('file:///same/p.md', '@');
    const { workspace } = testWorkspace(SESSIONS, { documents: [document] });
    const controller = new AbortController();
    controller.abort();
    await expect(provideSessionCompletion(document, { line: 0, character: 1 }, workspace, controller.signal)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_CANCELLED',
    });
  });
});

describe('session completion when the sessions root is not read', () => {
  /** Complete at `|` over an empty store whose root has `problem`. */
  async function completeWithRootProblem(marked: string, problem: SessionsRootProblem, root = '/home/u/.dsh/sessions') {
    const offset = marked.indexOf('|');
    const document = openDocument('file:///same/prompt.md', marked.slice(0, offset) + marked.slice(offset + 1));
    const { workspace, store } = testWorkspace([], { folders: ['/same'], documents: [document], section: { sessionsRoot: root } });
    store.setStatus({ rootExists: false, rootProblem: problem });
    const list = await provideSessionCompletion(document, document.positionAt(offset), workspace.view({ partial: true }));
    return { list, document };
  }

  it.each([
    ['missing', 'does not exist', 'does not exist yet; sessions appear once it does.'],
    ['not-a-directory', 'is not a directory', 'is not a directory, so no sessions can be listed'],
    ['inaccessible', 'cannot be read', 'cannot be read, so no sessions can be listed'],
  ] as const)('answers one item saying the root %s, incomplete so it is asked again', async (problem, said, reason) => {
    const { list } = await completeWithRootProblem('see @|', problem);
    expect(list.isIncomplete).toBe(true);
    expect(list.items).toHaveLength(1);
    const item = list.items[0]!;
    expect(item).toMatchObject({
      label: `No dsh sessions: /home/u/.dsh/sessions ${said}`,
      kind: CompletionItemKind.Text,
      sortText: 'b000000',
      filterText: ` No dsh sessions: /home/u/.dsh/sessions ${said}`,
      data: { kind: 'dsh-root-problem', problem },
    });
    expect(item.detail).toBe(describeSessionsRootProblem('/home/u/.dsh/sessions', problem));
    expect(item.detail).toContain(`The dsh sessions root /home/u/.dsh/sessions ${reason}`);
    expect(item.documentation).toEqual(expect.stringContaining('dshSessions.sessionsRoot'));
  });

  it.each(['see @|', 'see @we|', 'see @we|ather next', '@|', 'a\r\n@x|y\r\nb', '😀 @q|'])(
    'leaves the text exactly as it was when accepted: %j',
    async (marked) => {
      const { list, document } = await completeWithRootProblem(marked, 'missing');
      const item = list.items[0]!;
      expect(applyEdit(document, item)).toBe(document.getText());
      const edit = item.textEdit as TextEdit;
      // The edit replaces what was typed after the `@` up to the cursor with itself.
      const offset = marked.indexOf('|');
      expect(document.offsetAt(edit.range.end)).toBe(offset);
      expect(document.getText(edit.range)).toBe(edit.newText);
      expect(item.filterText!.startsWith(`${edit.newText} `)).toBe(true);
    },
  );

  it('shows the root display-safe', async () => {
    const { list } = await completeWithRootProblem('@|', 'missing', '/tmp/evil\u202e/sessions');
    expect(list.items[0]!.label).toBe('No dsh sessions: /tmp/evil/sessions does not exist');
  });

  it('offers nothing outside an @ token, as always', async () => {
    for (const marked of ['plain|', 'me@exa|', '@"fi|']) {
      expect((await completeWithRootProblem(marked, 'missing')).list).toEqual({ isIncomplete: false, items: [] });
    }
  });

  it('lists the sessions, and no notice, once the root is read', async () => {
    const document = openDocument('file:///same/prompt.md', '@');
    const { workspace, store } = testWorkspace(SESSIONS, { folders: ['/same'], documents: [document], now: NOW });
    store.setStatus({ rootExists: false, rootProblem: 'missing' });
    // A store that reports a problem yet lists sessions (the root appeared between two sweeps) shows the sessions.
    const list = await provideSessionCompletion(document, { line: 0, character: 1 }, workspace.view({ partial: true }));
    expect(list.items.map((item) => item.kind)).toEqual(SESSIONS.map(() => CompletionItemKind.Reference));
    store.setStatus({ rootExists: true, rootProblem: undefined });
    const fixed = await provideSessionCompletion(document, { line: 0, character: 1 }, workspace.view({ partial: true }));
    expect(fixed.items).toHaveLength(SESSIONS.length);
    expect(fixed.isIncomplete).toBe(false);
  });
});
