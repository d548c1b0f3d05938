import {
  FOREIGN_SESSION_URI_PREFIXES,
  SessionReferenceError,
  foreignAgentChoices,
  type ForeignAgent,
  type SessionCommandResult,
  type SessionCommands,
  type TranscriptCommandArgument,
} from '@dsh-session-ls/shared';
import {
  isCompactionCheckpointSource,
  messageText,
  raceWithSignal,
  SessionReadError,
  throwIfCancelled,
  type SessionEventRecord,
  type StoredSessionHeader,
} from '../resolver';
import { optionalString, requiredString, type CommandArgument } from './commandArguments';
import { fencedText } from './markdownBlocks';
import { escapeMarkdownText } from './sessionPreview';
import type { SessionLogs, SessionServices } from './services';

/** A session's events for a transcript: the whole log, or (when only that can be read) its current surface. */
export interface SessionLog {
  header: StoredSessionHeader;
  /** When `whole`: in log order, at least every surface-type event (the only ones a transcript reads); else the surface, in surface order. */
  events: readonly SessionEventRecord[];
  /** True when `events` is the whole log, so what the user saw (append-origin events) can be told apart. */
  whole: boolean;
  /** The latest title, when the session has one. */
  title?: string;
}

const SURFACE_TYPES = new Set(['user/message', 'assistant/message', 'tool/result']);

function timestamp(time: unknown): string {
  if (typeof time !== 'number') return '';
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? '' : ` · ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * Tracks the surface fold while walking the whole log, to count how many of the messages already shown
 * a compaction checkpoint replaced (dsh-session-store.md §6.1); undefined when the log does not fold.
 */
class ReplacementCounter {
  private readonly nodes: number[] = [];
  private broken = false;

  append(seq: number): void {
    this.nodes.push(seq);
  }

  /** Replace the nodes from `start` through `end` (surface order) by `seq`; returns the replaced seqs. */
  replace(seq: number, start: unknown, end: unknown): number[] | undefined {
    const from = this.nodes.indexOf(start as number);
    const to = this.nodes.indexOf(end as number);
    if (this.broken || from < 0 || to < from) {
      this.broken = true;
      return undefined;
    }
    return this.nodes.splice(from, to - from + 1, seq);
  }
}

/**
 * A session as the user saw it, as Markdown (dsh-session-store.md §6.2): from the whole log, the
 * append-origin user prompts and assistant text in log order, with a note where a compaction checkpoint
 * replaced earlier messages for the model; from a surface alone, the current surface. Session text is
 * display-safe, and fenced or escaped so it cannot become Markdown links, HTML or commands.
 */
export function sessionTranscriptMarkdown(log: SessionLog): string {
  const { header } = log;
  const out: string[] = [];
  const counter = new ReplacementCounter();
  const shown = new Set<number>();
  let messages = 0;
  for (const event of log.events) {
    const op = event.surfaceOp;
    if (!SURFACE_TYPES.has(event.type) || op === undefined) continue;
    const replaced = op === 'append' ? (counter.append(event.seq), undefined) : counter.replace(event.seq, op.start, op.end);
    const data: unknown = event.data;
    if (typeof data !== 'object' || data === null) continue;
    if (event.type === 'user/message') {
      const { source, content } = data as { source?: unknown; content?: unknown };
      if (isCompactionCheckpointSource(source)) {
        const count = replaced?.filter((seq) => shown.has(seq)).length;
        const what = !log.whole
          ? 'earlier messages were replaced by this summary and are no longer part of the session’s surface'
          : count === undefined
            ? 'from here on the model sees this summary instead of earlier messages'
            : `from here on the model sees this summary instead of the ${plural(count, 'earlier message')} it replaced`;
        out.push(`> **Compaction checkpoint${timestamp(event.time)}**: ${what}.`, '', fencedText(messageText(content)), '');
        shown.add(event.seq);
        continue;
      }
      // What the user saw: their own prompts as appended (injected context and replacements are model-only).
      if (op !== 'append' || (source as { kind?: unknown } | null)?.kind !== 'user') continue;
      const text = messageText(content);
      if (text === '') continue;
      out.push(`### User${timestamp(event.time)}`, '', fencedText(text), '');
    } else if (event.type === 'assistant/message') {
      const message: unknown = (data as { message?: unknown }).message;
      if (op !== 'append' || typeof message !== 'object' || message === null) continue;
      const text = messageText((message as { content?: unknown }).content);
      if (text === '') continue;
      const interrupted = (data as { interrupted?: unknown }).interrupted === true ? ' (interrupted)' : '';
      out.push(`### Assistant${interrupted}${timestamp(event.time)}`, '', fencedText(text), '');
    } else {
      continue;
    }
    shown.add(event.seq);
    messages++;
  }
  const created = new Date(header.createdAt);
  const lines = [
    `# ${escapeMarkdownText(log.title ?? header.id)}`,
    '',
    `- session: ${escapeMarkdownText(header.id)}`,
    ...(header.agent === undefined ? [] : [`- agent: ${header.agent} (read-only)`]),
    `- cwd: ${header.cwd === undefined ? '(no cwd)' : escapeMarkdownText(header.cwd)}`,
    `- created: ${Number.isNaN(created.getTime()) ? String(header.createdAt) : created.toISOString().slice(0, 16).replace('T', ' ') + ' UTC'}`,
    `- ${plural(messages, 'message')}${log.whole ? ', as the user saw them' : ' on the current surface (the full log could not be read)'}`,
    '',
    '---',
    '',
  ];
  if (out.length === 0) lines.push('_No messages yet._');
  return [...lines, ...out].join('\n').trimEnd() + '\n';
}

