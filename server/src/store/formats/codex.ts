import path from 'node:path';
import type { SessionEventRecord } from '../../resolver/sessionStore';
import { foreignAgentInfo } from '@dsh-session-ls/shared';
import type { FormatAdapter, TitleFold } from './adapter';
import { JsonlFold } from './lineFold';
import { WholeLogBuilder, asObject, assistantEvent, blockTexts, checkpointEvent, isoTime, parseJsonl, promptLabel, userEvent, type JsonlRecord } from './records';

/**
 * Codex rollouts, read-only: `<home>/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`, lines
 * `{timestamp, type, payload}`. Seen with codex-cli 0.171.0: `session_meta` (id, cwd, timestamp),
 * `response_item` (`message` with roles developer/user/assistant, `function_call`, …), `event_msg`,
 * `turn_context`, `compacted` (`message`: the summary prompt; `replacement_history`: the items the
 * model keeps, the summary last). A rename lives only in `<home>/session_index.jsonl`
 * (`{id, thread_name, updated_at}`, the latest line wins). Undocumented: parse defensively.
 */

/** What a listing needs from one rollout. */
export interface CodexSessionInfo {
  id: string;
  cwd?: string;
  createdAt?: number;
  /** Codex's own preview: the first user message. */
  firstPrompt?: string;
}

const ROLLOUT_NAME = /^rollout-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-([0-9a-fA-F-]{36})\.jsonl(?:\.zst)?$/;

/** The id and start time in a rollout's file name (`.jsonl`, or `.jsonl.zst` as Codex rewrites idle ones), when it has Codex's shape. */
export function codexRolloutName(file: string): { id: string; createdAt?: number } | undefined {
  const match = ROLLOUT_NAME.exec(path.basename(file));
  if (match === null) return undefined;
  const [date, time] = match[1]!.split('T') as [string, string];
  const createdAt = Date.parse(`${date}T${time.replace(/-/g, ':')}Z`);
  return { id: match[2]!, ...(Number.isFinite(createdAt) ? { createdAt } : {}) };
}

// Context Codex injects as user messages: `<environment_context>…</environment_context>`,
// `<turn_aborted>…`, `<user_instructions>…`, AGENTS.md instructions.
const WRAPPED_CONTEXT = /^\s*<([a-z_]+(?: [a-z_]+)?)>[\s\S]*<\/\1>\s*$/;
const AGENTS_MD = /^\s*# AGENTS\.md instructions/;

function userTexts(content: unknown): string[] {
  return blockTexts(content, ['input_text', 'text']).filter((text) => !WRAPPED_CONTEXT.test(text) && !AGENTS_MD.test(text));
}

/** The text of a user `response_item` message, or undefined for injected context and anything else. */
export function codexUserPrompt(item: Record<string, unknown> | undefined): string | undefined {
  if (item?.type !== 'message' || item.role !== 'user') return undefined;
  const text = userTexts(item.content).join('\n');
  return text === '' ? undefined : text;
}

/** Listing facts of one rollout's records. */
export function codexSessionInfo(records: readonly JsonlRecord[], file: string): CodexSessionInfo | undefined {
  const named = codexRolloutName(file);
  let id = named?.id;
  let cwd: string | undefined;
  let createdAt: number | undefined;
  let firstPrompt: string | undefined;
  for (const { value } of records) {
    const payload = asObject(value.payload);
    if (value.type === 'session_meta' && payload !== undefined) {
      if (typeof payload.id === 'string' && payload.id !== '') id = payload.id;
      if (typeof payload.cwd === 'string' && payload.cwd !== '') cwd ??= payload.cwd;
      createdAt ??= isoTime(payload.timestamp) ?? isoTime(value.timestamp);
    }
    if (firstPrompt === undefined && value.type === 'response_item') {
      const prompt = codexUserPrompt(payload);
      if (prompt !== undefined) firstPrompt = promptLabel(prompt);
    }
  }
  if (id === undefined) return undefined;
  createdAt ??= named?.createdAt;
  return { id, ...(cwd === undefined ? {} : { cwd }), ...(createdAt === undefined ? {} : { createdAt }), ...(firstPrompt === undefined ? {} : { firstPrompt }) };
}

/** One model-visible item as a surface event (`checkpointText`: the compaction summary it may be). */
function itemEvent(seq: number, item: Record<string, unknown> | undefined, checkpointText?: string): SessionEventRecord | undefined {
  if (item?.type !== 'message') return undefined;
  if (item.role === 'assistant') {
    const texts = blockTexts(item.content, ['output_text', 'text']);
    return texts.length === 0 ? undefined : assistantEvent(seq, texts);
  }
  if (item.role === 'user') {
    const raw = blockTexts(item.content, ['input_text', 'text']).join('\n');
    if (checkpointText !== undefined && raw === checkpointText) return checkpointEvent(seq, raw);
    const prompt = codexUserPrompt(item);
    return prompt === undefined ? undefined : userEvent(seq, prompt);
  }
  return undefined;
}

/**
 * The current surface of one rollout: after the last `compacted`, the history Codex kept (its
 * summary as a checkpoint), then what followed; user prompts and assistant text only.
 */
