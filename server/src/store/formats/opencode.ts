import type { SessionEventRecord } from '../../resolver/sessionStore';
import type { SessionFacts } from './adapter';
import type { DatabaseAdapter, DatabaseReader } from './database';
import { WholeLogBuilder, assistantEvent, checkpointEvent, userEvent } from './records';

/**
 * opencode's sessions, read-only: rows of `<home>/opencode.db` (SQLite, WAL mode while opencode
 * runs). Seen with opencode 1.18.33: `session` (id, directory, title, parent_id for a subagent's
 * session, time_created in ms), `message` (session_id, time_created, `data` JSON: role, parentID,
 * `summary: true` and `finish` on a finished compaction summary, `error`), `part` (message_id,
 * session_id, `data` JSON: `text` parts with `text`, `synthetic`, `ignored`; `compaction` parts
 * on the user message that asked for a compaction, with `tail_start_id` when a tail was kept;
 * `tool`, `reasoning`, `step-*` parts). `opencode session list` shows `session.title`; subagent
 * sessions are not listed. Undocumented: every field is read defensively.
 */

/** One message with the parts that matter here, in opencode's order. */
interface OpencodeMessage {
  seq: number;
  id: string;
  time: number | undefined;
  role: string | undefined;
  parentId: string | undefined;
  /** A finished compaction summary (assistant, `summary`, `finish`, no `error`). */
  completedSummary: boolean;
  texts: string[];
  compaction: { tailStartId: string | undefined } | undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

function listSessions(db: DatabaseReader): SessionFacts[] {
  const facts: SessionFacts[] = [];
  for (const row of db.all('SELECT id, directory, title, time_created FROM session WHERE parent_id IS NULL')) {
    const id = str(row.id);
    const createdAt = num(row.time_created);
    if (id === undefined || createdAt === undefined) continue;
    const cwd = str(row.directory);
    const title = str(row.title);
    facts.push({ id, ...(cwd === undefined ? {} : { cwd }), createdAt, ...(title === undefined ? {} : { title }) });
  }
  return facts;
}

// Fields of a JSON column, NULL where the JSON is damaged (json_extract alone would fail the query).
const field = (column: string, pathText: string): string => `CASE WHEN json_valid(${column}) THEN json_extract(${column}, '${pathText}') END`;

const MESSAGES_SQL =
  `SELECT id, time_created, ${field('data', '$.role')} AS role, ${field('data', '$.parentID')} AS parent, ` +
  `${field('data', '$.summary')} AS summary, ${field('data', '$.finish')} AS finish, ${field('data', '$.error')} IS NOT NULL AS failed ` +
  'FROM message WHERE session_id = ? ORDER BY time_created, id';
// Only the parts a prompt or a summary is made of: tool output (often large) never leaves the database.
const PARTS_SQL =
  `SELECT message_id, ${field('data', '$.type')} AS type, ${field('data', '$.text')} AS text, ${field('data', '$.ignored')} AS ignored, ` +
  `${field('data', '$.tail_start_id')} AS tail FROM part WHERE session_id = ? AND ${field('data', '$.type')} IN ('text', 'compaction') ORDER BY message_id, id`;

/** A session's messages in order, with their text and compaction parts; undefined when there is no such session. */
function readMessages(db: DatabaseReader, sessionId: string): OpencodeMessage[] | undefined {
  if (db.all('SELECT 1 FROM session WHERE id = ?', sessionId).length === 0) return undefined;
  const messages: OpencodeMessage[] = [];
  const byId = new Map<string, OpencodeMessage>();
  for (const row of db.all(MESSAGES_SQL, sessionId)) {
    const id = str(row.id);
    if (id === undefined) continue;
    const message: OpencodeMessage = {
      seq: messages.length + 1,
      id,
      time: num(row.time_created),
      role: str(row.role),
      parentId: str(row.parent),
      completedSummary: row.summary === 1 && str(row.finish) !== undefined && row.failed !== 1,
      texts: [],
      compaction: undefined,
    };
    messages.push(message);
    byId.set(id, message);
  }
  for (const row of db.all(PARTS_SQL, sessionId)) {
    const message = byId.get(String(row.message_id));
    if (message === undefined) continue;
    if (row.type === 'compaction') message.compaction = { tailStartId: str(row.tail) };
    else if (typeof row.text === 'string' && row.text.trim() !== '' && row.ignored !== 1) message.texts.push(row.text);
  }
  return messages;
}

/**
 * What opencode sends the model on resuming, as its history filter keeps it: walking back from the
 * newest message, the first user message with a compaction part whose summary finished ends the
 * history (with a kept tail: at the tail's first message, the compaction and its summary then put
 * before the tail).
 */
function resumedHistory(messages: readonly OpencodeMessage[]): OpencodeMessage[] {
  const kept: OpencodeMessage[] = [];
  const completed = new Set<string>();
  let retain: string | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    kept.push(message);
    if (retain !== undefined) {
      if (message.id === retain) break;
      continue;
    }
    if (message.role === 'user' && completed.has(message.id) && message.compaction !== undefined) {
      if (message.compaction.tailStartId === undefined || message.compaction.tailStartId === message.id) break;
      retain = message.compaction.tailStartId;
      continue;
    }
    if (message.role === 'assistant' && message.completedSummary && message.parentId !== undefined) completed.add(message.parentId);
  }
  kept.reverse();
  let compactionIndex = kept.length - 1;
  while (compactionIndex >= 0 && !(kept[compactionIndex]!.role === 'user' && kept[compactionIndex]!.compaction?.tailStartId !== undefined)) compactionIndex--;
  const compaction = kept[compactionIndex];
  if (compaction === undefined) return kept;
  const summaryIndex = kept.findIndex((message, index) => index > compactionIndex && message.completedSummary && message.parentId === compaction.id);
  const tailIndex = kept.findIndex((message) => message.id === compaction.compaction!.tailStartId);
  if (tailIndex < 0 || tailIndex >= compactionIndex || summaryIndex <= compactionIndex) return kept;
  return [...kept.slice(compactionIndex, summaryIndex + 1), ...kept.slice(tailIndex, compactionIndex), ...kept.slice(summaryIndex + 1)];
}

