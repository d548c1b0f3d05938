import path from 'node:path';
import type { SessionEventRecord } from '../../resolver/sessionStore';
import { foreignAgentInfo } from '@dsh-session-ls/shared';
import type { FormatAdapter } from './adapter';
import { JsonlFold } from './lineFold';
import { WholeLogBuilder, asObject, assistantEvent, blockTexts, checkpointEvent, isoTime, parseJsonl, promptLabel, userEvent, type JsonlRecord } from './records';

/**
 * Claude Code's transcripts, read-only: `<home>/projects/<cwd, every non-alphanumeric character as "-">/<uuid>.jsonl`.
 * The format is undocumented and changes between releases: every field is checked, unknown record
 * types are skipped. What we rely on (seen with Claude Code 2.1.197):
 * - `user` records (`message.content` a string or blocks); tool results are `user` records with
 *   `toolUseResult`; `isMeta` marks injected context; slash commands echo as `<command-name>…` texts;
 * - `assistant` records, one per content block, sharing `message.id`; `model: "<synthetic>"` for
 *   replies Claude makes up itself;
 * - `system` with subtype `compact_boundary`, then a `user` record with `isCompactSummary: true`;
 * - `custom-title` (`customTitle`, from `-n NAME` or `/rename`), `ai-title`/`summary` records.
 */

/** What a listing needs from one transcript. */
export interface ClaudeSessionInfo {
  id: string;
  cwd?: string;
  createdAt?: number;
  title?: string;
}

// Echoes of slash commands and local shell commands: not something the user asked the model.
const LOCAL_COMMAND_ECHO = /^\s*<(command-name|command-message|command-args|local-command-[a-z-]+|bash-input|bash-stdout|bash-stderr)>/;

/** The text of a direct user prompt, or undefined for anything else. */
export function claudeDirectPrompt(record: Record<string, unknown>): string | undefined {
  if (record.type !== 'user' || record.isMeta === true || record.isCompactSummary === true || record.isSidechain === true) return undefined;
  if (record.toolUseResult !== undefined) return undefined;
  const message = asObject(record.message);
  if (message === undefined) return undefined;
  const content = message.content;
  if (Array.isArray(content) && content.some((block) => asObject(block)?.type === 'tool_result')) return undefined;
  const text = blockTexts(content, ['text']).join('\n');
  if (text === '' || LOCAL_COMMAND_ECHO.test(text)) return undefined;
  return text;
}

/** The session id of a transcript file: its name without `.jsonl`. */
export function claudeSessionIdOfFile(file: string): string {
  return path.basename(file, '.jsonl');
}

/** Listing facts of one transcript's records. */
export function claudeSessionInfo(records: readonly JsonlRecord[], id: string): ClaudeSessionInfo {
  let cwd: string | undefined;
  let createdAt: number | undefined;
  let customTitle: string | undefined;
  let aiTitle: string | undefined;
  let firstPrompt: string | undefined;
  for (const { value } of records) {
    if (cwd === undefined && typeof value.cwd === 'string' && value.cwd !== '') cwd = value.cwd;
    createdAt ??= isoTime(value.timestamp);
    if (value.type === 'custom-title' && typeof value.customTitle === 'string' && value.customTitle.trim() !== '') customTitle = value.customTitle;
    if (value.type === 'ai-title' && typeof value.aiTitle === 'string' && value.aiTitle.trim() !== '') aiTitle = value.aiTitle;
    if (value.type === 'summary' && typeof value.summary === 'string' && value.summary.trim() !== '') aiTitle = value.summary;
    if (firstPrompt === undefined) {
      const prompt = claudeDirectPrompt(value);
      if (prompt !== undefined) firstPrompt = promptLabel(prompt);
    }
  }
  const title = customTitle ?? aiTitle ?? firstPrompt;
  return { id, ...(cwd === undefined ? {} : { cwd }), ...(createdAt === undefined ? {} : { createdAt }), ...(title === undefined ? {} : { title }) };
}

/** One step of a transcript's projection, in order: a user or assistant event, or a compaction summary. */
type ClaudeStep =
  | { kind: 'event'; event: SessionEventRecord; time: number | undefined }
  | { kind: 'checkpoint'; line: number; text: string; time: number | undefined };

/**
 * The projection of records pushed in order: direct prompts, assistant text (consecutive records of
 * one assistant message joined, timed by the first) and compaction summaries; tool results,
 * attachments, metadata and unknown records are not part of it.
 */
class ClaudeStepMachine {
  private open: { id: unknown; texts: string[]; seq: number; time: number | undefined } | undefined;

