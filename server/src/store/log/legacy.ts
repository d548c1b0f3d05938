/**
 * Legacy shapes dsh still upgrades at load, and the ones it refuses (store doc §3.7). A malformed
 * legacy-looking event is an error, never silently passed on.
 */
import { isObjectLike } from './eventRules';

type JsonRecord = Record<string, unknown>;

/** The obsolete vocabulary dsh refuses anywhere in a log, in the order it looks for them. */
export const LEGACY_REFUSALS = ['request/header-delta', 'mode/set', 'request/header-fallback'] as const;

/** One refused legacy vocabulary. */
export type LegacyRefusal = (typeof LEGACY_REFUSALS)[number];

/** Which refused legacy vocabulary an event uses, if any. */
export function legacyRefusalOf(event: JsonRecord): LegacyRefusal | undefined {
  if (event.type === 'request/header-delta') return 'request/header-delta';
  if (event.type === 'mode/set') return 'mode/set';
  if (event.type === 'request/header') {
    // dsh reads `data.reason` unguarded, so a missing/null payload fails here too.
    const data = event.data;
    if (data === null || data === undefined) return 'request/header-fallback';
    if ((data as JsonRecord).reason === 'fallback') return 'request/header-fallback';
  }
  return undefined;
}

/** The wording of a legacy refusal. */
export function legacyRefusalMessage(sessionId: string, refusal: LegacyRefusal, seq: number): string {
  const name = JSON.stringify(sessionId);
  return refusal === 'request/header-fallback'
    ? `session ${name} contains unsupported legacy request/header reason "fallback" at seq ${seq}`
    : `session ${name} contains unsupported legacy ${refusal} event at seq ${seq}`;
}

function isPlainRecord(value: unknown): value is JsonRecord {
  return isObjectLike(value) && !Array.isArray(value);
}

function hasOnlyKeys(record: JsonRecord, required: readonly string[], optional: readonly string[] = []): boolean {
  const allowed = new Set([...required, ...optional]);
  return Object.keys(record).every((key) => allowed.has(key)) && required.every((key) => Object.hasOwn(record, key));
}

