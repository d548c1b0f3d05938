import { decodeSessionMention, scanSessionMentions, type SessionReferenceError } from '@dsh-session-ls/shared';

/** A mention found in a document: its span (UTF-16 offsets), and its session id or why it cannot be decoded. */
export type FoundMention =
  | { start: number; end: number; label?: string; sessionId: string; error?: undefined }
  | { start: number; end: number; label?: string; sessionId?: undefined; error: SessionReferenceError };

function found(token: ReturnType<typeof decodeSessionMention>): FoundMention {
  const base = { start: token.start, end: token.end, ...(token.label !== undefined ? { label: token.label } : {}) };
  return token.error ? { ...base, error: token.error } : { ...base, sessionId: token.sessionId! };
}

/** Every mention in a text, as dsh's grammar finds them, in order. */
export function mentionsIn(text: string): FoundMention[] {
  return [...scanSessionMentions(text)].map((token) => found(decodeSessionMention(token)));
}

/**
 * The mention under an offset: one whose span contains it, counting the position just after its
 * last character (where the cursor sits after typing or inserting it). Undefined when none.
 */
export function mentionAtOffset(text: string, offset: number): FoundMention | undefined {
  for (const token of scanSessionMentions(text)) {
    if (token.start > offset) return undefined;
    if (offset <= token.end) return found(decodeSessionMention(token));
  }
  return undefined;
}
