import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSessionReferenceMention, scanSessionMentions } from '@dsh-session-ls/shared';
import { WHITESPACE_CHARS, denseMentionText, dshScan } from '../../../test/support/dshMentionGrammar';
import { findSessionCompletionToken, mentionScanStart } from './completionToken';

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

  it('follows dsh’s mention grammar: @[x](dsh-session:) is a mention, a label stopped by \\ + line break is not', () => {
    // The token `@[x](dsh-session:)` lies inside the mention dsh finds there.
    expect(tokenAt('@[x|](dsh-session:)')).toBeUndefined();
    // The label stops at the backslash before the line break, so no mention spans the `@q` token.
    for (const lineBreak of ['\n', '\r', '\u2028', '\u2029']) {
      const text = `@[a\\${lineBreak}@q ](dsh-session:IiI)`;
      expect(findSessionCompletionToken(text, 7)).toEqual({ at: 5, end: 7, query: 'q' });
    }
  });

  it('splits tokens at every JavaScript \\s character and nowhere else', () => {
    for (const ws of WHITESPACE_CHARS) {
      expect(tokenAt(`see${ws}@q|`)).toEqual({ at: 4, end: 6, query: 'q' });
      expect(tokenAt(`@q|${ws}next`)).toEqual({ at: 0, end: 2, query: 'q' });
    }
    for (const other of ['\u200b', '\u180e', '\u0085']) expect(tokenAt(`see${other}@q|`)).toBeUndefined();
  });

  it('counts positions in UTF-16 code units', () => {
    expect(tokenAt('😀 @日本|')).toEqual({ at: 3, end: 6, query: '日本' });
  });
});

describe('mentionScanStart (the token rule scans for mentions only near the cursor)', () => {
  /** The matches of dsh's expression over the whole text that start at or after `from`, and whether one spans `from`. */
  const wholeScan = (text: string, from: number) => {
    const all = dshScan(text);
    return { spanned: all.some((m) => m.start < from && m.end > from), after: all.filter((m) => m.start >= from) };
  };

  it('restarts after the run of the last unescaped `]` with no `@[` after it', () => {
    const text = 'see @[a b](dsh-session:x) and @q';
    expect(mentionScanStart(text, text.length - 2)).toBe(text.indexOf(' and') + 1);
    expect(mentionScanStart('x] @q', 3)).toBe(3);
    // A `]` after a backslash, or one with an `@[` after it, may sit inside a label: look further back.
    expect(mentionScanStart('a] b\\] @q', 7)).toBe(3);
    expect(mentionScanStart('a] b]@[c @q', 9)).toBe(3);
    // (A `]` after an escaped backslash would do, but telling it apart needs the label's start: not worth it.)
    expect(mentionScanStart('x\\\\] @q', 5)).toBe(0);
    expect(mentionScanStart('@[a b\\] c @q', 10)).toBe(0);
  });

  it('gives a point no mention spans, from which the scan finds what the whole-text scan finds', () => {
    // Single characters of the grammar, and whole or broken mentions whose labels hold whitespace and escapes.
    const piece = fc.constantFrom(
      '@', '[', ']', '(', ')', '\\', ' ', '\n', 'd', 'x', 'é', 'dsh-session:', 'dsh-session:ab', '@[', '](', '](dsh-session:z)',
      '@[a b](dsh-session:x)', '@[a\\] b](dsh-session:y)', '@[\\\\](dsh-session:w)', 'a] b', '@[a ',
    );
    const text = fc.oneof(fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join('')), denseMentionText());
    fc.assert(
      fc.property(text, fc.nat(), (text, pick) => {
        // Offsets right after whitespace (or 0), as findSessionCompletionToken gives it.
        const starts = [0, ...Array.from({ length: text.length }, (_, i) => i).flatMap((i) => (/\s/.test(text[i]!) ? [i + 1] : []))];
        const start = starts[pick % starts.length]!;
        const from = mentionScanStart(text, start);
        expect(from).toBeLessThanOrEqual(start);
        const whole = wholeScan(text, from);
        expect(whole.spanned).toBe(false);
        const local = [...scanSessionMentions(text.slice(from))].map((m) => ({ ...m, start: m.start + from, end: m.end + from, uriStart: m.uriStart + from }));
        expect(local).toEqual(whole.after);
      }),
      { numRuns: 10000 },
    );
  });

  it('finds the same token as the rule with a scan of the whole text, anywhere in random text', () => {
    // The token rule as first written: every match of dsh's expression in the whole text is looked at.
    const reference = (text: string, offset: number) => {
      if (offset < 1 || offset > text.length) return undefined;
      let start = offset;
      while (start > 0 && !/\s/.test(text[start - 1]!)) start--;
      if (start === offset || text[start] !== '@') return undefined;
      let end = offset;
      while (end < text.length && !/\s/.test(text[end]!)) end++;
      const query = text.slice(start + 1, offset);
      if (query.startsWith('"')) return undefined;
      if (dshScan(text).some((m) => m.start < end && m.end > start)) return undefined;
      return { at: start, end, query };
    };
    const piece = fc.constantFrom('@', '[', ']', '(', ')', '\\', ' ', '\n', 'dsh-session:ab', 'x', '@[', '](', '@x', '](dsh-session:z)', '@[a b](dsh-session:x)', 'a] b');
    const text = fc.oneof(fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join('')), denseMentionText());
    fc.assert(
      fc.property(text, fc.nat(), (text, pick) => {
        const offset = pick % (text.length + 1);
        expect(findSessionCompletionToken(text, offset)).toEqual(reference(text, offset));
      }),
      { numRuns: 5000 },
    );
  });
});
