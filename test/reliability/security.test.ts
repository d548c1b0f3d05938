/**
 * Security (issue 8, area 6): session text is untrusted. Whatever a session holds, a label shown in
 * the UI is visible and display-safe.
 */
import { describe, expect, it } from 'vitest';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { parseSessionReferenceText } from '@dsh-session-ls/shared';
import { provideSessionCompletion, type SessionCompletionData } from '../../server/src/features/completion';
import { testWorkspace } from '../../server/src/features/testWorkspace';
import type { TextEdit } from 'vscode-languageserver/node';
import { UNSAFE_DISPLAY_CHARACTERS } from './support/arbitraries';

describe('display safety of session text', () => {
  it('a session whose id and title are nothing but control and bidi characters still gets a visible, safe label', async () => {
    const ids = ['\u0000', '\u202e\u2066', '\u0007\u009b\u200f'];
    const sessions = ids.map((id, i) => ({ header: { id, createdAt: i }, events: [] }));
    const document = TextDocument.create('file:///w/PROMPT.md', 'markdown', 1, '@');
    const { workspace } = testWorkspace(sessions, { documents: [document] });
    const list = await provideSessionCompletion(document, { line: 0, character: 1 }, workspace);
    expect(list.items.map((item) => item.label)).toEqual(['\\u0007\\u009b\\u200f', '\\u202e\\u2066', '\\u0000']);
    for (const item of list.items) {
      expect(item.label).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
      // The inserted mention still names the right session.
      const inserted = '@' + (item.textEdit as TextEdit).newText;
      expect(parseSessionReferenceText(inserted).references).toEqual([{ sessionId: (item.data as SessionCompletionData).sessionId, label: item.label }]);
    }
  });
});