function isTurnNumber(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

/** A legacy-looking event that is not a shape dsh can upgrade. */
export class MalformedLegacyEventError extends Error {}

function malformed(sessionId: string, what: string, seq: unknown): MalformedLegacyEventError {
  return new MalformedLegacyEventError(
    `session ${JSON.stringify(sessionId)} contains malformed pre-react-loop ${what} at seq ${String(seq)}`,
  );
}

/** The id dsh mints for a message persisted before messages had ids. */
export function legacyMessageId(sessionId: string, seq: unknown): string {
  return `legacy-message:${sessionId}:${String(seq)}`;
}

function upgradeTurnStart(event: JsonRecord, sessionId: string): JsonRecord {
  const data = event.data;
  if (!isPlainRecord(data) || !Object.hasOwn(data, 'trigger')) return event;
  const trigger = data.trigger;
  if (
    !isTurnNumber(data.turn) ||
    !hasOnlyKeys(data, ['turn', 'trigger']) ||
    !isPlainRecord(trigger) ||
    typeof trigger.kind !== 'string' ||
    trigger.kind.length === 0
  ) {
    throw malformed(sessionId, 'turn/start', event.seq);
  }
  return { ...event, data: { turn: data.turn } };
}

function legacyErrorReason(reason: JsonRecord): JsonRecord | undefined {
  if (!Number.isSafeInteger(reason.step) || (reason.step as number) < 0) return undefined;
  const failure = reason.failure;
  if (
    isPlainRecord(failure) &&
    hasOnlyKeys(reason, ['kind', 'step', 'failure']) &&
    hasOnlyKeys(failure, ['message', 'code'], ['status', 'providerRetryAfterMs', 'requestId']) &&
    typeof failure.message === 'string' &&
    typeof failure.code === 'string' &&
    (failure.status === undefined || typeof failure.status === 'number') &&
    (failure.providerRetryAfterMs === undefined || typeof failure.providerRetryAfterMs === 'number') &&
    (failure.requestId === undefined || typeof failure.requestId === 'string')
  ) {
    return { kind: 'error', error: failure };
  }
  const keys = reason.code === undefined ? ['kind', 'step', 'message'] : ['kind', 'step', 'message', 'code'];
  if (
    !hasOnlyKeys(reason, keys) ||
    typeof reason.message !== 'string' ||
    (reason.code !== undefined && typeof reason.code !== 'string')
  ) {
    return undefined;
  }
  const code = typeof reason.code === 'string' ? reason.code : 'UNKNOWN';
  return { kind: 'error', error: { message: reason.message, code } };
}

/** dsh checks every turn/end's shape here (extra keys, turn < 1 and unknown reason keys are refused). */
function upgradeTurnEnd(event: JsonRecord, sessionId: string): JsonRecord {
  const data = event.data;
  if (!isPlainRecord(data)) return event;
  const fail = (): never => {
    throw malformed(sessionId, 'turn/end', event.seq);
  };
  const reason = data.reason;
  if (!isTurnNumber(data.turn) || !hasOnlyKeys(data, ['turn', 'reason']) || !isPlainRecord(reason)) return fail();
  if (typeof reason.kind !== 'string') return fail();
  let current: JsonRecord | undefined;
  switch (reason.kind) {
    case 'completed':
    case 'blocked':
    case 'max-tokens':
    case 'interrupted':
      return hasOnlyKeys(reason, ['kind']) ? event : fail();
    case 'aborted':
      if (Object.hasOwn(reason, 'reason')) return event;
      if (!hasOnlyKeys(reason, ['kind'])) return fail();
      current = { kind: 'aborted', reason: { kind: 'legacy' } };
      break;
    case 'disposed':
      if (!hasOnlyKeys(reason, ['kind'])) return fail();
      current = { kind: 'aborted', reason: { kind: 'disposed' } };
      break;
    case 'error':
      if (Object.hasOwn(reason, 'error')) return event;
      current = legacyErrorReason(reason) ?? fail();
      break;
    default:
      return event;
  }
  return { ...event, data: { ...data, reason: current } };
}

function upgradeSteering(event: JsonRecord, sessionId: string): JsonRecord {
  if (event.type !== 'steering/message') return event;
  const data = event.data;
  if (!isPlainRecord(data)) throw malformed(sessionId, 'steering/message', event.seq);
  const wrapped = data.message;
  if (isPlainRecord(wrapped) && Number.isSafeInteger(data.turn) && hasOnlyKeys(data, ['turn', 'message'])) {
    return { ...event, type: 'user/message', data: wrapped };
  }
  if (!Number.isSafeInteger(data.turn) || !hasOnlyKeys(data, ['turn', 'content', 'source'])) {
    throw malformed(sessionId, 'steering/message', event.seq);
  }
  const { turn: _turn, ...message } = data;
  return { ...event, type: 'user/message', data: { ...message, id: legacyMessageId(sessionId, event.seq), role: 'user' } };
}

function replacementStart(event: JsonRecord): number | undefined {
  const op = event.surfaceOp;
  return isPlainRecord(op) && op.op === 'replace' && typeof op.start === 'number' ? op.start : undefined;
}

/** Looks up the message id of an earlier event by seq (for a legacy tool-result replacement). */
export type MessageIdLookup = (seq: number) => string | undefined;

function upgradeMessage(event: JsonRecord, sessionId: string, messageIdOf: MessageIdLookup): JsonRecord {
  const data = event.data;
  if (!isPlainRecord(data)) return event;
  switch (event.type) {
    case 'user/message':
      if (
        Object.hasOwn(data, 'id') ||
        Object.hasOwn(data, 'role') ||
        Object.hasOwn(data, 'message') ||
        !Object.hasOwn(data, 'content') ||
        !Object.hasOwn(data, 'source')
      ) {
        return event;
      }
      return { ...event, data: { ...data, id: legacyMessageId(sessionId, event.seq), role: 'user' } };
    case 'assistant/message': {
      if (Object.hasOwn(data, 'message') || !Object.hasOwn(data, 'content') || !Object.hasOwn(data, 'provenance')) {
        return event;
      }
      const { content, provenance, ...rest } = data;
      const source = { ...(isPlainRecord(provenance) ? provenance : {}), kind: 'model' };
      const message = { id: legacyMessageId(sessionId, event.seq), role: 'assistant', content, source };
      return { ...event, data: { ...rest, message } };
    }
    case 'tool/result': {
      if (
        Object.hasOwn(data, 'message') ||
        !Object.hasOwn(data, 'callId') ||
        !Object.hasOwn(data, 'content') ||
        !Object.hasOwn(data, 'isError')
      ) {
        return event;
      }
      const { callId, content, isError, ...rest } = data;
      const start = replacementStart(event);
      const id = start === undefined ? legacyMessageId(sessionId, event.seq) : messageIdOf(start);
      const message = {
        id,
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: callId, content, isError }],
        source: { kind: 'tool', callId },
      };
      return { ...event, data: { ...rest, message } };
    }
    default:
      return event;
  }
}

/**
 * Upgrades one stored event to the current shape, as dsh does at load; throws
 * {@link MalformedLegacyEventError} for a legacy-looking event it cannot upgrade.
 */
export function upgradeLegacyEvent(event: JsonRecord, sessionId: string, messageIdOf: MessageIdLookup): JsonRecord {
  let upgraded = event;
  if (upgraded.type === 'turn/start') upgraded = upgradeTurnStart(upgraded, sessionId);
  if (upgraded.type === 'turn/end') upgraded = upgradeTurnEnd(upgraded, sessionId);
  upgraded = upgradeSteering(upgraded, sessionId);
  return upgradeMessage(upgraded, sessionId, messageIdOf);
}
