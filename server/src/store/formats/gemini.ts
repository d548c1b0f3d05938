import { stripVTControlCharacters } from 'node:util';
import type { SessionEventRecord } from '../../resolver/sessionStore';
import { foreignAgentInfo } from '@dsh-session-ls/shared';
import type { FormatAdapter } from './adapter';
import { JsonlFold } from './lineFold';
import { WholeLogBuilder, asObject, assistantEvent, checkpointEvent, isoTime, parseJsonl, userEvent, type JsonlRecord } from './records';

/**
 * Gemini CLI's sessions, read-only: `<home>/tmp/<project>/chats/session-<minute>-<id8>.jsonl`, where
 * `<project>` is a slug of the cwd's base name (ASCII letters and digits, lossy); the cwd is in the
 * project registry `<home>/projects.json` (`{projects: {cwd: slug}}`) and in the folder's
 * `.project_root` marker (its text; the marker wins, as the CLI trusts it over the registry).
 * Seen with Gemini CLI 0.61.0, the file is an operation log, replayed line by line:
 * - a header `{sessionId, projectHash, startTime, lastUpdated, kind}` (written again by a resume);
 * - message lines `{id, timestamp, type: user|gemini|info|error|warning, content, toolCalls?, thoughts?}`,
 *   the same `id` again when a message is updated in place (it keeps its place);
 * - `{$set: {…}}` merges metadata (`summary`: the title, `sessionId`, …); `$set.messages` replaces the
 *   whole history (on resume and after compression); `{$rewindTo: id}` drops that message and all after.
 * A compression leaves a user message holding the summary (`<state_snapshot>`), then the model's fixed
 * acknowledgement. Tool output is a user message of `functionResponse` parts. As the CLI's list does, a
 * file with nothing worth resuming (a resume in a later minute first writes one under the same id,
 * holding only the CLI's own context) or of a subagent is no session. Legacy whole-JSON `.json`
 * sessions of older versions are not read. Undocumented: parse defensively.
 */

/** The model's reply the CLI puts after a compression summary. */
const COMPRESSION_ACK = 'Got it. Thanks for the additional context!';
/** The parts the CLI shows as a placeholder (`[Function Response: …]`, …) rather than as text. */
const NON_TEXT_PARTS = ['videoMetadata', 'thought', 'codeExecutionResult', 'executableCode', 'fileData', 'functionCall', 'functionResponse', 'inlineData'];

/** Whether a file name in a `chats` folder is a session file (the CLI also lists legacy `.json` ones, not read here). */
export function isGeminiSessionFile(name: string): boolean {
  return name.startsWith('session-') && name.endsWith('.jsonl');
}

/** Content as the CLI's verbose text of it: text parts as they are, any other part as a `[…]` placeholder. */
function verboseText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(verboseText).join('');
  const part = asObject(content);
  if (part === undefined) return '';
  if (NON_TEXT_PARTS.some((key) => part[key] !== undefined)) return '[part]';
  return typeof part.text === 'string' ? part.text : '';
}

/** The text parts of content joined, as the CLI reads a first prompt (`undefined` for other shapes). */
function joinedText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content.map((part) => (typeof asObject(part)?.text === 'string' ? (part as { text: string }).text : '')).join('');
}

/** The text blocks of content, thoughts and every other part left out. */
function textParts(content: unknown): string[] {
  if (typeof content === 'string') return content === '' ? [] : [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const item of content) {
    const part = typeof item === 'string' ? { text: item } : asObject(item);
    if (part !== undefined && typeof part.text === 'string' && part.text !== '' && part.thought === undefined) texts.push(part.text);
  }
  return texts;
}

/** User content the CLI does not send back on resume: empty, a slash command, a `?` help, its own context. */
function isIgnoredUserText(trimmed: string): boolean {
  return trimmed === '' || trimmed.startsWith('/') || trimmed.startsWith('?') || trimmed.startsWith('<session_context>') || trimmed.startsWith('<hook_context>');
}

