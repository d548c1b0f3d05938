/**
 * dsh's own mention expression, as a TEST ORACLE only (session-reference.md §5). The product scans
 * with `scanSessionMentions` (shared/src/mention.ts); tests compare the two, match by match.
 */
import fc from 'fast-check';
import { decodeSessionReferenceUri, type SessionMentionToken } from '@dsh-session-ls/shared';

/** The expression exactly as the reference gives it (a fresh object each time: it is global, so stateful). */
function dshExpression(): RegExp {
  return /@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^\s)]*)\)|(dsh-session:[A-Za-z0-9_-]+)/gu;
}

/** `\X` → `X` for any X (the label of a match never holds a `\` before a line terminator or at its end). */
function unescapeLabel(raw: string): string {
  return raw.replace(/\\(.)/gsu, '$1');
}

/** Every match of dsh's expression, as the token our scanner should report for it. */
export function dshScan(text: string): SessionMentionToken[] {
  const tokens: SessionMentionToken[] = [];
  for (const match of text.matchAll(dshExpression())) {
    const start = match.index;
    const [whole, rawLabel, explicitUri, bareUri] = match;
    if (explicitUri !== undefined) {
      const label = rawLabel!;
      tokens.push({ kind: 'explicit', start, end: start + whole.length, uri: explicitUri, uriStart: start + 2 + label.length + 2, label: unescapeLabel(label) });
    } else {
      tokens.push({ kind: 'bare', start, end: start + whole.length, uri: bareUri!, uriStart: start });
    }
  }
  return tokens;
}

/** What dsh makes of a message: each match replaced by `@` + label (bare: `@` + id); the first bad URI throws. */
export function dshParse(text: string): { text: string; references: Array<{ sessionId: string; label: string }> } {
  const references: Array<{ sessionId: string; label: string }> = [];
  const out = text.replace(dshExpression(), (_whole, rawLabel: string | undefined, explicitUri: string | undefined, bareUri: string | undefined) => {
    const sessionId = decodeSessionReferenceUri((explicitUri ?? bareUri)!);
    const label = explicitUri !== undefined ? unescapeLabel(rawLabel!) : sessionId;
    references.push({ sessionId, label });
    return '@' + label;
  });
  return { text: out, references };
}

/** Every character JavaScript's `\s` matches under `u` (taken from the engine, so none is missed). */
export const WHITESPACE_CHARS: readonly string[] = Array.from({ length: 0x10000 }, (_, code) => String.fromCharCode(code)).filter((ch) =>
  /^\s$/u.test(ch),
);

/** The characters `.` never matches. */
export const LINE_TERMINATORS: readonly string[] = ['\n', '\r', '\u2028', '\u2029'];

const GRAMMAR_PIECES = [
  '\\', '\\\\', '[', ']', '(', ')', '@', '@[', '](', '\\]', 'dsh-session:', '](dsh-session:', 'dsh-session:)',
  'dsh-session:ImRlbW8tMSI', 'dsh-session:IiI', 'IiI', 'IiJ', 'ImRlbW8tMSI', 'a', 'Z', '0', '-', '_', '=', '%', '.', 'é',
  '\r\n', '😀', '\ud83d', '\ude00', '\u200b', '\u180e',
];

/**
 * Texts dense in what the expression turns on: `\`, line terminators, every `\s` character, `[`, `]`,
 * `(`, `)`, `@`, `dsh-session:` and payload characters (plus near-misses: U+200B and U+180E are not `\s`),
 * loose or put together in the shape of an explicit mention (`@[…](dsh-session:…)`) around random pieces.
 */
export function denseMentionText(maxPieces = 40): fc.Arbitrary<string> {
  const single = fc.oneof(
    { arbitrary: fc.constantFrom(...GRAMMAR_PIECES), weight: 6 },
    { arbitrary: fc.constantFrom('\\', ...LINE_TERMINATORS.map((lt) => '\\' + lt)), weight: 3 },
    { arbitrary: fc.constantFrom(...LINE_TERMINATORS), weight: 1 },
    { arbitrary: fc.constantFrom(...WHITESPACE_CHARS), weight: 2 },
  );
  const few = fc.array(single, { maxLength: 4 }).map((pieces) => pieces.join(''));
  const payload = fc.oneof(few, fc.constantFrom('', 'ImRlbW8tMSI', 'IiI', 'IiJ'));
  const shaped = fc.tuple(few, payload).map(([label, rest]) => `@[${label}](dsh-session:${rest})`);
  const piece = fc.oneof({ arbitrary: single, weight: 4 }, { arbitrary: shaped, weight: 1 });
  return fc.array(piece, { maxLength: maxPieces }).map((pieces) => pieces.join(''));
}
