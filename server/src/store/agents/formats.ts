import type { StoredSessionSummary } from '../../resolver/sessionStore';
import { readRegularFile } from '../regularFile';
import type { SessionEventRecord, SessionSurface } from '../../resolver/sessionStore';
import { claudeLogEvents, claudeSessionIdOfFile, claudeSessionInfo, claudeSurfaceEvents } from './claudeCode';
import { codexLogEvents, codexRolloutName, codexSessionInfo, codexSurfaceEvents } from './codex';
import { decodeZstdFile } from './compressed';
import { parseJsonl, type JsonlRecord } from './records';
import { ClaudeInfoFold, CodexInfoFold, type LineFold } from './skim';

/** Largest transcript read whole (a bigger one is not listed, and not read). */
export const MAX_FOREIGN_FILE_BYTES = 64 * 1024 * 1024;

/** One agent's format: where its session files are, and how one is read. */
export interface AgentFormat {
  /** The folder under the agent's home that holds the session folders (`projects`, `sessions`). */
  readonly base: string;
  /** Depth below `base` of the folders that hold session files: 1 for `projects/<p>`, 3 for `sessions/YYYY/MM/DD`. */
  readonly leafDepth: number;
  /** Whether a file name in a leaf folder is a session file. */
  isSessionFile(name: string): boolean;
  /**
   * Listing facts of a file (title before any index lookup), or undefined when it is no session,
   * from a parse of every line: the reference the skimming fold is held to.
   */
  summarize(file: string, text: string, mtimeMs: number): Omit<StoredSessionSummary, 'agent'> | undefined;
  /** A fold of a file's lines from its start (see `skim.ts`). */
  newFold(file: string): LineFold;
  /** The listing facts a fold (of this format, from `newFold`) found; the same as `summarize` of the same bytes. */
  finish(fold: LineFold, file: string, mtimeMs: number): Omit<StoredSessionSummary, 'agent'> | undefined;
  surface(records: readonly JsonlRecord[]): SessionSurface['events'];
  /** The whole session as the user saw it. */
  log(records: readonly JsonlRecord[]): SessionEventRecord[];
}

export const claudeFormat: AgentFormat = {
  base: 'projects',
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

export const codexFormat: AgentFormat = {
  // sessions/YYYY/MM/DD/rollout-*.jsonl, and `.jsonl.zst` (idle rollouts recent versions rewrite).
  base: 'sessions',
  leafDepth: 3,
  isSessionFile: (name) => codexRolloutName(name) !== undefined,
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

/** A session file's text; a `.zst` one decoded whole (`PlaintextTooLarge` past the read limit). */
export async function readSessionText(file: string, signal?: AbortSignal): Promise<string> {
  if (!file.endsWith('.zst')) return readRegularFile(file, { encoding: 'utf8', ...(signal === undefined ? {} : { signal }) });
  return decodeZstdFile(await readRegularFile(file, signal === undefined ? {} : { signal }), MAX_FOREIGN_FILE_BYTES);
}
