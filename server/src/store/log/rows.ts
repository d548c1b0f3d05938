/**
 * Packed chunk rows (store doc §4): a storage record that stands for a run of `assistant/chunk`
 * delta events. Rows are validated strictly; any other JSON value passes through as one event.
 */

type JsonRecord = Record<string, unknown>;

const ROW_TAGS = new Set(['text-chunks', 'reasoning-chunks', 'tool-call-chunks']);

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null;
}

function hasExactKeys(value: object, keys: readonly string[]): boolean {
  return Object.keys(value).length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}

/** A row that is not exactly as dsh writes it: corrupt storage, never passed through as an event. */
export class MalformedRowError extends Error {
  constructor(tag: string, why: string) {
    super(`malformed ${tag} storage row: ${why}`);
  }
}

function memberPayload(tag: string, data: JsonRecord, key: 'texts' | 'args'): string[] {
  if (typeof data.turn !== 'number' || typeof data.step !== 'number' || typeof data.index !== 'number') {
    throw new MalformedRowError(tag, 'turn/step/index must be numbers');
  }
  const payload = data[key];
  if (!Array.isArray(payload) || payload.length === 0 || payload.some((entry) => typeof entry !== 'string')) {
    throw new MalformedRowError(tag, `${key} must be a non-empty string array`);
  }
  const dt = data.dt;
  if (!Array.isArray(dt) || dt.some((gap) => !Number.isSafeInteger(gap))) {
    throw new MalformedRowError(tag, 'dt must be an array of safe integers');
  }
  if (dt.length !== payload.length - 1) {
    throw new MalformedRowError(tag, `dt length ${dt.length} does not match ${payload.length} members`);
  }
  return payload as string[];
}

/**
 * A validated packed row: the run of `assistant/chunk` events it stands for, described by their
 * seqs and last time; the events themselves are built only on demand.
 */
export interface PackedRow {
  /** Seq of the first member event (the others follow one by one). */
  seq0: number;
  /** How many member events. */
  count: number;
  /** `time` of the last member event. */
  lastTime: number;
  /** The member events, in order (fresh objects on every call). */
  events(): JsonRecord[];
}

/** Validates a row exactly as dsh does; throws {@link MalformedRowError}. */
function readRow(row: JsonRecord, tag: string): PackedRow {
  if (!hasExactKeys(row, ['type', 'seq0', 'time0', 'data'])) {
    throw new MalformedRowError(tag, 'envelope must be exactly {type, seq0, time0, data}');
  }
  const seq0 = row.seq0;
  const time0 = row.time0;
  if (typeof seq0 !== 'number' || !Number.isSafeInteger(seq0) || seq0 < 0) {
    throw new MalformedRowError(tag, 'seq0 must be a non-negative safe integer');
  }
  if (typeof time0 !== 'number' || !Number.isSafeInteger(time0)) {
    throw new MalformedRowError(tag, 'time0 must be a safe integer');
  }
  const data = row.data;
  if (!isRecord(data)) throw new MalformedRowError(tag, 'data must be an object');
  const toolCall = tag === 'tool-call-chunks';
  let withName = false;
  if (toolCall) {
    withName = hasExactKeys(data, ['turn', 'step', 'index', 'id', 'name', 'dt', 'args']);
    if (!withName && !hasExactKeys(data, ['turn', 'step', 'index', 'id', 'dt', 'args'])) {
      throw new MalformedRowError(tag, 'data must be exactly {turn, step, index, id, name?, dt, args}');
    }
    if (typeof data.id !== 'string' || (withName && typeof data.name !== 'string')) {
      throw new MalformedRowError(tag, 'id (and name when present) must be strings');
    }
  } else if (!hasExactKeys(data, ['turn', 'step', 'index', 'dt', 'texts'])) {
    throw new MalformedRowError(tag, 'data must be exactly {turn, step, index, dt, texts}');
  }
  const members = memberPayload(tag, data, toolCall ? 'args' : 'texts');
  if (!Number.isSafeInteger(seq0 + members.length - 1)) {
    throw new MalformedRowError(tag, 'member seqs must stay safe integers');
  }
  const dt = data.dt as number[];
  let lastTime = time0;
  for (const gap of dt) {
    lastTime += gap;
    if (!Number.isSafeInteger(lastTime)) throw new MalformedRowError(tag, 'member times must stay safe integers');
  }
  const chunkOf = (k: number): JsonRecord =>
    toolCall
      ? {
          type: 'tool-call-delta',
          index: data.index,
          id: data.id,
          ...(withName ? { name: data.name } : {}),
          argumentsDelta: members[k],
        }
      : { type: tag === 'text-chunks' ? 'text-delta' : 'reasoning-delta', index: data.index, text: members[k] };
  const events = (): JsonRecord[] => {
    const expanded: JsonRecord[] = [];
    let time = time0;
    for (let k = 0; k < members.length; k++) {
      if (k > 0) time += dt[k - 1];
      expanded.push({ type: 'assistant/chunk', seq: seq0 + k, time, data: { turn: data.turn, step: data.step, chunk: chunkOf(k) } });
    }
    return expanded;
  };
  return { seq0, count: members.length, lastTime, events };
}

/**
 * The packed row one parsed log line is, validated (throwing {@link MalformedRowError} when it
 * is malformed), or undefined for any other value (which stands for one event, unvalidated).
 */
export function packedRowOf(value: unknown): PackedRow | undefined {
  if (isRecord(value) && typeof value.type === 'string' && ROW_TAGS.has(value.type)) return readRow(value, value.type);
  return undefined;
}