/** Whether a message makes a session worth resuming (a real prompt, or a reply, a tool call or a thought). */
function isResumable(message: Record<string, unknown>): boolean {
  const text = message.content ? verboseText(message.content) : '';
  if (message.type === 'user') return !isIgnoredUserText(text.trim());
  if (message.type !== 'gemini') return false;
  const nonEmpty = (value: unknown) => Array.isArray(value) && value.length > 0;
  return text.trim() !== '' || nonEmpty(message.toolCalls) || nonEmpty(message.thoughts);
}

/** A record's kind, in the CLI's order of checks. */
function recordKind(value: Record<string, unknown>): 'rewind' | 'message' | 'set' | 'header' | undefined {
  if (typeof value.$rewindTo === 'string') return 'rewind';
  if (typeof value.id === 'string') return 'message';
  if (asObject(value.$set) !== undefined) return 'set';
  if (typeof value.sessionId === 'string' && typeof value.projectHash === 'string') return 'header';
  return undefined;
}

/** The messages a record brings in whole: `$set.messages` (replacing all) or a header's `messages`. */
function carriedMessages(value: Record<string, unknown>, kind: 'set' | 'header'): Record<string, unknown>[] | undefined {
  const list = kind === 'set' ? asObject(value.$set)!.messages : value.messages;
  if (!Array.isArray(list)) return undefined;
  return list.map(asObject).filter((message): message is Record<string, unknown> => typeof message?.id === 'string');
}

// ---- listing facts ----------------------------------------------------------------------------

/** The CLI's cleaning of a first prompt for its list: whitespace runs as one space, anything but printable ASCII dropped. */
function cleanPrompt(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/[^\x20-\x7E]+/g, '').trim();
}

/** The CLI's cleaning of a summary for display: terminal escapes and invisible or bidirectional controls dropped. */
function cleanSummary(text: string): string {
  return stripVTControlCharacters(text).replace(/[\x00-\x08\x0B\x0C\x0E-\x1F\x80-\x9F\u200E\u200F\u202A-\u202E\u2066-\u2069\u200B\uFEFF]/g, '');
}

/** What `gemini --list-sessions` shows for a session: the summary, else the first prompt, cut at 100 as it cuts. */
export function geminiListLabel(summary: string | undefined, firstPrompt: string | undefined): string | undefined {
  const label = summary ? cleanSummary(summary) : firstPrompt ? cleanPrompt(firstPrompt) : 'Empty conversation';
  if (label === '') return undefined;
  if (label.length <= 100) return label;
  // The CLI cuts UTF-16 units; a surrogate pair cut in half is dropped rather than shown broken.
  return label.slice(0, 97).replace(/[\uD800-\uDBFF]$/, '') + '...';
}

/**
 * The listing facts of one session file, record by record, as the CLI reads them for its list (its
 * metadata-only load): metadata merged in order, which messages are left after rewinds and
 * replacements (and whether any is worth resuming), and the first real prompt ever written.
 */
class GeminiFacts {
  metadata: Record<string, unknown> = {};
  startTime: number | undefined;
  firstPrompt: string | undefined;
  /** Message ids in the order written (repeats included, as the CLI keeps them). */
  ids: string[] = [];
  /** Whether each message left is worth resuming. */
  resumable = new Map<string, boolean>();

  apply(value: Record<string, unknown>): void {
    const kind = recordKind(value);
    if (kind === 'rewind') {
      const at = this.ids.indexOf(value.$rewindTo as string);
      for (const id of at < 0 ? this.ids : this.ids.slice(at)) this.resumable.delete(id);
      this.ids = at < 0 ? [] : this.ids.slice(0, at);
    } else if (kind === 'message') {
      this.message(value);
    } else if (kind === 'set' || kind === 'header') {
      const messages = carriedMessages(value, kind);
      if (kind === 'set' && messages !== undefined) {
        this.ids = [];
        this.resumable.clear();
      }
      for (const message of messages ?? []) this.message(message);
      if (kind === 'header') this.startTime ??= isoTime(value.startTime);
      this.metadata = { ...this.metadata, ...(kind === 'set' ? asObject(value.$set) : value) };
    }
  }

