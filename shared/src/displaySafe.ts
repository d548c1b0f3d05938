// C0/C1 controls and DEL, and the bidi controls lsp-contract.md names.
const LINE_LIKE_CONTROLS = /[\t\n\v\f\r]/g;
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Make session-provided text safe to show in a UI: tab/CR/LF/VT/FF become a space, other
 * C0/C1 controls, DEL and bidi controls are removed.
 */
export function displaySafeText(text: string): string {
  return text.replace(LINE_LIKE_CONTROLS, ' ').replace(UNSAFE_CHARACTERS, '');
}

/**
 * The most UTF-16 code units (what LSP positions count) a label shown or inserted in the editor
 * has, its ellipsis included: a longer label is cut on a grapheme boundary and ends in `…`.
 */
export const DISPLAY_LABEL_MAX_LENGTH = 200;

const ELLIPSIS = '\u2026';
// JavaScript `\s` (spaces, tab, line terminators, U+2028/U+2029, NBSP, U+FEFF…) plus NEL, a line
// terminator that `\s` leaves out.
const WHITE_SPACE_RUN = /[\s\u0085]+/g;
// A character that shows something: a letter, digit, punctuation or symbol that is not a default
// ignorable (Hangul fillers, tags…) nor the blank braille pattern. Marks, spaces, format and private
// characters alone show nothing.
const VISIBLE_CHARACTER = /(?![\p{Default_Ignorable_Code_Point}\u2800])[\p{L}\p{N}\p{P}\p{S}]/u;

let graphemes: Intl.Segmenter | undefined;

/** Whether `text` holds a character that shows something (see `VISIBLE_CHARACTER`). */
export function hasVisibleCharacter(text: string): boolean {
  return VISIBLE_CHARACTER.test(text);
}

/** Display-safe text on one line: every white-space run (line terminators too) is one space, none at the ends. */
function oneLine(text: string): string {
  return displaySafeText(text.replace(WHITE_SPACE_RUN, ' ')).replace(WHITE_SPACE_RUN, ' ').trim();
}

/** The longest prefix of at most `room` code units that ends on a grapheme boundary (at a code point when the first grapheme is longer). */
function graphemePrefix(text: string, room: number): string {
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  // Whether there is a boundary before a character depends on what precedes it and on that character
  // (a whole code point: two code units), never on what follows: so the slice decides up to `room`.
  let end = 0;
  for (const { index, segment } of graphemes.segment(text.slice(0, room + 2))) {
    if (index + segment.length > room) break;
    end = index + segment.length;
  }
  if (end === 0) {
    end = room;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--;
  }
  return text.slice(0, end);
}

/** `text` when it fits `max`, else cut on a grapheme boundary, trailing space dropped, ending in `…`. */
function bounded(text: string, max: number): { text: string; kept: string } {
  if (text.length <= max) return { text, kept: text };
  const kept = graphemePrefix(text, max - ELLIPSIS.length).trimEnd();
  return { text: kept + ELLIPSIS, kept };
}

/** An id with every character that shows nothing written as `\uXXXX` (`\u{XXXXX}` above U+FFFF). */
function escapedInvisibles(sessionId: string): string {
  let out = '';
  for (const ch of sessionId) {
    const code = ch.codePointAt(0)!;
    out += hasVisibleCharacter(ch) ? ch : code > 0xffff ? `\\u{${code.toString(16)}}` : '\\u' + code.toString(16).padStart(4, '0');
  }
  return out;
}

/**
 * The label to show or insert in the editor for a session (lsp-contract.md, Completion `label`):
 * display-safe, every white-space run one space, trimmed, at most `DISPLAY_LABEL_MAX_LENGTH` code
 * units (cut on a grapheme boundary, `…` at the end). When no visible character is left, the session
 * id the same way; when the id shows nothing either, the id with its invisible characters escaped.
 */
export function displaySafeLabel(label: string, sessionId: string): string {
  const safe = bounded(oneLine(label), DISPLAY_LABEL_MAX_LENGTH);
  if (hasVisibleCharacter(safe.kept)) return safe.text;
  const safeId = bounded(oneLine(sessionId), DISPLAY_LABEL_MAX_LENGTH);
  // An empty label is no label at all in a completion list or a picker.
  if (hasVisibleCharacter(safeId.kept) || sessionId === '') return safeId.text;
  return bounded(escapedInvisibles(sessionId), DISPLAY_LABEL_MAX_LENGTH).text;
}