export function codexSurfaceEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  let events: SessionEventRecord[] = [];
  for (const { line, value } of records) {
    const payload = asObject(value.payload);
    if (value.type === 'compacted' && payload !== undefined) {
      const summary = typeof payload.message === 'string' ? payload.message : undefined;
      const kept = Array.isArray(payload.replacement_history) ? payload.replacement_history : undefined;
      events = [];
      if (kept !== undefined) {
        let sawCheckpoint = false;
        for (const item of kept) {
          const event = itemEvent(line, asObject(item), summary);
          if (event === undefined) continue;
          if (asObject(event.data)?.source !== undefined && (event.data as { source: { kind: string } }).source.kind === 'plugin') sawCheckpoint = true;
          events.push(event);
        }
        if (!sawCheckpoint && summary !== undefined && summary !== '') events.push(checkpointEvent(line, summary));
      } else if (summary !== undefined && summary !== '') {
        events.push(checkpointEvent(line, summary));
      }
      continue;
    }
    if (value.type !== 'response_item') continue;
    const event = itemEvent(line, payload);
    if (event !== undefined) events.push(event);
  }
  return events;
}

/**
 * The whole rollout as the user saw it: every user prompt and assistant text from the start, each
 * compaction summary where it happened (the history Codex kept after it is not repeated).
 */
export function codexLogEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  const log = new WholeLogBuilder();
  for (const { line, value } of records) {
    const payload = asObject(value.payload);
    const time = isoTime(value.timestamp);
    if (value.type === 'compacted' && payload !== undefined) {
      if (typeof payload.message === 'string' && payload.message !== '') log.checkpoint(line, payload.message, time);
      continue;
    }
    if (value.type !== 'response_item') continue;
    const event = itemEvent(line, payload);
    if (event !== undefined) log.append(event, time);
  }
  return log.events;
}

/** The latest `thread_name` per id of `session_index.jsonl`'s records, for the ids wanted (empty names clear nothing). */
export class CodexThreadNames implements TitleFold {
  private readonly names = new Map<string, { name: string; at: number; line: number }>();

  constructor(private readonly wanted: (id: string) => boolean = () => true) {}

  add({ line, value }: JsonlRecord): void {
    if (typeof value.id !== 'string' || typeof value.thread_name !== 'string' || value.thread_name.trim() === '' || !this.wanted(value.id)) return;
    const at = isoTime(value.updated_at) ?? -Infinity;
    const previous = this.names.get(value.id);
    // The latest by updated_at; equal times (or none): the later line.
    if (previous === undefined || at > previous.at || (at === previous.at && line > previous.line)) this.names.set(value.id, { name: value.thread_name, at, line });
  }

  titles(): Map<string, string> {
    return new Map([...this.names].map(([id, { name }]) => [id, name]));
  }
}

/** The latest `thread_name` per id of a `session_index.jsonl` text (empty names clear nothing). */
export function codexThreadNames(text: string): Map<string, string> {
  const names = new CodexThreadNames();
  for (const record of parseJsonl(text)) names.add(record);
  return names.titles();
}

/** Codex's listing facts, folded: the same as {@link codexSessionInfo} of the whole file. */
export class CodexInfoFold extends JsonlFold {
  id: string | undefined;
  cwd: string | undefined;
  createdAt: number | undefined;
  firstPrompt: string | undefined;
  records = false;

  constructor(readonly file: string) {
    super();
  }

  protected apply(value: Record<string, unknown>): void {
    this.records = true;
    const payload = asObject(value.payload);
    if (value.type === 'session_meta' && payload !== undefined) {
      if (typeof payload.id === 'string' && payload.id !== '') this.id = payload.id;
      if (typeof payload.cwd === 'string' && payload.cwd !== '') this.cwd ??= payload.cwd;
      this.createdAt ??= isoTime(payload.timestamp) ?? isoTime(value.timestamp);
    }
    if (this.firstPrompt === undefined && value.type === 'response_item') {
      const prompt = codexUserPrompt(payload);
      if (prompt !== undefined) this.firstPrompt = promptLabel(prompt);
    }
  }

  clone(): CodexInfoFold {
    return Object.assign(new CodexInfoFold(this.file), this);
  }

  /** The id: the latest `session_meta`'s, else the file name's. */
  get sessionId(): string | undefined {
    return this.id ?? codexRolloutName(this.file)?.id;
  }
}

/** Codex's format adapter. */
export const codexFormat: FormatAdapter = {
  agent: 'codex',
  // sessions/YYYY/MM/DD/rollout-*.jsonl, and `.jsonl.zst` (idle rollouts recent versions rewrite).
  base: foreignAgentInfo('codex').sessionsFolder,
  leafDepth: 3,
  isSessionFile: (name) => codexRolloutName(name) !== undefined,
  titleIndex: { file: 'session_index.jsonl', titles: codexThreadNames, newFold: (wanted) => new CodexThreadNames(wanted) },
  summarize(file, text, mtimeMs) {
    const records = parseJsonl(text);
    if (records.length === 0) return undefined;
    const info = codexSessionInfo(records, file);
    if (info === undefined) return undefined;
    return { id: info.id, ...(info.cwd === undefined ? {} : { cwd: info.cwd }), createdAt: info.createdAt ?? mtimeMs, ...(info.firstPrompt === undefined ? {} : { title: info.firstPrompt }) };
  },
  newFold: (file) => new CodexInfoFold(file),
  finish(fold, file, mtimeMs) {
    const info = fold as CodexInfoFold;
    const id = info.sessionId;
    if (!info.records || id === undefined) return undefined;
    const createdAt = info.createdAt ?? codexRolloutName(file)?.createdAt ?? mtimeMs;
    return { id, ...(info.cwd === undefined ? {} : { cwd: info.cwd }), createdAt, ...(info.firstPrompt === undefined ? {} : { title: info.firstPrompt }) };
  },
  surface: codexSurfaceEvents,
  log: codexLogEvents,
};