  private message(message: Record<string, unknown>): void {
    const id = message.id as string;
    const resumable = isResumable(message);
    this.ids.push(id);
    this.resumable.set(id, resumable);
    // The first prompt ever written (a later rewind or replacement does not change it); "" looks further.
    if (this.firstPrompt || message.type !== 'user' || !resumable || !message.content) return;
    const text = joinedText(message.content);
    if (text !== undefined) this.firstPrompt = text;
  }

  /** The session's listing facts, or undefined when the CLI would not list it. */
  facts(mtimeMs: number): { id: string; createdAt: number; title?: string } | undefined {
    const { sessionId, projectHash, kind, summary } = this.metadata;
    if (typeof sessionId !== 'string' || sessionId === '' || !projectHash || kind === 'subagent') return undefined;
    if (![...this.resumable.values()].some(Boolean)) return undefined;
    // A summary that is not text makes the CLI's listing of the file fail: it is not listed.
    if (summary && typeof summary !== 'string') return undefined;
    const title = geminiListLabel(summary as string | undefined, this.firstPrompt);
    return { id: sessionId, createdAt: this.startTime ?? mtimeMs, ...(title === undefined ? {} : { title }) };
  }
}

/** Gemini CLI's listing facts, folded line by line (every line is parsed: any may replace the history). */
export class GeminiInfoFold extends JsonlFold {
  facts = new GeminiFacts();

  protected apply(value: Record<string, unknown>): void {
    this.facts.apply(value);
  }

  clone(): GeminiInfoFold {
    const copy = new GeminiInfoFold();
    copy.facts = Object.assign(new GeminiFacts(), this.facts, { ids: [...this.facts.ids], resumable: new Map(this.facts.resumable) });
    return copy;
  }
}

// ---- surface and whole log --------------------------------------------------------------------

/** A message as replayed: the record, and the line that last wrote it. */
interface Replayed {
  message: Record<string, unknown>;
  line: number;
}

/** The history the CLI resumes: the operation log replayed (updates in place, rewinds, replacements). */
export function geminiHistory(records: readonly JsonlRecord[]): Replayed[] {
  let history = new Map<string, Replayed>();
  for (const { line, value } of records) {
    const kind = recordKind(value);
    if (kind === 'rewind') {
      const ids = [...history.keys()];
      const at = ids.indexOf(value.$rewindTo as string);
      if (at < 0) history.clear();
      else for (const id of ids.slice(at)) history.delete(id);
    } else if (kind === 'message') {
      history.set(value.id as string, { message: value, line });
    } else if (kind === 'set' || kind === 'header') {
      const messages = carriedMessages(value, kind);
      if (messages === undefined) continue;
      if (kind === 'set') history = new Map();
      for (const message of messages) history.set(message.id as string, { message, line });
    }
  }
  return [...history.values()];
}

/** Whether `messages[index]` is a compression summary (a user message the fixed acknowledgement follows). */
function isCompressionSummary(messages: readonly Record<string, unknown>[], index: number): boolean {
  const message = messages[index]!;
  const next = messages[index + 1];
  return message.type === 'user' && textParts(message.content).some((text) => text.includes('<state_snapshot>')) && next?.type === 'gemini' && textParts(next.content).join('') === COMPRESSION_ACK;
}

/** One message as a surface event (undefined for tool output, the CLI's own context and other kinds). */
function messageEvent(seq: number, message: Record<string, unknown>): SessionEventRecord | undefined {
  const texts = textParts(message.content);
  if (texts.length === 0) return undefined;
  if (message.type === 'gemini') return assistantEvent(seq, texts);
  if (message.type !== 'user' || isIgnoredUserText(verboseText(message.content).trim())) return undefined;
  return userEvent(seq, texts.join(''));
}

