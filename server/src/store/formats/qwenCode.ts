import path from 'node:path';
import type { SessionEventRecord } from '../../resolver/sessionStore';
import { foreignAgentInfo } from '@dsh-session-ls/shared';
import type { FormatAdapter } from './adapter';
import { JsonlFold } from './lineFold';
import { WholeLogBuilder, asObject, assistantEvent, checkpointEvent, isoTime, parseJsonl, userEvent, type JsonlRecord } from './records';

/**
 * Qwen Code's chat records, read-only: `<home>/projects/<cwd, every non-alphanumeric character as
 * "-">/chats/<session id>.jsonl` (archived ones one folder deeper, which its session list leaves
 * out). The format is undocumented: every field is checked, unknown records are skipped. What we
 * rely on (seen with Qwen Code 0.24.4):
 * - every record has `uuid`, `parentUuid` (null for the first), `sessionId`, `timestamp`, `cwd` and
 *   a `type`: `user` and `assistant` (`message: {role: "user"|"model", parts}`, parts holding
 *   `text`, `thought`, `functionCall` or `functionResponse`), `tool_result`, `system` (`subtype`);
 * - a resume walks `parentUuid` back from the last conversation record (a rewind leaves a dead
 *   branch), joins the fragments that share a `uuid`, and rebuilds what the model sees: messages in
 *   order, `chat_compression` (`systemPayload.compressedHistory`) replacing everything before it;
 * - `custom_title` system records (`systemPayload.customTitle`, from `/rename`; the last one wins).
 * Its session list labels a session by its title, else the first prompt among the first 10
 * non-blank lines, cut to 200 code points and `...`; the id, cwd and start are the first record's.
 * Where we differ: a blank title gives way to the first prompt (Qwen Code shows it blank), and two
 * records glued on one line by a crashed writer are skipped, where Qwen Code recovers them.
 */

/** Lines of a file's head whose records Qwen Code's session list looks at. */
const HEAD_LINES = 10;
const PROMPT_MAX_CODE_POINTS = 200;
const SESSION_FILE = /^[0-9a-fA-F-]{32,36}\.jsonl$/;
const RECORD_TYPES = new Set(['user', 'assistant', 'tool_result', 'system']);
/** System records that are not part of the conversation tree (never a resume's leaf). */
const NOT_CONVERSATION = new Set(['session_sources_snapshot', 'session_artifact_event', 'session_artifact_snapshot', 'managed_session_header_v1', 'managed_session_event_v1', 'managed_session_commit_v1']);
/** How Qwen Code ends the summary message a compression leaves. */
const RESUME_TRAILER = 'Resume the prior task using the summary above.';
/** Context a `UserPromptSubmit` hook adds to a prompt, as its own part. */
const HOOK_CONTEXT = /^\s*<qwen:user-prompt-submit-context>\n[\s\S]*\n<\/qwen:user-prompt-submit-context>\s*$/;

/** A first prompt as Qwen Code's session list shows it: at most 200 code points, then `...` (only its start is read). */
function qwenPromptLabel(text: string): string {
  const codePoints: string[] = [];
  for (const point of text) {
    if (codePoints.length > PROMPT_MAX_CODE_POINTS) break;
    codePoints.push(point);
  }
  return codePoints.length <= PROMPT_MAX_CODE_POINTS ? text : codePoints.slice(0, PROMPT_MAX_CODE_POINTS).join('') + '...';
}

/** The prompt a `user` record gives the session list (its display text, else its first text part); '' for none. */
function recordPrompt(value: Record<string, unknown>): string {
  if (value.type !== 'user' || value.subtype !== undefined) return '';
  const payload = asObject(value.systemPayload);
  if (payload?.displayText !== undefined) return typeof payload.displayText === 'string' ? qwenPromptLabel(payload.displayText) : '';
  const parts = asObject(value.message)?.parts;
  if (!Array.isArray(parts)) return '';
  const first = parts.map(asObject).find((part) => part !== undefined && 'text' in part);
  return typeof first?.text === 'string' ? qwenPromptLabel(first.text) : '';
}

