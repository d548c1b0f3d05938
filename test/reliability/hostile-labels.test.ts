/**
 * Labels from hostile titles : a 1 MB title, 10,000 newlines, nothing but combining
 * marks or zero-width characters, U+2028/U+2029. Through the built server, whatever the editor shows or
 * inserts of them (completion items, the accepted mention, hovers, code actions) is one line of at most
 * DISPLAY_LABEL_MAX_LENGTH code units holding a visible character (else the id), and `prepare` of the
 * accepted item succeeds; `dshSession.candidates` still returns dsh's labels unchanged.
 */
import { describe, expect, it } from 'vitest';
import type { CodeAction, CompletionItem, CompletionList, Hover, MarkupContent, TextEdit } from 'vscode-languageserver-protocol';
import {
  DISPLAY_LABEL_MAX_LENGTH,
  SessionCommands,
  encodeSessionReferenceUri,
  formatSessionReferenceMention,
  hasVisibleCharacter,
  parseSessionReferenceText,
  stringifyTagSafeJson,
  type PreparedReferencedMessage,
  type SessionReferenceMentionCandidate,
} from '@dsh-session-ls/shared';
import type { SessionCompletionData } from '../../server/src/features/completion';
import { fileUri, responseErrorOf } from '../support/lspClient';
import { UNSAFE_DISPLAY_CHARACTERS } from './support/arbitraries';
import { recordFigure } from './support/scale';
import { startMeasuredServer, waitForListing, type MeasuredServer } from './support/serverProcess';
import { useReadOnlyStore } from './support/readOnlyStore';
import type { SessionSpec } from './support/stores';

const MB_TITLE = 'Refactor the parser '.repeat(Math.ceil((1 << 20) / 20)).slice(0, 1 << 20);
const TITLES: Record<string, string> = {
  'huge-title': MB_TITLE,
  'newline-title': '\n'.repeat(10_000),
  'marks-title': '\u0301\u0308'.repeat(500),
  'zero-width-title': '\u200b\u200c\u200d\u2060\ufeff'.repeat(200),
  'separator-title': 'First line\u2028second line\u2029third\u0085fourth',
  'plain-title': 'Plain title',
};
const EXPECTED_LABEL: Record<string, (label: string) => boolean> = {
  'huge-title': (label) => label.length === DISPLAY_LABEL_MAX_LENGTH && label.endsWith('…') && MB_TITLE.startsWith(label.slice(0, -1)),
  'newline-title': (label) => label === 'newline-title',
  'marks-title': (label) => label === 'marks-title',
  'zero-width-title': (label) => label === 'zero-width-title',
  'separator-title': (label) => label === 'First line second line third fourth',
  'plain-title': (label) => label === 'Plain title',
};
const SESSIONS: SessionSpec[] = Object.entries(TITLES).map(([id, title], index) => ({
  id,
  cwd: '/home/alice/proj',
  createdAt: 1_000 + index,
  turns: [{ prompt: `What about ${id}?`, answer: 'Done.', title }],
}));

const LINE_TERMINATORS = /[\n\r\u0085\u2028\u2029]/;

const { temporary, servers, root } = useReadOnlyStore('hostile-labels', SESSIONS);

async function server(): Promise<MeasuredServer> {
  const started = await startMeasuredServer(temporary, root());
  servers.push(started);
  await waitForListing(started.client, SESSIONS.length);
  return started;
}

/** A label as the editor may show it: bounded, one line, safe, and visible or the id. */
function expectShownLabel(label: string, sessionId: string): void {
  expect(label.length).toBeLessThanOrEqual(DISPLAY_LABEL_MAX_LENGTH);
  expect(label).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
  expect(label).not.toMatch(LINE_TERMINATORS);
  expect(label).not.toMatch(/\s\s|^\s|\s$/);
  expect(hasVisibleCharacter(label) || label === sessionId).toBe(true);
  expect(EXPECTED_LABEL[sessionId]!(label)).toBe(true);
}

function hoverText(hover: Hover | null): string {
  expect(hover).not.toBeNull();
  return (hover!.contents as MarkupContent).value;
}

/** The hover's first line is the session's name in bold: at most the label limit plus Markdown escapes. */
function expectBoundedHover(markdown: string): void {
  const heading = markdown.split('\n')[0]!;
  expect(heading).toMatch(/^\*\*.+\*\*$/);
  // Every character may be backslash-escaped, and `**` surrounds it.
  expect(heading.length).toBeLessThanOrEqual(2 * DISPLAY_LABEL_MAX_LENGTH + 4);
  expect(markdown).not.toMatch(/[\u2028\u2029\u0085]/);
  expect(markdown.length).toBeLessThan(10_000);
}

