import path from 'node:path';
import type { SessionEventRecord } from '../../resolver/sessionStore';
import { asObject, assistantEvent, blockTexts, checkpointEvent, isoTime, promptLabel, userEvent, type JsonlRecord } from './records';

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
function directPrompt(record: Record<string, unknown>): string | undefined {
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
      const prompt = directPrompt(value);
      if (prompt !== undefined) firstPrompt = promptLabel(prompt);
    }
  }
  const title = customTitle ?? aiTitle ?? firstPrompt;
  return { id, ...(cwd === undefined ? {} : { cwd }), ...(createdAt === undefined ? {} : { createdAt }), ...(title === undefined ? {} : { title }) };
}

/**
 * The current surface of one transcript: what follows the last compaction (its summary as a
 * checkpoint), direct prompts and assistant text; consecutive records of one assistant message join.
 */
export function claudeSurfaceEvents(records: readonly JsonlRecord[]): SessionEventRecord[] {
  let from = 0;
  records.forEach(({ value }, index) => {
    if (value.type === 'system' && value.subtype === 'compact_boundary') from = index + 1;
  });
  const events: SessionEventRecord[] = [];
  let openAssistant: { id: unknown; texts: string[]; seq: number } | undefined;
  const flush = (): void => {
    if (openAssistant !== undefined && openAssistant.texts.length > 0) events.push(assistantEvent(openAssistant.seq, openAssistant.texts));
    openAssistant = undefined;
  };
  for (const { line, value } of records.slice(from)) {
    if (value.type === 'assistant' && value.isSidechain !== true) {
      const message = asObject(value.message);
      if (message === undefined || message.model === '<synthetic>') continue;
      if (openAssistant === undefined || message.id === undefined || openAssistant.id !== message.id) {
        flush();
        openAssistant = { id: message.id, texts: [], seq: line };
      }
      openAssistant.texts.push(...blockTexts(message.content, ['text']));
      openAssistant.seq = line;
      continue;
    }
    if (value.type === 'user' && value.isCompactSummary === true) {
      const text = blockTexts(asObject(value.message)?.content, ['text']).join('\n');
      flush();
      if (text !== '') events.push(checkpointEvent(line, text));
      continue;
    }
    const prompt = directPrompt(value);
    if (prompt !== undefined) {
      flush();
      events.push(userEvent(line, prompt));
    }
    // Tool results, attachments, metadata and unknown records: not part of the projection.
  }
  flush();
  return events;
}
