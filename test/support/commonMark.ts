/**
 * A CommonMark renderer as a test oracle (markdown-it, with GFM tables, strikethrough and autolinks of
 * URLs and emails), to tell what Markdown built around untrusted text actually does.
 */
import { createRequire } from 'node:module';

/** One markdown-it token, as far as the tests read it. */
export interface MarkdownToken {
  type: string;
  tag: string;
  content: string;
  markup: string;
  children: MarkdownToken[] | null;
}

interface MarkdownIt {
  parse(source: string, env: object): MarkdownToken[];
  linkify: { set(options: object): void };
}

const load = createRequire(import.meta.url)('markdown-it') as (options: object) => MarkdownIt;
const markdownIt = load({ html: true, linkify: true });
// GFM links URLs that have a scheme or start with `www.`, and emails; never a bare `example.com`.
markdownIt.linkify.set({ fuzzyLink: false, fuzzyEmail: true });

/** The tokens of `markdown`, block and inline ones in document order (inline children in place of their parent). */
export function markdownTokens(markdown: string): MarkdownToken[] {
  return markdownIt.parse(markdown, {}).flatMap((token) => (token.type === 'inline' ? (token.children ?? []) : [token]));
}

/** What a reader sees: every text and code token's content, in order. */
export function renderedText(tokens: readonly MarkdownToken[]): string {
  return tokens
    .filter((token) => token.type === 'text' || token.type === 'code_inline' || token.type === 'code_block' || token.type === 'fence')
    .map((token) => token.content)
    .join('');
}

/** The shape of a document: every token but text, with its type, tag and markup. */
export function markdownStructure(tokens: readonly MarkdownToken[]): string[] {
  return tokens.filter((token) => token.type !== 'text').map((token) => `${token.type}:${token.tag}:${token.markup}`);
}
