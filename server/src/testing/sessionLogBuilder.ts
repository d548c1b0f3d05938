import type { ContentBlock } from '@dsh-session-ls/shared';
import type { SessionEventRecord } from '../resolver/sessionStore';

type Content = string | ContentBlock[];

const blocks = (content: Content): ContentBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;

/**
 * Writes a dsh-shaped session log for tests, numbering seqs from 0; each method returns the seq it
 * used, so later events (replacements) can cite it.
 */
export class SessionLogBuilder {
  private readonly log: SessionEventRecord[] = [];

  /** Any event, e.g. a log-only one; surface events need a `surfaceOp`. */
  event(type: string, data: unknown, extra: Partial<Pick<SessionEventRecord, 'surfaceOp' | 'sourceEventSeqs'>> = {}): number {
    const seq = this.log.length;
    this.log.push({ type, seq, time: 1_700_000_000_000 + seq, data, ...extra });
    return seq;
  }

  /** A `user/message` appended to the surface; the default source is a direct prompt `{kind:'user'}`. */
  user(content: Content, source: Record<string, unknown> = { kind: 'user' }): number {
    return this.event(
      'user/message',
      { id: `u-${this.log.length}`, role: 'user', content: blocks(content), source },
      { surfaceOp: 'append' },
    );
  }

  /** An `assistant/message` appended to the surface. */
  assistant(content: Content): number {
    return this.event(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        message: { id: `a-${this.log.length}`, role: 'assistant', content: blocks(content), source: { kind: 'model', provider: 'p', model: 'm' } },
      },
      { surfaceOp: 'append' },
    );
  }

  /** A `tool/result` appended to the surface. */
  toolResult(callId: string, text: string): number {
    return this.event(
      'tool/result',
      {
        turn: 1,
        step: 1,
        message: {
          id: `t-${this.log.length}`,
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError: false }],
          source: { kind: 'tool', callId },
        },
      },
      { surfaceOp: 'append' },
    );
  }

  /** A compaction checkpoint replacing the surface nodes from seq `start` through seq `end`. */
  checkpoint(content: Content, start: number, end: number): number {
    return this.event(
      'user/message',
      {
        id: `c-${this.log.length}`,
        role: 'user',
        content: blocks(content),
        source: { kind: 'plugin', plugin: 'compact', compactionId: `c-${this.log.length}` },
      },
      { surfaceOp: { op: 'replace', start, end } },
    );
  }

  /** A `session/title` event (log-only). */
  title(title: string): number {
    return this.event('session/title', { title, messageSeqs: [], source: { kind: 'user' } });
  }

  /** The events written so far. */
  events(): SessionEventRecord[] {
    return [...this.log];
  }
}
