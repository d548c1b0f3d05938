/** fast-check generators for hostile session data: any UTF-16, grammar fragments, controls, bidi, Markdown. */
import fc from 'fast-check';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';

/** Any JS string, lone surrogates included (code units drawn from the whole 16-bit range). */
export const utf16String = (maxLength = 40): fc.Arbitrary<string> =>
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength }).map((units) => String.fromCharCode(...units));

/** Characters a UI must neutralise: C0/C1 controls, DEL and the bidi controls lsp-contract.md names. */
export const UNSAFE_DISPLAY_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Pieces that make session text hostile: controls, bidi overrides, Markdown links, command URIs, the closing tag. */
export const HOSTILE_PIECES: readonly string[] = [
  '\u0000', '\u0007', '\u001b[31m', '\u007f', '\u0085', '\u009b', '\r', '\n', '\r\n', '\t', '\u000b', '\u000c',
  '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c', '\u202a', '\u202b', '\u202c', '\u202d',
  '\u2028', '\u2029', '\ufeff', '\ud800', '\udfff', '😀',
  '[click](command:workbench.action.terminal.new)', '[x](https://evil.example)', '<https://evil.example>',
  '![img](https://evil.example/a.png)', '<a href="command:x">y</a>', '<script>alert(1)</script>',
  'command:editor.action.triggerSuggest', '[ref]: https://evil.example', '`code`', '**bold**', '_em_', '# heading',
  '> quote', '- item', '|table|', '\\', ']', '[', '(', ')', '<', '>', '&lt;', '&#x5b;',
  '</referenced-sessions>', '<referenced-sessions>', '</REFERENCED-SESSIONS>', '\\u003c/referenced-sessions>',
  'dsh-session:', 'dsh-session:IiI', '@[', '](', '@', '"', ' ', 'a', 'Z', '0', '-', '_', '~', '.', '..', '/',
];

/** Text assembled from hostile pieces and arbitrary UTF-16. */
export const hostileText = (maxPieces = 12): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...HOSTILE_PIECES) }, { weight: 1, arbitrary: utf16String(8) }), {
      maxLength: maxPieces,
    })
    .map((pieces) => pieces.join(''));

/** Session ids as they come: UUIDs, short names, path-like and NUL-bearing ids, and any UTF-16 (never empty). */
export const sessionIdArb: fc.Arbitrary<string> = fc
  .oneof(
    fc.uuid(),
    fc.constantFrom('a', 'b', 'source', 'target', '会话', '/', '..', '.', '../..', '/etc/passwd', 'a/b', 'a\u0000b', '~', 'x~0041', '\\', 'C:\\x'),
    hostileText(4),
    utf16String(12),
  )
  .filter((id) => id !== '');

/** Grammar fragments: every token the mention scanner looks at, valid and broken URIs, escapes. */
const GRAMMAR_PIECES: readonly string[] = [
  '@', '@[', '[', ']', '\\]', '\\\\', '\\', '(', ')', '](', 'dsh-session:', 'dsh-session', 'DSH-SESSION:', ' ', '\n', '\t', '\r\n',
  'x', 'Label', '%%%', '=', '==', 'IiI', 'InNvdXJjZSI', 'IiJ', 'e30', 'MQ', 'https://x/', '-', '_', '\u00a0', '\u2028', '😀', '"',
  encodeSessionReferenceUri('source'), encodeSessionReferenceUri(''), encodeSessionReferenceUri('会话'),
  formatSessionReferenceMention({ sessionId: 'a]b\\c', label: 'l]a\\b' }), formatSessionReferenceMention({ sessionId: '\ud800' }),
];

/** Text dense in mention-grammar fragments (for the scanner, the parser and completion positions). */
export const grammarText = (maxPieces = 24): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...GRAMMAR_PIECES) }, { weight: 1, arbitrary: utf16String(4) }), {
      maxLength: maxPieces,
    })
    .map((pieces) => pieces.join(''));