  /** The steps `record` completes, in order. */
  push({ line, value }: JsonlRecord): ClaudeStep[] {
    const time = isoTime(value.timestamp);
    if (value.type === 'assistant' && value.isSidechain !== true) {
      const message = asObject(value.message);
      if (message === undefined || message.model === '<synthetic>') return [];
      const steps: ClaudeStep[] = [];
      if (this.open === undefined || message.id === undefined || this.open.id !== message.id) {
        steps.push(...this.close());
        this.open = { id: message.id, texts: [], seq: line, time };
      }
      this.open.texts.push(...blockTexts(message.content, ['text']));
      this.open.seq = line;
      return steps;
    }
    if (value.type === 'user' && value.isCompactSummary === true) {
      const text = blockTexts(asObject(value.message)?.content, ['text']).join('\n');
      const steps = this.close();
      if (text !== '') steps.push({ kind: 'checkpoint', line, text, time });
      return steps;
    }
    const prompt = claudeDirectPrompt(value);
    if (prompt === undefined) return [];
    return [...this.close(), { kind: 'event', event: userEvent(line, prompt), time }];
  }

  /** The assistant message still open, as its step (none when it holds no text). */
  close(): ClaudeStep[] {
    const open = this.open;
    this.open = undefined;
    return open !== undefined && open.texts.length > 0 ? [{ kind: 'event', event: assistantEvent(open.seq, open.texts), time: open.time }] : [];
  }
}

/** The steps of `records`, in order (see {@link ClaudeStepMachine}). */
function* claudeSteps(records: readonly JsonlRecord[]): Generator<ClaudeStep> {
  const machine = new ClaudeStepMachine();
  for (const record of records) yield* machine.push(record);
  yield* machine.close();
}

/**
 * The current surface of one transcript: what follows the last compaction (its summary as a
 * checkpoint), direct prompts and assistant text. One pass: a compaction boundary starts the
 * surface again (each record is read once).
 */
export function claudeSurfaceEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  let machine = new ClaudeStepMachine();
  let steps: ClaudeStep[] = [];
  for (const { line, value } of records) {
    if (value.type === 'system' && value.subtype === 'compact_boundary') {
      machine = new ClaudeStepMachine();
      steps = [];
      continue;
    }
    steps.push(...machine.push({ line, value }));
  }
  steps.push(...machine.close());
  return steps.map((step) => (step.kind === 'event' ? step.event : checkpointEvent(step.line, step.text)));
}

/**
 * The whole transcript as the user saw it: every direct prompt and assistant text from the start,
 * each compaction summary where it happened (replacing what came before it for the model).
 */
export function claudeLogEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  const log = new WholeLogBuilder();
  for (const step of claudeSteps(records)) {
    if (step.kind === 'event') log.append(step.event, step.time);
    else log.checkpoint(step.line, step.text, step.time);
  }
  return log.events;
}

/** Claude Code's listing facts, folded: the same as {@link claudeSessionInfo} of the whole file. */
export class ClaudeInfoFold extends JsonlFold {
  cwd: string | undefined;
  createdAt: number | undefined;
  customTitle: string | undefined;
  aiTitle: string | undefined;
  firstPrompt: string | undefined;
  /** Whether any record was found (a file without one holds no session). */
  records = false;

  protected apply(value: Record<string, unknown>): void {
    this.records = true;
    if (this.cwd === undefined && typeof value.cwd === 'string' && value.cwd !== '') this.cwd = value.cwd;
    this.createdAt ??= isoTime(value.timestamp);
    if (value.type === 'custom-title' && typeof value.customTitle === 'string' && value.customTitle.trim() !== '') this.customTitle = value.customTitle;
    if (value.type === 'ai-title' && typeof value.aiTitle === 'string' && value.aiTitle.trim() !== '') this.aiTitle = value.aiTitle;
    if (value.type === 'summary' && typeof value.summary === 'string' && value.summary.trim() !== '') this.aiTitle = value.summary;
    if (this.firstPrompt === undefined) {
      const prompt = claudeDirectPrompt(value);
      if (prompt !== undefined) this.firstPrompt = promptLabel(prompt);
    }
  }

  clone(): ClaudeInfoFold {
    return Object.assign(new ClaudeInfoFold(), this);
  }

  get title(): string | undefined {
    return this.customTitle ?? this.aiTitle ?? this.firstPrompt;
  }
}

/** Claude Code's format adapter. */
export const claudeFormat: FormatAdapter = {
  agent: 'claude-code',
  base: foreignAgentInfo('claude-code').sessionsFolder,
  leafDepth: 1,
  isSessionFile: (name) => name.endsWith('.jsonl'),
  summarize(file, text, mtimeMs) {
    const records = parseJsonl(text);
    if (records.length === 0) return undefined;
    const info = claudeSessionInfo(records, claudeSessionIdOfFile(file));
    return { id: info.id, ...(info.cwd === undefined ? {} : { cwd: info.cwd }), createdAt: info.createdAt ?? mtimeMs, ...(info.title === undefined ? {} : { title: info.title }) };
  },
  newFold: () => new ClaudeInfoFold(),
  finish(fold, file, mtimeMs) {
    const info = fold as ClaudeInfoFold;
    if (!info.records) return undefined;
    const title = info.title;
    return { id: claudeSessionIdOfFile(file), ...(info.cwd === undefined ? {} : { cwd: info.cwd }), createdAt: info.createdAt ?? mtimeMs, ...(title === undefined ? {} : { title }) };
  },
  surface: claudeSurfaceEvents,
  log: claudeLogEvents,
};
