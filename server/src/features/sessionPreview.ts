import { displaySafeLabel, displaySafeText, formatAge, isSessionReferenceError } from '@dsh-session-ls/shared';
import { MarkupKind, type CompletionItem, type MarkupContent } from 'vscode-languageserver-types';
import { projectSessionSurface, raceWithSignal, throwIfCancelled, type SessionSurface } from '../resolver';
import { isSessionCompletionData, type SessionCompletionData } from './completion';
import type { SessionServices } from './services';

/** How many characters of one message a preview shows. */
export const PREVIEW_MESSAGE_CHARS = 240;

// Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping them all means
// session text can never open a link, an autolink, HTML, emphasis or a code span.
const MARKDOWN_PUNCTUATION = /[!-/:-@[-`{-~]/g;

/** Session text as inert Markdown: display-safe, on one line, every punctuation character escaped. */
export function escapeMarkdownText(text: string): string {
  return displaySafeText(text).replace(/\s+/g, ' ').trim().replace(MARKDOWN_PUNCTUATION, (ch) => '\\' + ch);
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

function exchangeLines(style: PreviewStyle, heading: string, exchange: Exchange): string[] {
  const lines = [style.strong(heading), ''];
  const who = exchange.checkpoint === true ? 'Summary of earlier messages' : 'User';
  if (exchange.user !== undefined) lines.push(style.quote(`${style.strong(`${who}:`)} ${style.text(trimForPreview(exchange.user))}`), style.quoteBreak);
  if (exchange.assistant !== undefined) lines.push(style.quote(`${style.strong('Assistant:')} ${style.text(trimForPreview(exchange.assistant))}`));
  if (lines.length > 2 && lines[lines.length - 1] === style.quoteBreak) lines.pop();
  return [...lines, ''];
}

/**
 * The preview of one session: title, cwd, created, message counts, first and latest exchange. In
 * Markdown (the default) every piece of session text is escaped so it cannot inject markup.
 */
export function sessionPreview(item: SessionCompletionData, surface: SessionSurface, now: number, kind: MarkupKind = MarkupKind.Markdown): string {
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
    lines.push(...exchangeLines(style, 'Only exchange', all[0]!));
  } else {
    lines.push(...exchangeLines(style, 'First exchange', all[0]!), ...exchangeLines(style, 'Latest exchange', all[all.length - 1]!));
  }
  return lines.join('\n').trimEnd();
}

/** The Markdown preview of one session (what hovers and completion items show). */
export function sessionPreviewMarkdown(item: SessionCompletionData, surface: SessionSurface, now: number): string {
  return sessionPreview(item, surface, now, MarkupKind.Markdown);
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
    value = sessionPreview(item.data, surface, services.now(), style.kind);
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
