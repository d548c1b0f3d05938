import { decodeSessionMention, scanAgentSessionMentions, type ForeignAgent, type SessionReferenceError } from '@dsh-session-ls/shared';

/**
 * A mention found in a document: its span (UTF-16 offsets), its session id or why it cannot be
 * decoded, and (only for another agent's mention, in that agent's scheme) its agent.
 */
export type FoundMention =
  | { start: number; end: number; label?: string; sessionId: string; error?: undefined; agent?: ForeignAgent }
  | { start: number; end: number; label?: string; sessionId?: undefined; error: SessionReferenceError; agent?: ForeignAgent };

function found(token: ReturnType<typeof decodeSessionMention>): FoundMention {
  const base = {
    start: token.start,
    end: token.end,
    ...(token.label !== undefined ? { label: token.label } : {}),
    ...(token.agent !== undefined ? { agent: token.agent } : {}),
  };
  return token.error ? { ...base, error: token.error } : { ...base, sessionId: token.sessionId! };
}

/**
 * Every mention in a text, in order: dsh's exactly as dsh's grammar finds them, and other agents'
 * mentions that do not overlap one of dsh's (the server resolves those when their agent is enabled).
 */
export function mentionsIn(text: string): FoundMention[] {
  return scanAgentSessionMentions(text).map((token) => found(decodeSessionMention(token)));
}

/**
 * The mention under an offset: one whose span contains it, counting the position just after its
 * last character (where the cursor sits after typing or inserting it). Undefined when none.
 */
export function mentionAtOffset(text: string, offset: number): FoundMention | undefined {
  return mentionsIn(text).find((mention) => mention.start <= offset && offset <= mention.end);
}