describe('hostile titles give bounded, visible labels in the editor', () => {
  it('completion items, the mention each inserts, its hover and its prepare', async () => {
    const s = await server();
    const doc = fileUri('/home/alice/proj/PROMPT.md');
    await s.client.openDocument(doc, '@');
    const list: CompletionList = await s.client.completion(doc, { line: 0, character: 1 });
    const responseBytes = Buffer.byteLength(JSON.stringify(list));
    recordFigure('hostile-labels', 'completion response bytes (6 sessions, one 1 MB title)', responseBytes);
    // 4.38 MB when the whole title was the label: now a few KB.
    expect(responseBytes).toBeLessThan(20_000);
    const items = list.items.filter((item: CompletionItem) => (item.data as SessionCompletionData | undefined)?.kind === 'dsh-session');
    expect(items.map((item) => (item.data as SessionCompletionData).sessionId).sort()).toEqual(Object.keys(TITLES).sort());

    for (const item of items) {
      const { sessionId } = item.data as SessionCompletionData;
      expectShownLabel(item.label, sessionId);
      const edit = item.textEdit as TextEdit;
      // Accept the item: the `@` stays, the edit writes the rest of the mention.
      const accepted = '@' + edit.newText;
      expect(parseSessionReferenceText(accepted).references).toEqual([{ sessionId, label: item.label }]);
      await s.client.changeDocument(doc, accepted);

      const hover = await s.client.request<Hover | null>('textDocument/hover', { textDocument: { uri: doc }, position: { line: 0, character: 2 } });
      const markdown = hoverText(hover);
      expectBoundedHover(markdown);
      // The mention carries the label completion gave it: the hover does not call it a different name.
      expect(markdown).not.toContain('mentioned as');

      const prepared = await s.client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { textDocument: { uri: doc } });
      const [reference] = prepared.additionalContext!.source.references;
      expect(reference).toMatchObject({ sessionId, label: item.label, truncated: false });
      // What the label costs in the snapshot's budget (tag-safe JSON): at most 6 bytes per code unit.
      expect(Buffer.byteLength(stringifyTagSafeJson(item.label))).toBeLessThanOrEqual(6 * DISPLAY_LABEL_MAX_LENGTH + 2);

      await s.client.changeDocument(doc, '@');
    }
  }, 120_000);

  it('a mention with the 1 MB title as its label is what fails: dsh counts the label in the budget', async () => {
    const s = await server();
    const error = await responseErrorOf(
      s.client.executeCommand(SessionCommands.prepare, { text: formatSessionReferenceMention({ sessionId: 'huge-title', label: MB_TITLE }) }),
    );
    expect(error.data).toEqual({ code: 'SESSION_REFERENCE_BUDGET_EXCEEDED' });
  }, 120_000);

  it('“update a stale label” writes the bounded label, and the result prepares', async () => {
    const s = await server();
    const doc = fileUri('/home/alice/proj/STALE.md');
    const ids = Object.keys(TITLES);
    const text = ids.map((id) => `@[old name](${encodeSessionReferenceUri(id)})`).join('\n');
    await s.client.openDocument(doc, text);
    const actions = await s.client.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri: doc },
      range: { start: { line: 0, character: 0 }, end: { line: ids.length, character: 0 } },
      context: { diagnostics: [] },
    });
    const updates = actions.filter((action) => action.title.startsWith('Update the label'));
    expect(updates).toHaveLength(ids.length);
    const lines = text.split('\n');
    for (const action of updates) {
      expect(action.title.length).toBeLessThan(DISPLAY_LABEL_MAX_LENGTH + 60);
      expect(action.title).not.toMatch(LINE_TERMINATORS);
      const [edit] = action.edit!.changes![doc]!;
      const [reference] = parseSessionReferenceText(edit!.newText).references;
      expectShownLabel(reference!.label, reference!.sessionId);
      lines[edit!.range.start.line] = edit!.newText;
    }
    // dsh takes at most 3 sessions per message: prepare each updated mention on its own.
    for (const [index, line] of lines.entries()) {
      const prepared = await s.client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { text: line });
      expect(prepared.additionalContext!.source.references.map((r) => r.sessionId)).toEqual([ids[index]]);
    }
    await s.client.changeDocument(doc, lines.join('\n'));
    // Once updated, no label is stale any more.
    const after = await s.client.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri: doc },
      range: { start: { line: 0, character: 0 }, end: { line: ids.length, character: 0 } },
      context: { diagnostics: [] },
    });
    expect(after.filter((action) => action.title.startsWith('Update the label'))).toEqual([]);
  }, 120_000);

  it('dshSession.candidates still returns dsh’s labels and mentions unchanged (the contract)', async () => {
    const s = await server();
    const rows = await s.client.executeCommand<SessionReferenceMentionCandidate[]>(SessionCommands.candidates, { limit: 100 });
    for (const row of rows) {
      expect(row.label).toBe(TITLES[row.sessionId]);
      expect(row.mention).toBe(formatSessionReferenceMention({ sessionId: row.sessionId, label: TITLES[row.sessionId] }));
    }
  }, 120_000);
});
