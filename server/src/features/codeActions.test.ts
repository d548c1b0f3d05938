import { describe, expect, it } from 'vitest';
import { SessionCommands, encodeSessionReferenceUri, formatSessionReferenceMention, parseSessionReferenceText } from '@dsh-session-ls/shared';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { CodeActionKind, type CodeAction, type TextEdit } from 'vscode-languageserver-types';
import { PREVIEW_ACTION_TITLE, provideCodeActions } from './codeActions';
import { computeDiagnostics } from './diagnostics';
import { conversationSession } from '../testing/mentionFixtures';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

const SESSIONS = [
  conversationSession('a', { cwd: '/w', title: 'Alpha work' }),
  conversationSession('b', { cwd: '/w' }),
  conversationSession('t', { cwd: '/w', title: 'Bidi \u202etitle] x' }),
  conversationSession('long', { cwd: '/w', title: 'Long\n\ntitle '.repeat(100_000) }),
];

/** Code actions for the `|` (or `[…]`-free) cursor of `marked`, with the diagnostics the server published for it. */
async function actionsAt(marked: string, options: { only?: string[]; section?: Record<string, unknown> } = {}) {
  const offset = marked.indexOf('|');
  const document = openDocument('file:///w/m.md', marked.slice(0, offset) + marked.slice(offset + 1));
  const { workspace } = testWorkspace(SESSIONS, { folders: ['/w'], documents: [document], ...(options.section === undefined ? {} : { section: options.section }) });
  const diagnostics = await computeDiagnostics(document, workspace);
  const position = document.positionAt(offset);
  const actions = await provideCodeActions(document, { start: position, end: position }, { diagnostics, ...(options.only === undefined ? {} : { only: options.only }) }, workspace);
  return { document, actions, diagnostics };
}

function applied(document: TextDocument, action: CodeAction): string {
  const edits = action.edit!.changes![document.uri] as TextEdit[];
  return TextDocument.applyEdits(document, edits);
}

const titled = (actions: CodeAction[], start: string) => actions.find((action) => action.title.startsWith(start));

describe('code actions on mentions', () => {
  it('updates a stale label to the current title, linked to the hint', async () => {
    const { document, actions, diagnostics } = await actionsAt(`see @[Old|](${encodeSessionReferenceUri('a')}) now`);
    const update = titled(actions, 'Update the label')!;
    expect(update).toMatchObject({ kind: CodeActionKind.QuickFix, isPreferred: true, title: 'Update the label to the session\'s title "Alpha work"' });
    expect(update.diagnostics).toEqual(diagnostics.filter((d) => (d.data as { kind: string }).kind === 'stale-label'));
    expect(update.diagnostics).toHaveLength(1);
    expect(applied(document, update)).toBe(`see ${formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha work' })} now`);
  });

  it('uses the display-safe title (escaped for the mention) as the new label', async () => {
    const { document, actions } = await actionsAt(`@[x|](${encodeSessionReferenceUri('t')})`);
    const text = applied(document, titled(actions, 'Update the label')!);
    expect(parseSessionReferenceText(text).references).toEqual([{ sessionId: 't', label: 'Bidi title] x' }]);
  });

  it('writes a long, multi-line title as one bounded line, and the updated mention is no longer stale', async () => {
    const { document, actions } = await actionsAt(`@[Old|](${encodeSessionReferenceUri('long')})`);
    const update = titled(actions, 'Update the label')!;
    const label = 'Long title '.repeat(18) + 'L…';
    expect(update.title).toBe(`Update the label to the session's title "${label}"`);
    const text = applied(document, update);
    expect(parseSessionReferenceText(text).references).toEqual([{ sessionId: 'long', label }]);
    const again = await actionsAt(text.slice(0, 2) + '|' + text.slice(2));
    expect(titled(again.actions, 'Update the label')).toBeUndefined();
  });

  it('turns a bare URI into a labelled mention, taking along an @ written before it', async () => {
    for (const before of ['see ', 'see @']) {
      const { document, actions } = await actionsAt(`${before}dsh-sess|ion:${encodeSessionReferenceUri('a').slice(12)} now`);
      const rewrite = titled(actions, 'Write as a labelled mention')!;
      expect(rewrite).toMatchObject({ kind: CodeActionKind.RefactorRewrite, title: 'Write as a labelled mention "@Alpha work"' });
      expect(applied(document, rewrite)).toBe(`see ${formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha work' })} now`);
    }
    const untitled = await actionsAt(`${encodeSessionReferenceUri('b')}|`);
    expect(applied(untitled.document, titled(untitled.actions, 'Write as a labelled mention')!)).toBe(formatSessionReferenceMention({ sessionId: 'b' }));
  });

  it('removes a mention dsh would refuse, with one neighbouring space, linked to its errors', async () => {
    const cases: Array<[string, string, Record<string, unknown>?]> = [
      ['see @[x](dsh-session:I|iJ) now', 'see now'],
      [`see ${encodeSessionReferenceUri('nope')}|`, 'see'],
      [`|${encodeSessionReferenceUri('a')} b`, 'b', { targetSessionId: 'a' }],
      [`${encodeSessionReferenceUri('a')} ${encodeSessionReferenceUri('b')}|`, encodeSessionReferenceUri('a'), { maxReferences: 1 }],
    ];
    for (const [marked, after, section] of cases) {
      const { document, actions } = await actionsAt(marked, { ...(section === undefined ? {} : { section }) });
      const remove = titled(actions, 'Remove this mention')!;
      expect(remove.kind).toBe(CodeActionKind.QuickFix);
      expect(remove.diagnostics!.length).toBeGreaterThan(0);
      expect(remove.diagnostics!.every((d) => d.code !== undefined)).toBe(true);
      expect(applied(document, remove)).toBe(after);
    }
  });

  it('offers no removal for a mention dsh accepts, and previews what the model will see', async () => {
    const { actions, document } = await actionsAt(`see @[Alpha work|](${encodeSessionReferenceUri('a')})`);
    expect(titled(actions, 'Remove')).toBeUndefined();
    expect(titled(actions, 'Update')).toBeUndefined();
    expect(actions).toEqual([
      {
        title: PREVIEW_ACTION_TITLE,
        command: { title: PREVIEW_ACTION_TITLE, command: SessionCommands.preview, arguments: [{ textDocument: { uri: document.uri } }] },
      },
    ]);
  });

  it('offers nothing away from mentions, and honours the only filter', async () => {
    expect((await actionsAt(`plain| text ${encodeSessionReferenceUri('a')}`)).actions).toEqual([]);
    const { actions } = await actionsAt(`@[Old|](${encodeSessionReferenceUri('nope')})`, { only: [CodeActionKind.QuickFix] });
    expect(actions.map((action) => action.title)).toEqual(['Remove this mention (dsh would refuse the message)']);
    const rewrites = await actionsAt(`${encodeSessionReferenceUri('a')}|`, { only: [CodeActionKind.Refactor] });
    expect(rewrites.actions.map((action) => action.kind)).toEqual([CodeActionKind.RefactorRewrite]);
  });
});
