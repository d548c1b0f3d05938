/**
 * Checks that Markdown built around untrusted session text cannot do anything: no control or bidi
 * character anywhere; outside fenced code blocks, no link, image, autolink, HTML or URI scheme; fenced
 * blocks closed only by their own fence. (A CommonMark renderer is not a dependency here; these are the
 * constructs that would make session text active.)
 */
/** The unsafe characters of arbitraries.ts, except the line feed that separates Markdown lines. */
const UNSAFE_IN_MARKDOWN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** What may never appear outside a code block: link/image syntax, autolinks and HTML, URI schemes, bare www links. */
const ACTIVE_MARKDOWN: ReadonlyArray<[string, RegExp]> = [
  ['inline link or image', /\]\(/],
  ['reference link', /\]\[|^\s{0,3}\[[^\]]*\]:/m],
  ['autolink or HTML', /<[A-Za-z!?/]/],
  ['URI scheme', /\b(?:command|https?|file|javascript|vscode|data):/i],
  ['bare www link', /\bwww\./i],
  ['HTML entity', /&#?[A-Za-z0-9]+;/],
];

/** The problems found in `markdown` (empty when it is inert). */
export function activeMarkdownProblems(markdown: string): string[] {
  const problems: string[] = [];
  if (UNSAFE_IN_MARKDOWN.test(markdown)) problems.push('control or bidi character');
  const outside: string[] = [];
  let fence: { char: string; length: number } | undefined;
  for (const line of markdown.split('\n')) {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === undefined) {
      if (opener) fence = { char: opener[1]![0]!, length: opener[1]!.length };
      else outside.push(line);
      continue;
    }
    // Inside a block: only a fence of the same character, at least as long, with nothing after it, closes it.
    const closer = new RegExp(`^ {0,3}(\\${fence.char}{${fence.length},})\\s*$`).exec(line);
    if (closer) fence = undefined;
    else if (opener && opener[1]![0] === fence.char && opener[1]!.length >= fence.length) problems.push(`fence closed early by ${JSON.stringify(line)}`);
  }
  if (fence !== undefined) problems.push('unclosed code block');
  // A backslash-escaped punctuation character is literal text: neutralise escapes, left to right.
  const text = outside.join('\n').replace(/\\[!-/:-@[-`{-~]/g, '_');
  for (const [name, pattern] of ACTIVE_MARKDOWN) {
    const match = pattern.exec(text);
    if (match) problems.push(`${name}: ${JSON.stringify(text.slice(Math.max(0, match.index - 20), match.index + 30))}`);
  }
  return problems;
}