/**
 * The current surface: the history the CLI resumes, user prompts and model text; a compression
 * summary as a checkpoint (its fixed acknowledgement left out); tool calls and their output left out.
 */
export function geminiSurfaceEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  const history = geminiHistory(records);
  const messages = history.map(({ message }) => message);
  const events: SessionEventRecord[] = [];
  for (let i = 0; i < history.length; i++) {
    const { message, line } = history[i]!;
    if (isCompressionSummary(messages, i)) {
      events.push(checkpointEvent(line, textParts(message.content).join('')));
      i++;
      continue;
    }
    const event = messageEvent(line, message);
    if (event !== undefined) events.push(event);
  }
  return events;
}

/**
 * The whole session as the user saw it: each prompt and reply once, where it was first written;
 * each compression summary where a replacement brought it in (the history the CLI kept after it,
 * under new ids, is not repeated).
 */
export function geminiLogEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  const log = new WholeLogBuilder();
  const shown = new Set<string>();
  let seq = 0;
  const show = (message: Record<string, unknown>) => {
    const event = messageEvent(seq, message);
    if (event === undefined || shown.has(message.id as string)) return;
    shown.add(message.id as string);
    log.append(event, isoTime(message.timestamp));
    seq++;
  };
  for (const { value } of records) {
    const kind = recordKind(value);
    if (kind === 'message') show(value);
    if (kind !== 'set' && kind !== 'header') continue;
    const messages = carriedMessages(value, kind) ?? [];
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]!;
      if (!isCompressionSummary(messages, i)) {
        show(message);
        continue;
      }
      if (shown.has(message.id as string)) continue;
      log.checkpoint(seq++, textParts(message.content).join(''), isoTime(message.timestamp));
      for (const kept of messages.slice(i)) shown.add(kept.id as string);
      break;
    }
  }
  return log.events;
}

// ---- the project folders' cwds ----------------------------------------------------------------

/** The cwd of each project folder by the registry's text (`{projects: {cwd: slug}}`; the first cwd of a slug). */
export function geminiProjectCwds(text: string): Map<string, string> {
  const cwds = new Map<string, string>();
  let projects: Record<string, unknown> | undefined;
  try {
    projects = asObject(asObject(JSON.parse(text) as unknown)?.projects);
  } catch {
    return cwds;
  }
  for (const [cwd, slug] of Object.entries(projects ?? {})) if (typeof slug === 'string' && slug !== '' && cwd !== '' && !cwds.has(slug)) cwds.set(slug, cwd);
  return cwds;
}

/** The cwd a `.project_root` marker names (its text, trimmed as the CLI trims it). */
export function geminiMarkerCwd(text: string): string | undefined {
  const cwd = text.trim();
  return cwd === '' ? undefined : cwd;
}

/** Gemini CLI's format adapter. */
export const geminiFormat: FormatAdapter = {
  agent: 'gemini',
  // tmp/<project>/chats/session-*.jsonl (the project folders also hold logs/, tool-outputs/, …).
  base: foreignAgentInfo('gemini').sessionsFolder,
  leafDepth: 2,
  leafName: 'chats',
  isSessionFile: isGeminiSessionFile,
  projectIndex: { file: 'projects.json', cwds: geminiProjectCwds, marker: '.project_root', markerCwd: geminiMarkerCwd },
  summarize(_file, text, mtimeMs) {
    const facts = new GeminiFacts();
    for (const { value } of parseJsonl(text)) facts.apply(value);
    return facts.facts(mtimeMs);
  },
  newFold: () => new GeminiInfoFold(),
  finish: (fold, _file, mtimeMs) => (fold as GeminiInfoFold).facts.facts(mtimeMs),
  surface: geminiSurfaceEvents,
  log: geminiLogEvents,
};
