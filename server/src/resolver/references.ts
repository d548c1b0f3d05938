import { FOREIGN_SESSION_URI_PREFIXES, SessionReferenceError, foreignAgentChoices, type ForeignAgent, type SessionId } from '@dsh-session-ls/shared';

/** One source to read: the authoritative id, the label carried into the snapshot, and (only for another agent's session) its agent. */
export interface NormalizedReference {
  sessionId: SessionId;
  label: string;
  agent?: ForeignAgent;
}

/**
 * Normalise `prepare`'s references (session-reference.md §7.2): validate each entry, refuse the target
 * (even as a duplicate), keep the first of each id with its label (default: the id), and only then
 * enforce `maxReferences`.
 */
export function normalizeReferences(
  references: unknown,
  targetSessionId: SessionId | undefined,
  maxReferences: number,
): NormalizedReference[] {
  if (!Array.isArray(references)) {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'session references must be an array');
  }
  const seen = new Set<SessionId>();
  const seenForeign = new Set<string>();
  const normalized: NormalizedReference[] = [];
  for (const entry of references as unknown[]) {
    if (typeof entry !== 'object' || entry === null) {
      throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'session reference must be an object');
    }
    const { sessionId, label, agent } = entry as { sessionId?: unknown; label?: unknown; agent?: unknown };
    if (typeof sessionId !== 'string' || (label !== undefined && typeof label !== 'string')) {
      throw new SessionReferenceError(
        'SESSION_REFERENCE_INVALID_REFERENCE',
        'session reference must contain a string sessionId and optional string label',
      );
    }
    // Our extension: `agent` names another agent's session (absent: dsh's, checked exactly as dsh does).
    if (agent !== undefined && (typeof agent !== 'string' || !Object.hasOwn(FOREIGN_SESSION_URI_PREFIXES, agent))) {
      throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', `session reference agent must be ${foreignAgentChoices()}`);
    }
    if (agent !== undefined) {
      const key = `${agent}\u0000${sessionId}`;
      if (seenForeign.has(key)) continue;
      seenForeign.add(key);
      normalized.push({ sessionId, label: label ?? sessionId, agent: agent as ForeignAgent });
      continue;
    }
    if (sessionId === targetSessionId) {
      throw new SessionReferenceError(
        'SESSION_REFERENCE_SELF_REFERENCE',
        `session ${JSON.stringify(sessionId)} cannot reference itself`,
      );
    }
    if (seen.has(sessionId)) continue;
    seen.add(sessionId);
    normalized.push({ sessionId, label: label ?? sessionId });
  }
  if (normalized.length > maxReferences) {
    throw new SessionReferenceError(
      'SESSION_REFERENCE_TOO_MANY',
      `a message may reference at most ${maxReferences} sessions`,
    );
  }
  return normalized;
}
