import { SessionReferenceError } from './errors';

/** Limits of the session-reference subsystem. */
export interface SessionReferenceConfig {
  /** At most this many distinct sources per message (1..3). */
  maxReferences: number;
  /** Default number of candidates returned. */
  candidateLimit: number;
  /** Budget, in UTF-8 bytes, for ONE source's serialised data. */
  maxReferenceBytes: number;
}

/** dsh's defaults. */
export const DEFAULT_SESSION_REFERENCE_CONFIG: Readonly<SessionReferenceConfig> = Object.freeze({
  maxReferences: 3,
  candidateLimit: 50,
  maxReferenceBytes: 65536,
});

/** dsh refuses more than this many references per message, whatever the config says. */
export const MAX_REFERENCES_CEILING = 3;

/** The config keys, in validation order. */
export const SESSION_REFERENCE_CONFIG_KEYS = ['maxReferences', 'candidateLimit', 'maxReferenceBytes'] as const;

/** True for a positive safe integer (the rule for every config field and for a candidate limit). */
export function isPositiveSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/**
 * Fill defaults and validate, in the order maxReferences, candidateLimit, maxReferenceBytes;
 * throws INVALID_CONFIG with dsh's messages.
 */
export function resolveSessionReferenceConfig(partial: Partial<SessionReferenceConfig> = {}): SessionReferenceConfig {
  if (typeof partial !== 'object' || partial === null) {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_CONFIG', 'session-reference: config must be an object');
  }
  const resolved = { ...DEFAULT_SESSION_REFERENCE_CONFIG };
  for (const key of SESSION_REFERENCE_CONFIG_KEYS) {
    const value = (partial as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (!isPositiveSafeInteger(value)) {
      throw new SessionReferenceError(
        'SESSION_REFERENCE_INVALID_CONFIG',
        `session-reference: ${key} must be a positive safe integer`,
      );
    }
    if (key === 'maxReferences' && value > MAX_REFERENCES_CEILING) {
      throw new SessionReferenceError(
        'SESSION_REFERENCE_INVALID_CONFIG',
        `session-reference: maxReferences must not exceed ${MAX_REFERENCES_CEILING}`,
      );
    }
    resolved[key] = value;
  }
  return resolved;
}
