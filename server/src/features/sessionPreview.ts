import { displaySafeLabel, displaySafeText, formatAge, isSessionReferenceError } from '@dsh-session-ls/shared';
import { MarkupKind, type CompletionItem, type MarkupContent } from 'vscode-languageserver-types';
import { detectCredentials, projectSessionSurface, raceWithSignal, redactSpans, throwIfCancelled, type SessionSurface } from '../resolver';
import { isSessionCompletionData, type SessionCompletionData } from './completion';
import type { SessionServices } from './services';

/** How many characters of one message a preview shows. */
export const PREVIEW_MESSAGE_CHARS = 240;

// Characters that start markup wherever they are: code spans, emphasis, link and image text, HTML and
// autolinks, table cells (GFM).
const ALWAYS_ACTIVE = new Set(['`', '*', '[', '<', '|']);
// Characters that start a block at the beginning of a line: headings, block quotes, list items, setext
// underlines and thematic breaks (fences need three backticks or tildes, escaped anyway; digits before
// `.` or `)` are handled on their own).
const BLOCK_STARTS = new Set(['#', '>', '+', '-', '=']);
const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;
const WORD_CHARACTER = /^[\p{L}\p{N}]$/u;
// A character reference: `&amp;`, `&#38;`, `&#x26;` (CommonMark decodes them, so they could produce anything).
const CHARACTER_REFERENCE = /^&#?[A-Za-z0-9]+;/;
// The first character of an email autolink's domain (GFM), right after its `@`.
const EMAIL_DOMAIN = /^[A-Za-z0-9_-]$/;

/** Whether the character at `at` of `line` must be escaped to stay literal (see {@link escapeMarkdownText}). */
function needsEscape(line: string, at: number, tildes: number): boolean {
  const ch = line[at]!;
  const before = at === 0 ? '' : line[at - 1]!;
  const after = at + 1 < line.length ? line[at + 1]! : '';
  if (ALWAYS_ACTIVE.has(ch)) return true;
  if (at === 0 && BLOCK_STARTS.has(ch)) return true;
  switch (ch) {
    // A backslash escapes the punctuation after it, and ours after the text (`**` around a title).
    case '\\':
      return after === '' || ASCII_PUNCTUATION.test(after);
    // Between two letters or digits `_` can neither open nor close emphasis (snake_case stays as it is).
    case '_':
      return !(WORD_CHARACTER.test(before) && WORD_CHARACTER.test(after));
    // GFM strikethrough needs a pair: a lone `~` (a home folder) stays.
    case '~':
      return tildes > 1;
    case '&':
      return CHARACTER_REFERENCE.test(line.slice(at));
    // An ATX heading's closing sequence: a run of `#` at the end, after a space.
    case '#':
      return before === ' ' && /^#+$/.test(line.slice(at));
    // `scheme://` and protocol-relative `//host` autolinks.
    case '/':
      return before === '/';
    // An email autolink: the `@` between its two parts (an `@name` after a space stays).
    case '@':
      return before !== '' && before !== ' ' && EMAIL_DOMAIN.test(after);
    // `www.` autolinks (GFM): the dot of a `www` that starts a word.
    case '.':
      return at >= 3 && line.slice(at - 3, at).toLowerCase() === 'www' && (at === 3 || !WORD_CHARACTER.test(line[at - 4]!));
    default:
      return false;
  }
}

/**
 * Session text as inert inline Markdown: display-safe, on one line, and backslash-escaped only where
 * CommonMark (or GFM's tables, strikethrough and autolinks) would read markup: it can never open a link,
 * an autolink, HTML, a code span, emphasis or a block, nor decode a character reference; every other
 * character stays as it is, so `/home/sam/weather-app` reads the same in clients that show the Markdown
 * as text.
 */
export function escapeMarkdownText(text: string): string {
  const line = displaySafeText(text).replace(/\s+/g, ' ').trim();
  let tildes = 0;
  for (const ch of line) if (ch === '~') tildes++;
  // An ordered list item: digits, then `.` or `)`.
  const ordered = /^\d{1,9}[.)](?= |$)/.exec(line)?.[0].length;
  let escaped = '';
  let run = 0;
  for (let at = 0; at < line.length; at++) {
    if (needsEscape(line, at, tildes) || at + 1 === ordered) {
      escaped += line.slice(run, at) + '\\';
      run = at;
    }
  }
  return escaped + line.slice(run);
}