/** One message as a surface event: a prompt, an answer's text, or a compaction summary as a checkpoint; undefined for the rest. */
function messageEvent(message: OpencodeMessage): SessionEventRecord | undefined {
  if (message.compaction !== undefined || message.texts.length === 0) return undefined;
  if (message.role === 'user') return userEvent(message.seq, message.texts.join('\n'));
  if (message.role !== 'assistant') return undefined;
  return message.completedSummary ? checkpointEvent(message.seq, message.texts.join('\n')) : assistantEvent(message.seq, message.texts);
}

function surfaceEvents(db: DatabaseReader, sessionId: string): SessionEventRecord[] | undefined {
  const messages = readMessages(db, sessionId);
  if (messages === undefined) return undefined;
  return resumedHistory(messages).flatMap((message) => messageEvent(message) ?? []);
}

function logEvents(db: DatabaseReader, sessionId: string): SessionEventRecord[] | undefined {
  const messages = readMessages(db, sessionId);
  if (messages === undefined) return undefined;
  const log = new WholeLogBuilder();
  for (const message of messages) {
    const event = messageEvent(message);
    if (event === undefined) continue;
    if (message.completedSummary) log.checkpoint(message.seq, message.texts.join('\n'), message.time);
    else log.append(event, message.time);
  }
  return log.events;
}

/** opencode's database adapter. */
export const opencodeFormat: DatabaseAdapter = {
  kind: 'database',
  agent: 'opencode',
  file: 'opencode.db',
  list: listSessions,
  surface: surfaceEvents,
  log: logEvents,
};