/** A `custom_title` record's title ('' when it clears it), else undefined. */
function recordTitle(value: Record<string, unknown>): string | undefined {
  if (value.type !== 'system' || value.subtype !== 'custom_title') return undefined;
  const title = asObject(value.systemPayload)?.customTitle ?? value.customTitle;
  return typeof title === 'string' ? title : undefined;
}

/** One line's object, as `parseJsonl` reads it; undefined for anything it skips. */
function lineObject(raw: string): Record<string, unknown> | undefined {
  if (raw.charCodeAt(0) !== 0x7b /* { */) return undefined;
  try {
    return asObject(JSON.parse(raw));
  } catch {
    return undefined;
  }
}

/** What the listing takes from a file's head and its titles. */
interface QwenHeadFacts {
  first: Record<string, unknown> | undefined;
  prompt: string;
  title: string | undefined;
}

function listingFacts(facts: QwenHeadFacts, file: string, mtimeMs: number) {
  const { first } = facts;
  if (first === undefined) return undefined;
  const id = typeof first.sessionId === 'string' && first.sessionId !== '' ? first.sessionId : path.basename(file, '.jsonl');
  const cwd = typeof first.cwd === 'string' && first.cwd !== '' ? first.cwd : undefined;
  const title = facts.title !== undefined && facts.title.trim() !== '' ? facts.title : facts.prompt !== '' ? facts.prompt : undefined;
  return { id, ...(cwd === undefined ? {} : { cwd }), createdAt: isoTime(first.timestamp) ?? mtimeMs, ...(title === undefined ? {} : { title }) };
}

/** Listing facts of a whole text, from a parse of every line: the reference the fold is held to. */
function qwenSummary(file: string, text: string, mtimeMs: number) {
  const head = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(0, HEAD_LINES)
    .map(lineObject)
    .filter((value) => value !== undefined);
  let title: string | undefined;
  for (const { value } of parseJsonl(text)) title = recordTitle(value) ?? title;
  return listingFacts({ first: head[0], prompt: head.map(recordPrompt).find((prompt) => prompt !== '') ?? '', title }, file, mtimeMs);
}

const NEWLINE = 0x0a;

/** Qwen Code's listing facts, folded: the first 10 non-blank lines for the head, every line for the title. */
class QwenInfoFold extends JsonlFold implements QwenHeadFacts {
  first: Record<string, unknown> | undefined;
  prompt = '';
  title: string | undefined;
  headLines = 0;

  protected apply(value: Record<string, unknown>): void {
    this.title = recordTitle(value) ?? this.title;
  }

  override fold(bytes: Buffer, start: number, end: number): void {
    let position = start;
    while (this.headLines < HEAD_LINES && position < end) {
      let lineEnd = bytes.indexOf(NEWLINE, position);
      if (lineEnd < 0 || lineEnd > end) lineEnd = end;
      const raw = bytes.toString('utf8', position, lineEnd).trim();
      position = lineEnd + 1;
      if (raw === '') continue;
      this.headLines++;
      const value = lineObject(raw);
      if (value === undefined) continue;
      this.first ??= value;
      if (this.prompt === '') this.prompt = recordPrompt(value);
      this.apply(value);
    }
    if (position < end) super.fold(bytes, position, end);
  }

  clone(): QwenInfoFold {
    return Object.assign(new QwenInfoFold(), this);
  }
}

/** A record on the resumed chain: its first line, its fragments' parts joined. */
interface ChainRecord {
  line: number;
  value: Record<string, unknown>;
  role: string | undefined;
  parts: unknown[] | undefined;
}

function isChatRecord(value: Record<string, unknown>): boolean {
  const { uuid, parentUuid, sessionId, type } = value;
  return typeof uuid === 'string' && uuid !== '' && (typeof parentUuid === 'string' || parentUuid === null) && typeof sessionId === 'string' && sessionId !== '' && typeof type === 'string' && RECORD_TYPES.has(type);
}

