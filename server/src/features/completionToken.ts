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
  // Completion runs on every keystroke: scan for mentions from a nearby point the whole-text scan passes.
  const from = mentionScanStart(text, start);
  for (const mention of scanSessionMentions(from === 0 ? text : text.slice(from))) {
    if (from + mention.start >= end) break;
    if (from + mention.end > start) return undefined;
  }
  return { at: start, end, query };
}

/**
 * An offset at or before `start` (where text[start - 1] is whitespace) that no mention spans, so the mention
 * scan of the whole text reaches it and finds from there what a scan of the text after it finds.
 *
 * Why it holds: a label walk steps over escape pairs and cannot jump a `]` not preceded by a backslash, so
 * every label begun before that `]` either closes there or stops earlier without a mention (at a backslash
 * before a line break or at the end). A mention begun before it therefore ends inside the whitespace-free
 * run that holds it (the rest of a mention, `](dsh-session:…)`, has no `\s`; a bare URI has no `]`). When
 * no `@[` follows that `]` in the run, nothing begun in the run has a label either, so no mention spans the
 * whitespace after the run. The last such run before `start` gives the offset after it; none gives 0.
 */
export function mentionScanStart(text: string, start: number): number {
  // `runEnd` is the whitespace that ends the run being looked at.
  let runEnd = start - 1;
  while (runEnd > 0) {
    let runStart = runEnd - 1;
    while (runStart >= 0 && !isWhitespace(text, runStart)) runStart--;
    // Right to left: the last good `]` wins, unless an `@[` comes after it.
    for (let at = runEnd - 1; at > runStart; at--) {
      const ch = text.charCodeAt(at);
      if (ch === 0x5b /* [ */ && at - 1 > runStart && text.charCodeAt(at - 1) === 0x40 /* @ */) break;
      if (ch === 0x5d /* ] */ && (at === 0 || text.charCodeAt(at - 1) !== 0x5c /* backslash */)) return runEnd + 1;
    }
    runEnd = runStart;
  }
  return 0;
}
