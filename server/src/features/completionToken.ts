import { scanSessionMentions } from '@dsh-session-ls/shared';

/** The `@` token around the cursor, as dsh's composer finds it (UTF-16 offsets into the document text). */
export interface SessionCompletionToken {
  /** Offset of the `@`. */
  at: number;
  /** Offset just past the end of the token's non-whitespace run (the cursor may be before it). */
  end: number;
  /** The text from after the `@` to the cursor, exactly as typed. */
  query: string;
}

// dsh's token rule uses JavaScript `\s`; every character it matches is a single UTF-16 code unit.
const WHITESPACE = /\s/;

function isWhitespace(text: string, offset: number): boolean {
  return WHITESPACE.test(text[offset]!);
}

/**
 * The session-completion token at `offset`: an `@` at the start of a line or right after whitespace,
 * then a run of non-whitespace reaching the cursor. Undefined when there is none, when it opens a quoted
 * file path (`@"…`), or when it overlaps a mention the shared grammar already finds there.
 */
export function findSessionCompletionToken(text: string, offset: number): SessionCompletionToken | undefined {
  if (offset < 1 || offset > text.length) return undefined;
  let start = offset;
  while (start > 0 && !isWhitespace(text, start - 1)) start--;
  // The run to the left of the cursor must be non-empty and begin with the `@`.
  if (start === offset || text.charCodeAt(start) !== 0x40 /* @ */) return undefined;
  let end = offset;
  while (end < text.length && !isWhitespace(text, end)) end++;
  const query = text.slice(start + 1, offset);
  if (query.startsWith('"')) return undefined;
  for (const mention of scanSessionMentions(text)) {
    if (mention.start >= end) break;
    if (mention.end > start) return undefined;
  }
  return { at: start, end, query };
}
