import { describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { provideDocumentLinks } from './documentLinks';
import { openDocument } from '../testing/testWorkspace';

describe('document links', () => {
  it('links each mention dsh accepts to its canonical session URI, over the whole mention', () => {
    const explicit = formatSessionReferenceMention({ sessionId: 'a]b', label: 'Label \u202e[x]' });
    const bare = encodeSessionReferenceUri('会话');
    const text = `one ${explicit}\r\ntwo ${bare} three @[x](dsh-session:IiJ) ${bare}x`;
    const links = provideDocumentLinks(openDocument('file:///m.md', text));
    expect(links).toEqual([
      {
        range: { start: { line: 0, character: 4 }, end: { line: 0, character: 4 + explicit.length } },
        target: encodeSessionReferenceUri('a]b'),
        tooltip: 'Open the session Label [x]',
      },
      {
        range: { start: { line: 1, character: 4 }, end: { line: 1, character: 4 + bare.length } },
        target: bare,
        tooltip: 'Open the session 会话',
      },
    ]);
  });

  it('links the bare URI inside a label that a backslash before a line break stops, and nothing for an empty URI', () => {
    const uri = encodeSessionReferenceUri('a');
    const text = `@[x\\\ny](${uri}) @[z](dsh-session:)`;
    expect(provideDocumentLinks(openDocument('file:///m.md', text))).toEqual([
      { range: { start: { line: 1, character: 3 }, end: { line: 1, character: 3 + uri.length } }, target: uri, tooltip: 'Open the session a' },
    ]);
  });

  it('links nothing in plain text', () => {
    expect(provideDocumentLinks(openDocument('file:///m.md', 'me@example.com dsh-session: [a](b)'))).toEqual([]);
  });
});
