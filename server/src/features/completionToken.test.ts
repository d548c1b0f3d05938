import { describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { findSessionCompletionToken } from './completionToken';

/** The token at the `|` marker of `marked`. */
function tokenAt(marked: string) {
  const offset = marked.indexOf('|');
  return findSessionCompletionToken(marked.slice(0, offset) + marked.slice(offset + 1), offset);
}

describe('findSessionCompletionToken (dsh token rule)', () => {
  it('finds an @ at the start of the text with an empty query', () => {
    expect(tokenAt('@|')).toEqual({ at: 0, end: 1, query: '' });
  });

  it('finds an @ after whitespace; the query is the text from after the @ to the cursor', () => {
    expect(tokenAt('see @Alp|')).toEqual({ at: 4, end: 8, query: 'Alp' });
    expect(tokenAt('see\t@x|')).toEqual({ at: 4, end: 6, query: 'x' });
  });

  it('runs the token to the end of the non-whitespace run when the cursor is in its middle', () => {
    expect(tokenAt('a @ab|cd rest')).toEqual({ at: 2, end: 7, query: 'ab' });
  });

  it('finds an @ at the start of a later line (LF and CRLF)', () => {
    expect(tokenAt('first line\n@q|')).toEqual({ at: 11, end: 13, query: 'q' });
    expect(tokenAt('first line\r\n@q|\r\nnext')).toEqual({ at: 12, end: 14, query: 'q' });
  });

  it('offers nothing for an @ glued to a word (an e-mail address)', () => {
    expect(tokenAt('me@example|')).toBeUndefined();
    expect(tokenAt('write to me@|')).toBeUndefined();
  });

  it('offers nothing right after whitespace or without an @', () => {
    expect(tokenAt('@abc |')).toBeUndefined();
    expect(tokenAt('plain|')).toBeUndefined();
    expect(tokenAt('|@abc')).toBeUndefined();
  });

  it('keeps the whole run after the @, other @ signs included', () => {
    expect(tokenAt('@a@b|')).toEqual({ at: 0, end: 4, query: 'a@b' });
  });

  it('gives an open quote (a file path) no session token', () => {
    expect(tokenAt('@"my fi|')).toBeUndefined();
    expect(tokenAt('@"|')).toBeUndefined();
  });

  it('offers nothing inside or glued to an existing mention', () => {
    const mention = formatSessionReferenceMention({ sessionId: 'demo-1', label: 'Say hi' });
    const text = `see ${mention} ok`;
    const insideLabel = text.indexOf('hi');
    expect(findSessionCompletionToken(text, insideLabel + 1)).toBeUndefined();
    expect(findSessionCompletionToken(text, 4 + mention.length)).toBeUndefined();
    expect(findSessionCompletionToken(`${mention}x`, mention.length + 1)).toBeUndefined();
    // A bare URI typed after an @ is a mention too.
    expect(tokenAt('@dsh-session:ImRlbW8tMSI|')).toBeUndefined();
    // A token after the mention is offered.
    expect(findSessionCompletionToken(`${text} @n`, text.length + 3)).toEqual({ at: text.length + 1, end: text.length + 3, query: 'n' });
  });

  it('counts positions in UTF-16 code units', () => {
    expect(tokenAt('😀 @日本|')).toEqual({ at: 3, end: 6, query: '日本' });
  });
});