function readFailed(error: unknown): SessionReferenceError {
  const reason = error instanceof Error ? error.message : String(error);
  return new SessionReferenceError('SESSION_REFERENCE_READ_FAILED', `failed to read referenced session: ${reason}`, { cause: error });
}

/** The current surface as a `SessionLog`, with the title from the listing (for stores that cannot give the whole log). */
async function surfaceLog(services: SessionServices, sessionId: string, signal?: AbortSignal): Promise<SessionLog> {
  const surface = await raceWithSignal(services.sessions.readSurface(sessionId, signal), signal);
  const listing = await raceWithSignal(services.sessions.listSessions(signal), signal).catch(() => []);
  const title = listing.find((summary) => summary.id === sessionId)?.title;
  return { header: surface.header, events: surface.events, whole: false, ...(title === undefined ? {} : { title }) };
}

/** Another agent's whole session, through the store's `readAgentLog` (only an enabled agent's store has it). */
async function agentLog(services: SessionServices, sessionId: string, agent: ForeignAgent, signal?: AbortSignal): Promise<SessionLog> {
  const { sessions } = services;
  if (sessions.readAgentLog === undefined) {
    throw new SessionReadError('not-found', `${agent} session ${JSON.stringify(sessionId)} not found: ${agent} is not among the enabled agents`);
  }
  const log = await raceWithSignal(sessions.readAgentLog(sessionId, agent, signal), signal);
  return { header: log.header, events: log.events, whole: true, ...(log.title === undefined ? {} : { title: log.title }) };
}

function agentArgument(argument: CommandArgument<TranscriptCommandArgument>): ForeignAgent | undefined {
  const agent = optionalString(argument, 'agent');
  if (agent !== undefined && !Object.hasOwn(FOREIGN_SESSION_URI_PREFIXES, agent)) {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', `agent must be ${foreignAgentChoices()}`);
  }
  return agent as ForeignAgent | undefined;
}

/** A dsh session's whole log, through the services' `sessionLogs`. */
async function wholeLog(sessionLogs: SessionLogs, sessionId: string, signal?: AbortSignal): Promise<SessionLog> {
  const log = await raceWithSignal(sessionLogs.read(sessionId, signal), signal);
  return { header: log.header, events: log.events, whole: true, ...(log.title === undefined ? {} : { title: log.title }) };
}

/**
 * `dshSession.transcript {sessionId, agent?}`: the session as the user saw it, as Markdown. Reads the whole
 * log from the services' `sessionLogs` when they have them, else the current surface; `agent` names another
 * agent's session, read whole from its store when that agent is enabled. A session that cannot be read is
 * READ_FAILED.
 */
export async function transcriptCommand(
  argument: CommandArgument<TranscriptCommandArgument>,
  services: SessionServices,
  signal?: AbortSignal,
): Promise<SessionCommandResult<typeof SessionCommands.transcript>> {
  const sessionId = requiredString(argument, 'sessionId');
  const agent = agentArgument(argument);
  throwIfCancelled(signal);
  let log: SessionLog;
  try {
    if (agent !== undefined) log = await agentLog(services, sessionId, agent, signal);
    else log = services.sessionLogs === undefined ? await surfaceLog(services, sessionId, signal) : await wholeLog(services.sessionLogs, sessionId, signal);
  } catch (error) {
    throwIfCancelled(signal);
    throw readFailed(error);
  }
  return sessionTranscriptMarkdown(log);
}