function isConversation(value: Record<string, unknown>): boolean {
  return !(value.type === 'system' && typeof value.subtype === 'string' && NOT_CONVERSATION.has(value.subtype));
}

/** The records a resume reconstructs, in order: `parentUuid` walked back from the last conversation record. */
function qwenActiveChain(records: readonly JsonlRecord[]): ChainRecord[] {
  const fragments = new Map<string, JsonlRecord[]>();
  let leaf: string | undefined;
  for (const record of records) {
    if (!isChatRecord(record.value) || !isConversation(record.value)) continue;
    const uuid = record.value.uuid as string;
    leaf = uuid;
    const known = fragments.get(uuid);
    if (known === undefined) fragments.set(uuid, [record]);
    else known.push(record);
  }
  const chain: ChainRecord[] = [];
  const visited = new Set<string>();
  for (let uuid = leaf; uuid !== undefined && !visited.has(uuid); ) {
    visited.add(uuid);
    const pieces = fragments.get(uuid);
    if (pieces === undefined) break;
    chain.push(joined(pieces));
    const parent = pieces[0]!.value.parentUuid;
    uuid = typeof parent === 'string' && parent !== '' ? parent : undefined;
  }
  return chain.reverse();
}

/** One record from its fragments: the first's fields, every fragment's message parts in order. */
function joined(pieces: readonly JsonlRecord[]): ChainRecord {
  let role: string | undefined;
  let parts: unknown[] | undefined;
  for (const { value } of pieces) {
    const message = asObject(value.message);
    if (message === undefined) continue;
    if (parts === undefined && typeof message.role === 'string') role = message.role;
    parts = [...(parts ?? []), ...(Array.isArray(message.parts) ? (message.parts as unknown[]) : [])];
  }
  return { line: pieces[0]!.line, value: pieces[0]!.value, role, parts };
}

/** One message of the history a resume gives the model, with where it came from. */
interface HistoryEntry {
  seq: number;
  role: string | undefined;
  parts: unknown[];
  /** Context Qwen Code put there itself (a notification; what a compression restored), not a prompt. */
  injected: boolean;
  /** A compression's summary (the first message it keeps). */
  summary: boolean;
}

/** The text parts of `parts` that say something (no thoughts, no hook context). */
function partTexts(parts: readonly unknown[]): string[] {
  const texts: string[] = [];
  for (const part of parts) {
    const object = asObject(part);
    if (object === undefined || object.thought === true || typeof object.text !== 'string' || object.text === '' || HOOK_CONTEXT.test(object.text)) continue;
    texts.push(object.text);
  }
  return texts;
}

/** The history a compression keeps: its summary first (when it made one), then what it restored. */
function compressedEntries(seq: number, kept: readonly unknown[]): HistoryEntry[] {
  const entries = kept.map(asObject).filter((entry) => entry !== undefined);
  const first = entries[0];
  const summarized = first?.role === 'user' && Array.isArray(first.parts) && partTexts(first.parts).some((text) => text.includes(RESUME_TRAILER));
  return entries.map((entry, index) => ({
    seq,
    role: typeof entry.role === 'string' ? entry.role : undefined,
    parts: Array.isArray(entry.parts) ? entry.parts : [],
    summary: summarized && index === 0,
    injected: summarized && index > 0 && entry.role === 'user',
  }));
}

/** Whether a `/command` result was echoed as the user message before it (and never sent to the model). */
function echoedCommand(value: Record<string, unknown>, previous: ChainRecord | undefined): boolean {
  const payload = asObject(value.systemPayload);
  const items = payload?.outputHistoryItems;
  if (payload?.phase !== 'result' || payload.sentToModel === true || !Array.isArray(items) || items.length === 0) return false;
  if (!items.every((item) => asObject(item)?.type === 'assistant') || previous?.value.type !== 'user' || previous.value.subtype !== undefined) return false;
  const only = previous.parts?.length === 1 ? asObject(previous.parts[0]) : undefined;
  return only !== undefined && Object.keys(only).length === 1 && only.text === payload.rawCommand;
}

