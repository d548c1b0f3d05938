/**
 * Checks that Markdown built around untrusted session text cannot do anything, as a CommonMark renderer
 * (with GFM's tables, strikethrough and autolinks) reads it: no link, image, autolink or HTML; no control
 * or bidi character, written or decoded from a character reference; outside fenced code blocks, no bare
 * `www.` link; fenced blocks closed only by their own fence.
 */
import { markdownTokens } from '../../support/commonMark';

/** The unsafe characters of arbitraries.ts, except the line feed that separates Markdown lines. */
const UNSAFE_IN_MARKDOWN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** The tokens that make text active: links (autolinks too), images and HTML. */
const ACTIVE_TOKENS = new Set(['link_open', 'image', 'html_inline', 'html_block']);

/** The problems found in `markdown` (empty when it is inert). */
export function activeMarkdownProblems(markdown: string): string[] {
  const problems: string[] = [];
  if (UNSAFE_IN_MARKDOWN.test(markdown)) problems.push('control or bidi character');
  for (const token of markdownTokens(markdown)) {
    if (ACTIVE_TOKENS.has(token.type)) problems.push(`${token.type}: ${JSON.stringify(token.content || token.markup)}`);
    else if (UNSAFE_IN_MARKDOWN.test(token.content)) problems.push(`control or bidi character in ${token.type}`);
  }
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
  // GFM links a bare `www.` (the renderer here does not): a backslash-escaped character is literal text.
  const text = outside.join('\n').replace(/\\[!-/:-@[-`{-~]/g, '_');
  const www = /\bwww\./i.exec(text);
  if (www) problems.push(`bare www link: ${JSON.stringify(text.slice(Math.max(0, www.index - 20), www.index + 30))}`);
  return problems;
}
