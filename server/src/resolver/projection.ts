import type { ProjectedMessage, ReferencedSessionData } from '@dsh-session-ls/shared';
import type { SessionEventRecord, SessionSurface } from './sessionStore';

/** One source projected for the model: its data object and, per conversation entry, whether it is a compaction checkpoint. */
export interface ProjectedSession {
  data: ReferencedSessionData;
  /** Parallel to `data.conversation`: true for a compaction checkpoint (never dropped by the budget). */
  checkpoints: boolean[];
}

/** True for dsh's canonical compaction-checkpoint source `{kind:'plugin', plugin:'compact', …}`. */
export function isCompactionCheckpointSource(source: unknown): boolean {
  if (typeof source !== 'object' || source === null) return false;
  const { kind, plugin } = source as { kind?: unknown; plugin?: unknown };
  return kind === 'plugin' && plugin === 'compact';
}

/** A message's readable text: its `text` blocks joined with `\n`; anything else in `content` is ignored. */
export function messageText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const block of content) {
    if (typeof block !== 'object' || block === null) continue;
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (type === 'text' && typeof text === 'string') texts.push(text);
  }
  return texts.join('\n');
}

interface ProjectedEntry {
  message: ProjectedMessage;
  checkpoint: boolean;
}

// Session content is untrusted: every field is checked before use, and a malformed event is simply not projected.
function projectEvent(event: SessionEventRecord): ProjectedEntry | undefined {
  const data: unknown = event.data;
  if (typeof data !== 'object' || data === null) return undefined;
  if (event.type === 'user/message') {
    const { source, content } = data as { source?: unknown; content?: unknown };
    const checkpoint = isCompactionCheckpointSource(source);
    // Only direct prompts and checkpoints: plugin context and earlier session-reference snapshots never leak or nest.
    const direct = typeof source === 'object' && source !== null && (source as { kind?: unknown }).kind === 'user';
    if (!checkpoint && !direct) return undefined;
    return { message: { role: 'user', text: messageText(content) }, checkpoint };
  }
  if (event.type === 'assistant/message') {
    const message: unknown = (data as { message?: unknown }).message;
    if (typeof message !== 'object' || message === null) return undefined;
    return { message: { role: 'assistant', text: messageText((message as { content?: unknown }).content) }, checkpoint: false };
  }
  // tool/result and anything else on the surface is dropped.
  return undefined;
}

/**
 * Project one source's current surface (session-reference.md §8): direct user prompts, compaction
 * checkpoints (flagged) and assistant text, each as its text blocks joined with `\n`; empty texts dropped.
 */
export function projectSessionSurface(surface: SessionSurface, label: string): ProjectedSession {
  const conversation: ProjectedMessage[] = [];
  const checkpoints: boolean[] = [];
  for (const event of surface.events) {
    const entry = projectEvent(event);
    if (entry === undefined || entry.message.text === '') continue;
    conversation.push(entry.message);
    checkpoints.push(entry.checkpoint);
  }
  const agent = surface.header.agent;
  return {
    data: {
      // Only another agent's snapshot names its agent, first: dsh's bytes stay exactly dsh's.
      ...(agent === undefined ? {} : { agent }),
      sessionId: surface.header.id,
      label,
      cwd: surface.header.cwd ?? null,
      capturedThroughSeq: surface.capturedThroughSeq,
      conversation,
    },
    checkpoints,
  };
}