/** At most `max` characters (whole code points), with `…` when cut. */
export function trimForPreview(text: string, max: number = PREVIEW_MESSAGE_CHARS): string {
  const oneLine = displaySafeText(text).replace(/\s+/g, ' ').trim();
  const chars = [...oneLine];
  return chars.length <= max ? oneLine : chars.slice(0, max).join('').trimEnd() + '…';
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

interface Exchange {
  user?: string;
  /** True when the user side is a compaction checkpoint (a summary of earlier messages). */
  checkpoint?: boolean;
  assistant?: string;
}

/** The conversation as exchanges: each prompt (or checkpoint) with the last assistant answer that follows it. */
function exchanges(conversation: ReadonlyArray<{ role: 'user' | 'assistant'; text: string }>, checkpoints: readonly boolean[]): Exchange[] {
  const result: Exchange[] = [];
  conversation.forEach((message, index) => {
    if (message.role === 'user' || result.length === 0) result.push({});
    const current = result[result.length - 1]!;
    current[message.role] = message.text;
    if (checkpoints[index] === true) current.checkpoint = true;
  });
  return result;
}

/** How a preview is written: Markdown with session text escaped, or plain text for clients without Markdown. */
interface PreviewStyle {
  kind: MarkupKind;
  /** Session text, made inert. */
  text(value: string): string;
  strong(value: string): string;
  /** A quoted line, and the separator between quoted lines. */
  quote(value: string): string;
  quoteBreak: string;
}

const MARKDOWN_STYLE: PreviewStyle = {
  kind: MarkupKind.Markdown,
  text: escapeMarkdownText,
  strong: (value) => `**${value}**`,
  quote: (value) => `> ${value}`,
  quoteBreak: '>',
};

const PLAINTEXT_STYLE: PreviewStyle = {
  kind: MarkupKind.PlainText,
  text: (value) => displaySafeText(value).replace(/\s+/g, ' ').trim(),
  strong: (value) => value,
  quote: (value) => `  ${value}`,
  quoteBreak: '',
};

/** Session text as a preview shows it: each credential replaced (see {@link previewCredentialMask}). */
export type PreviewMask = (text: string) => string;

function exchangeLines(style: PreviewStyle, heading: string, exchange: Exchange, mask: PreviewMask): string[] {
  const lines = [style.strong(heading), ''];
  const who = exchange.checkpoint === true ? 'Summary of earlier messages' : 'User';
  if (exchange.user !== undefined) lines.push(style.quote(`${style.strong(`${who}:`)} ${style.text(trimForPreview(mask(exchange.user)))}`), style.quoteBreak);
  if (exchange.assistant !== undefined) lines.push(style.quote(`${style.strong('Assistant:')} ${style.text(trimForPreview(mask(exchange.assistant)))}`));
  if (lines.length > 2 && lines[lines.length - 1] === style.quoteBreak) lines.pop();
  return [...lines, ''];
}

/**
 * The preview of one session: title, cwd, created, message counts, first and latest exchange. In
 * Markdown (the default) every piece of session text is escaped so it cannot inject markup.
 */
export function sessionPreview(
  item: SessionCompletionData,
  surface: SessionSurface,
  now: number,
  kind: MarkupKind = MarkupKind.Markdown,
  mask: PreviewMask = (text) => text,
): string {
  const style = kind === MarkupKind.PlainText ? PLAINTEXT_STYLE : MARKDOWN_STYLE;
  const projected = projectSessionSurface(surface, item.label);
  const conversation = projected.data.conversation;
  const checkpoints = projected.checkpoints.filter(Boolean).length;
  const prompts = conversation.filter((message) => message.role === 'user').length - checkpoints;
  const created = new Date(surface.header.createdAt);
  const createdText = Number.isNaN(created.getTime())
    ? String(surface.header.createdAt)
    : `${created.toISOString().slice(0, 16).replace('T', ' ')} UTC (${formatAge(surface.header.createdAt, now)})`;
  const counts =
    `${plural(conversation.length, 'message')}: ${plural(prompts, 'prompt')}, ${plural(conversation.length - prompts - checkpoints, 'answer')}` +
    (checkpoints === 0 ? '' : checkpoints === 1 ? ', 1 compaction summary' : `, ${checkpoints} compaction summaries`);
  const lines = [
    style.strong(style.text(displaySafeLabel(item.label, item.sessionId))),
    '',
    `- cwd: ${surface.header.cwd === undefined ? '(no cwd)' : style.text(surface.header.cwd)}`,
    // Our own words (dates, counts) need no escaping; everything from the session does.
    `- created: ${createdText}`,
    `- ${counts}`,
    `- id: ${style.text(item.sessionId)}`,
    '',
  ];
  const all = exchanges(conversation, projected.checkpoints);
  if (all.length === 0) {
    lines.push(kind === MarkupKind.PlainText ? 'No conversation yet.' : '_No conversation yet._');
  } else if (all.length === 1) {
    lines.push(...exchangeLines(style, 'Only exchange', all[0]!, mask));
  } else {
    lines.push(...exchangeLines(style, 'First exchange', all[0]!, mask), ...exchangeLines(style, 'Latest exchange', all[all.length - 1]!, mask));
  }
  return lines.join('\n').trimEnd();
}

/** The Markdown preview of one session (what hovers and completion items show). */
export function sessionPreviewMarkdown(item: SessionCompletionData, surface: SessionSurface, now: number, mask?: PreviewMask): string {
  return sessionPreview(item, surface, now, MarkupKind.Markdown, mask);
}

// A preview shows at most PREVIEW_MESSAGE_CHARS of a message's start: credentials are looked for in this much of it.
const PREVIEW_SCAN_CHARS = 16384;

/** The mask for the messages a session's preview shows: their credentials as `[REDACTED:<kind>]`, never the values. */
export async function previewCredentialMask(surface: SessionSurface): Promise<PreviewMask> {
  const projected = projectSessionSurface(surface, '');
  const all = exchanges(projected.data.conversation, projected.checkpoints);
  const masked = new Map<string, string>();
  for (const exchange of [all[0], all[all.length - 1]]) {
    for (const text of [exchange?.user, exchange?.assistant]) {
      if (text === undefined || masked.has(text)) continue;
      const head = text.slice(0, PREVIEW_SCAN_CHARS);
      masked.set(text, redactSpans(head, await detectCredentials(head)).text + text.slice(head.length));
    }
  }
  return (text) => masked.get(text) ?? text;
}

/**
 * `completionItem/resolve`: a session item gains its Markdown preview; a session that cannot be read
 * says so in the preview (the item stays usable). Other items come back unchanged.
 */
export async function resolveSessionCompletionItem(
  item: CompletionItem,
  services: SessionServices,
  signal?: AbortSignal,
  kind: MarkupKind = MarkupKind.Markdown,
): Promise<CompletionItem> {
  if (!isSessionCompletionData(item.data)) return item;
  const style = kind === MarkupKind.PlainText ? PLAINTEXT_STYLE : MARKDOWN_STYLE;
  let value: string;
  try {
    const surface = await raceWithSignal(services.sessions.readSurface(item.data.sessionId, signal, item.data.agent), signal);
    throwIfCancelled(signal);
    const mask = await previewCredentialMask(surface);
    throwIfCancelled(signal);
    value = sessionPreview(item.data, surface, services.now(), style.kind, mask);
  } catch (error) {
    throwIfCancelled(signal);
    if (isSessionReferenceError(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    value = `${style.strong(style.text(displaySafeLabel(item.data.label, item.data.sessionId)))}\n\nThis session cannot be read: ${style.text(reason)}`;
  }
  const documentation: MarkupContent = { kind: style.kind, value };
  return { ...item, documentation };
}

/** The documentation format to use for a client: Markdown unless it lists formats without Markdown. */
export function previewKindFor(documentationFormat: readonly string[] | undefined): MarkupKind {
  if (documentationFormat === undefined || documentationFormat.length === 0) return MarkupKind.Markdown;
  return documentationFormat.includes(MarkupKind.Markdown) ? MarkupKind.Markdown : MarkupKind.PlainText;
}