/** The history a resume gives the model, message by message (see the header). */
function qwenModelHistory(chain: readonly ChainRecord[]): HistoryEntry[] {
  let history: HistoryEntry[] = [];
  let previous: ChainRecord | undefined;
  for (const record of chain) {
    const { value } = record;
    if (value.type === 'system') {
      if (value.subtype === 'slash_command') {
        if (echoedCommand(value, previous)) history.pop();
        if (previous?.value.type === 'user') previous = undefined;
      } else if (value.subtype === 'chat_compression') {
        const kept = asObject(value.systemPayload)?.compressedHistory;
        if (kept) {
          history = Array.isArray(kept) ? compressedEntries(record.line, kept) : [];
          previous = undefined;
        }
      }
      continue;
    }
    if (record.parts === undefined || value.subtype === 'realtime_message') continue;
    const last = history[history.length - 1];
    if (value.subtype === 'mid_turn_user_message' && last?.role === 'user') last.parts = [...last.parts, ...record.parts];
    else history.push({ seq: record.line, role: record.role, parts: record.parts, injected: value.provenance === 'system', summary: false });
    previous = record;
  }
  return history;
}

/** One history message as a surface event: a prompt, an answer's text or a compression summary. */
function entryEvent(entry: HistoryEntry): SessionEventRecord | undefined {
  const texts = partTexts(entry.parts);
  if (texts.length === 0 || entry.injected) return undefined;
  if (entry.role === 'model') return assistantEvent(entry.seq, texts);
  if (entry.role !== 'user') return undefined;
  return entry.summary ? checkpointEvent(entry.seq, texts.join('\n')) : userEvent(entry.seq, texts.join('\n'));
}

/**
 * The current surface of one session: the history a resume gives the model (the last
 * compression's summary as a checkpoint), prompts and answer text; tool calls, tool output, thoughts
 * and injected context are not part of it.
 */
function qwenSurfaceEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  return qwenModelHistory(qwenActiveChain(records))
    .map(entryEvent)
    .filter((event) => event !== undefined);
}

/**
 * The whole session as the user saw it: every prompt and answer text of the resumed chain, each
 * compression summary where it happened (what it kept is not repeated).
 */
function qwenLogEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  const log = new WholeLogBuilder();
  for (const record of qwenActiveChain(records)) {
    const { value, line } = record;
    const time = isoTime(value.timestamp);
    if (value.type === 'system' && value.subtype === 'chat_compression') {
      const kept = asObject(value.systemPayload)?.compressedHistory;
      const summary = Array.isArray(kept) ? compressedEntries(line, kept).find((entry) => entry.summary) : undefined;
      if (summary !== undefined) log.checkpoint(line, partTexts(summary.parts).join('\n'), time);
      continue;
    }
    if ((value.type !== 'user' && value.type !== 'assistant') || record.parts === undefined || value.provenance === 'system') continue;
    if (value.subtype === 'realtime_message') continue;
    const event = entryEvent({ seq: line, role: record.role, parts: record.parts, injected: false, summary: false });
    if (event !== undefined) log.append(event, time);
  }
  return log.events;
}

/** Qwen Code's format adapter. */
export const qwenCodeFormat: FormatAdapter = {
  agent: 'qwen-code',
  // projects/<project>/chats/<id>.jsonl: the chats folder is the second level below `projects`.
  base: foreignAgentInfo('qwen-code').sessionsFolder,
  leafDepth: 2,
  isSessionFile: (name) => SESSION_FILE.test(name),
  summarize: qwenSummary,
  newFold: () => new QwenInfoFold(),
  finish: (fold, file, mtimeMs) => listingFacts(fold as QwenInfoFold, file, mtimeMs),
  surface: qwenSurfaceEvents,
  log: qwenLogEvents,
};
