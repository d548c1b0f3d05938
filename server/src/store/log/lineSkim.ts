/**
 * Most lines of a dsh log change what the index keeps of it in a few predictable ways only:
 * `assistant/chunk` deltas, packed chunk rows (store doc §4), `request/context` and other kinds
 * that no load stage looks into only move the next seq and the last time; a plain appended
 * `assistant/message` or `user/message` also puts one node on the surface (and an assistant's
 * tool-call blocks become pending calls). This module reads what the fold needs of such lines
 * straight from their bytes, after checking the bytes are JSON that `JSON.parse` would accept and
 * that every check dsh makes of the kind would pass (envelope keys, seq, time, data present,
 * `ignorable: true` or absent; a packed row exactly as dsh writes it; a message's id, role,
 * source and content; an append's provenance) — without decoding the line to text or building
 * its objects.
 *
 * It is sound, not complete: whenever a line is anything else, or anything is unusual (an escape
 * in a key or in a string the checks compare, a number written with a fraction or exponent, a
 * duplicate key the checks read, `data` before `type`, deep nesting, a control byte), the answer
 * is "parse it", and the full fold decides. `lineSkim.test.ts` proves with fast-check that
 * summaries with and without skimming are identical.
 */
import { KNOWN_EVENT_TYPES } from './eventRules';
import { utf8Text } from './lines';

/** A tool call an assistant message requests: its block's `id` and the message's `data.step` (undefined when absent). */
export type RequestedCall = [callId: unknown, step: unknown];

/** What a skimmed line stands for, as the fold needs it. */
export type SkimmedLine =
  /** One event of a kind that only moves the seq and the last time. */
  | { row: false; seq: number; time: number; surface?: undefined }
  /**
   * A valid `assistant/message` ('a') or `user/message` ('u') appended to the surface, without
   * provenance problems; `calls` are its tool-call blocks, in order.
   */
  | { row: false; seq: number; time: number; surface: 'a' | 'u'; calls: RequestedCall[] }
  /**
   * A `tool/result` whose `data.message.content[0].content` is an array at bytes `content`
   * (start, end), the line being valid JSON: it must still be parsed, but that array (the tool's
   * output, most of the line) may be read as `[]`, since no check looks into it (it is blanked in
   * the rewrite key) beyond its being an array.
   */
  | { row: false; seq: number; time: number; surface: 't'; content: [start: number, end: number] }
  /** A packed row of `count` `assistant/chunk` events, from `seq` on. */
  | { row: true; seq: number; count: number; lastTime: number };

/**
 * Event kinds whose valid events no stage of a load looks into beyond the envelope: not the
 * surface types, not what closers track (turn/step starts and ends, tool calls), not the title,
 * not a request header (its config is checked), none with a legacy form.
 */
const LOOKED_INTO = new Set([
  'user/message',
  'assistant/message',
  'tool/result',
  'request/header',
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'tool/call',
  'session/title',
]);

/** What a line's type makes of it. */
const PLAIN = 1;
const TEXT_ROW = 2;
const TOOL_ROW = 3;
const ASSISTANT = 4;
const USER = 5;
const TOOL_RESULT = 6;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** Deeper values are left to `JSON.parse` (the skim recurses; JSON.parse itself fails on very deep values). */
const MAX_DEPTH = 64;
/** Integers of at most this many digits are safe integers. */
const MAX_SAFE_DIGITS = 15;

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** Known type names by their length and first bytes (see {@link typeCode}). */
const TYPES = new Map<number, Array<[name: Uint8Array, code: number]>>();
function addType(name: string, code: number): void {
  const bytes = ascii(name);
  const key = typeKey(bytes, 0, bytes.length);
  const list = TYPES.get(key) ?? [];
  list.push([bytes, code]);
  TYPES.set(key, list);
}
function typeKey(bytes: Uint8Array, start: number, length: number): number {
  return length * 65536 + bytes[start] * 256 + bytes[start + length - 1];
}
for (const type of KNOWN_EVENT_TYPES) if (!LOOKED_INTO.has(type)) addType(type, PLAIN);
addType('text-chunks', TEXT_ROW);
addType('reasoning-chunks', TEXT_ROW);
addType('tool-call-chunks', TOOL_ROW);
addType('assistant/message', ASSISTANT);
addType('user/message', USER);
addType('tool/result', TOOL_RESULT);

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

// The line being skimmed, as module state: the skim runs to completion on one line at a time.
let B: Uint8Array = new Uint8Array(0);
let P = 0;
let E = 0;
/** Where the last plain key or string read began (after its quote) and ended (at its closing quote). */
let S0 = 0;
let S1 = 0;
/** The last string read held an escape. */
let ESCAPED = false;

function space(): void {
  const b = B;
  let p = P;
  while (p < E) {
    const c = b[p];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    p++;
  }
  P = p;
}

/** Consumes `byte` after optional whitespace. */
function take(byte: number): boolean {
  // dsh writes no whitespace: look at the next byte first.
  if (P < E && B[P] === byte) {
    P++;
    return true;
  }
  space();
  if (P < E && B[P] === byte) {
    P++;
    return true;
  }
  return false;
}

/** The next byte after optional whitespace (-1 at the end). */
function peek(): number {
  if (P >= E) return -1;
  const c = B[P];
  if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  space();
  return P < E ? B[P] : -1;
}

/**
 * A JSON string at `P` (its opening quote, whitespace already skipped). Bytes of 0x80 and up
 * decode to text, never to JSON syntax. Sets {@link S0}, {@link S1} and {@link ESCAPED}.
 */
function string(): boolean {
  const b = B;
  const e = E;
  let p = P + 1;
  const start = p;
  let escaped = false;
  for (;;) {
    // The hot loop: most bytes of a line are inside strings.
    let c = 0;
    while (p < e) {
      c = b[p];
      if (c === QUOTE || c === BACKSLASH || c < 0x20) break;
      p++;
    }
    if (p >= e || c < 0x20) return false;
    if (c === QUOTE) break;
    escaped = true;
    p++;
    if (p >= e) return false;
    const x = b[p++];
    if (x === 0x75) {
      if (p + 4 > e || !isHex(b[p]) || !isHex(b[p + 1]) || !isHex(b[p + 2]) || !isHex(b[p + 3])) return false;
      p += 4;
    } else if (x !== QUOTE && x !== BACKSLASH && x !== 0x2f && x !== 0x62 && x !== 0x66 && x !== 0x6e && x !== 0x72 && x !== 0x74) {
      return false;
    }
  }
  S0 = start;
  S1 = p;
  ESCAPED = escaped;
  P = p + 1;
  return true;
}

/** A string (after optional whitespace) with no escape; false for anything else. */
function plainString(): boolean {
  return peek() === QUOTE && string() && !ESCAPED;
}

/** The last string read equals `name` byte for byte (both plain). */
function lastIs(name: Uint8Array): boolean {
  const length = name.length;
  if (S1 - S0 !== length) return false;
  const b = B;
  for (let k = 0; k < length; k++) if (b[S0 + k] !== name[k]) return false;
  return true;
}

/**
 * An object key and its colon: the index of `names` it is, -1 for any other plain key, -2 when
 * the key cannot be read or holds an escape (which could spell one of `names`).
 */
function key(names: readonly Uint8Array[]): number {
  if (peek() !== QUOTE) return -2;
  const b = B;
  const e = E;
  const start = P + 1;
  let p = start;
  // A key with an escape is never read here, so the scan stops at the first quote or backslash.
  while (p < e) {
    const c = b[p];
    if (c === QUOTE) break;
    if (c === BACKSLASH || c < 0x20) return -2;
    p++;
  }
  if (p >= e) return -2;
  const length = p - start;
  P = p + 1;
  if (!take(COLON)) return -2;
  const first = length === 0 ? -1 : b[start];
  outer: for (let i = 0; i < names.length; i++) {
    const candidate = names[i];
    if (candidate.length !== length || candidate[0] !== first) continue;
    for (let k = 1; k < length; k++) if (b[start + k] !== candidate[k]) continue outer;
    return i;
  }
  return -1;
}

/** A JSON number, any form. */
function number(): boolean {
  const b = B;
  const e = E;
  let p = P;
  if (b[p] === MINUS) p++;
  if (p >= e || !isDigit(b[p])) return false;
  if (b[p] === ZERO) p++;
  else while (p < e && isDigit(b[p])) p++;
  if (p < e && b[p] === 0x2e) {
    p++;
    if (p >= e || !isDigit(b[p])) return false;
    while (p < e && isDigit(b[p])) p++;
  }
  if (p < e && (b[p] === 0x65 || b[p] === 0x45)) {
    p++;
    if (p < e && (b[p] === 0x2b || b[p] === MINUS)) p++;
    if (p >= e || !isDigit(b[p])) return false;
    while (p < e && isDigit(b[p])) p++;
  }
  P = p;
  return true;
}

/**
 * An integer written as plain digits (optionally negative, never `-0`), short enough to be a
 * safe integer; NaN for anything else (a fraction or exponent included: left to `JSON.parse`).
 */
function integer(): number {
  space();
  const b = B;
  const e = E;
  let p = P;
  const negative = p < e && b[p] === MINUS;
  if (negative) p++;
  const first = p;
  let value = 0;
  while (p < e) {
    const c = b[p];
    if (c < ZERO || c > NINE) break;
    value = value * 10 + (c - ZERO);
    p++;
  }
  const digits = p - first;
  if (digits === 0 || digits > MAX_SAFE_DIGITS || (digits > 1 && b[first] === ZERO)) return Number.NaN;
  if (negative && value === 0) return Number.NaN;
  if (p < e && (b[p] === 0x2e || b[p] === 0x65 || b[p] === 0x45)) return Number.NaN;
  P = p;
  return negative ? -value : value;
}

/** A literal (`true`, `false`, `null`) at `P`. */
function word(literal: Uint8Array): boolean {
  if (P + literal.length > E) return false;
  for (let i = 0; i < literal.length; i++) if (B[P + i] !== literal[i]) return false;
  P += literal.length;
  return true;
}
const TRUE = ascii('true');
const FALSE = ascii('false');
const NULL = ascii('null');

/** Any JSON value. */
function value(depth: number): boolean {
  const c = peek();
  if (c === QUOTE) return string();
  if (c === OPEN_BRACE) {
    if (depth >= MAX_DEPTH) return false;
    P++;
    if (take(CLOSE_BRACE)) return true;
    do {
      if (peek() !== QUOTE || !string() || !take(COLON) || !value(depth + 1)) return false;
    } while (take(COMMA));
    return take(CLOSE_BRACE);
  }
  if (c === OPEN_BRACKET) {
    if (depth >= MAX_DEPTH) return false;
    P++;
    if (take(CLOSE_BRACKET)) return true;
    do {
      if (!value(depth + 1)) return false;
    } while (take(COMMA));
    return take(CLOSE_BRACKET);
  }
  if (c === MINUS || isDigit(c)) return number();
  return word(TRUE) || word(FALSE) || word(NULL);
}

/**
 * The compact form of a non-empty array of strings (`["a","b"]`, no whitespace, no escape, no
 * control byte) at `P`, as dsh writes a row's members: its length, or 0 (and `P` unmoved) when
 * it is anything else, to be read by the general path.
 */
function compactStringArray(): number {
  const b = B;
  const e = E;
  let p = P;
  if (p >= e || b[p] !== OPEN_BRACKET) return 0;
  p++;
  let count = 0;
  for (;;) {
    if (p >= e || b[p] !== QUOTE) return 0;
    p++;
    let c = 0;
    while (p < e) {
      c = b[p];
      if (c === QUOTE || c === BACKSLASH || c < 0x20) break;
      p++;
    }
    if (c !== QUOTE || p >= e) return 0;
    p++;
    count++;
    if (p >= e) return 0;
    c = b[p++];
    if (c === COMMA) continue;
    if (c !== CLOSE_BRACKET) return 0;
    P = p;
    return count;
  }
}

/** A non-empty array of strings; its length, or 0 when it is not one. */
function stringArray(): number {
  space();
  const compact = compactStringArray();
  if (compact > 0) return compact;
  if (!take(OPEN_BRACKET)) return 0;
  let count = 0;
  do {
    if (peek() !== QUOTE || !string()) return 0;
    count++;
  } while (take(COMMA));
  return take(CLOSE_BRACKET) ? count : 0;
}

/** Results of {@link gaps}: how many, and the sum from the start. */
let GAP_COUNT = 0;
let GAP_SUM = 0;

/**
 * The compact form of an array of integers (`[1,-2,3]`, no whitespace, at most
 * {@link MAX_SAFE_DIGITS} digits, no leading zero, no `-0`, no fraction or exponent) at `P`:
 * sets {@link GAP_COUNT} and {@link GAP_SUM} (from `start`; with `ascending`, the sum is the
 * last element and the elements must be non-negative and strictly ascending) and returns true;
 * false (and `P` unmoved) for anything else, to be read by the general path.
 */
function compactIntegers(start: number, ascending: boolean): boolean {
  const b = B;
  const e = E;
  let p = P;
  if (p >= e || b[p] !== OPEN_BRACKET) return false;
  p++;
  let count = 0;
  let sum = start;
  let last = -1;
  if (p < e && b[p] === CLOSE_BRACKET) {
    P = p + 1;
    GAP_COUNT = 0;
    GAP_SUM = ascending ? -1 : sum;
    return true;
  }
  for (;;) {
    const negative = p < e && b[p] === MINUS;
    if (negative) {
      if (ascending) return false;
      p++;
    }
    const first = p;
    let value = 0;
    while (p < e) {
      const digit = b[p];
      if (digit < ZERO || digit > NINE) break;
      value = value * 10 + (digit - ZERO);
      p++;
    }
    const digits = p - first;
    if (digits === 0 || digits > MAX_SAFE_DIGITS || (digits > 1 && b[first] === ZERO) || (negative && value === 0)) return false;
    if (p >= e) return false;
    count++;
    if (ascending) {
      if (!(value > last)) return false;
      last = value;
    } else {
      sum += negative ? -value : value;
      if (sum > Number.MAX_SAFE_INTEGER || sum < -Number.MAX_SAFE_INTEGER) return false;
    }
    const c = b[p++];
    if (c === COMMA) continue;
    if (c !== CLOSE_BRACKET) return false;
    P = p;
    GAP_COUNT = count;
    GAP_SUM = ascending ? last : sum;
    return true;
  }
}

/** An array of safe integers, added up from `start`; false when it is not one or a sum leaves the safe range. */
function gaps(start: number): boolean {
  space();
  if (compactIntegers(start, false)) return true;
  if (!take(OPEN_BRACKET)) return false;
  let count = 0;
  let sum = start;
  if (!take(CLOSE_BRACKET)) {
    do {
      const gap = integer();
      if (gap !== gap) return false;
      sum += gap;
      if (sum > Number.MAX_SAFE_INTEGER || sum < -Number.MAX_SAFE_INTEGER) return false;
      count++;
    } while (take(COMMA));
    if (!take(CLOSE_BRACKET)) return false;
  }
  GAP_COUNT = count;
  GAP_SUM = sum;
  return true;
}

/** Keys of a log line the skim knows, by index (a bit each in a seen-mask). */
const LINE_KEYS = ['type', 'seq', 'time', 'data', 'ignorable', 'seq0', 'time0', 'surfaceOp', 'sourceEventSeqs'].map(ascii);
const [TYPE, SEQ, TIME, DATA, IGNORABLE, SEQ0, TIME0, SURFACE_OP, SOURCES] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
/** Keys of a packed row's data (rows.ts): turn, step and index first. */
const ROW_DATA_KEYS = ['turn', 'step', 'index', 'dt', 'texts', 'args', 'id', 'name'].map(ascii);
const [ROW_INDEX, ROW_DT, ROW_TEXTS, ROW_ARGS, ROW_ID, ROW_NAME] = [2, 3, 4, 5, 6, 7];
const bits = (...indexes: number[]): number => indexes.reduce((mask, index) => mask | (1 << index), 0);
const TEXT_ROW_REQUIRED = bits(0, 1, ROW_INDEX, ROW_DT, ROW_TEXTS);
const TOOL_ROW_REQUIRED = bits(0, 1, ROW_INDEX, ROW_ID, ROW_DT, ROW_ARGS);
const ROW_LINE_KEYS = bits(TYPE, SEQ0, TIME0, DATA);
const EVENT_LINE_REQUIRED = bits(TYPE, SEQ, TIME, DATA);
/** Keys a plain event line must not have. */
const EVENT_LINE_REFUSED = bits(SEQ0, TIME0, SURFACE_OP, SOURCES);
const ROW_ONLY = bits(SEQ0, TIME0);

/** Results of {@link rowData}. */
let ROW_COUNT = 0;
let ROW_LAST_TIME = 0;

/**
 * A packed row's `data`, exactly as dsh writes it (rows.ts): turn, step and index numbers, the
 * members, dt one shorter; for tool calls an id and an optional name. Sets the member count and
 * the last member's time.
 */
function rowData(toolCall: boolean, time0: number): boolean {
  if (!take(OPEN_BRACE)) return false;
  let seen = 0;
  let members = 0;
  let gapCount = -1;
  let lastTime = 0;
  do {
    const k = key(ROW_DATA_KEYS);
    if (k < 0 || (seen & (1 << k)) !== 0) return false;
    seen |= 1 << k;
    const c = peek();
    if (k <= ROW_INDEX) {
      if (!(c === MINUS || isDigit(c)) || !number()) return false;
    } else if (k === (toolCall ? ROW_ARGS : ROW_TEXTS)) {
      members = stringArray();
      if (members === 0) return false;
    } else if (k === ROW_DT) {
      if (!gaps(time0)) return false;
      gapCount = GAP_COUNT;
      lastTime = GAP_SUM;
    } else if (toolCall && (k === ROW_ID || k === ROW_NAME)) {
      if (c !== QUOTE || !string()) return false;
    } else {
      return false;
    }
  } while (take(COMMA));
  if (!take(CLOSE_BRACE)) return false;
  const required = toolCall ? TOOL_ROW_REQUIRED : TEXT_ROW_REQUIRED;
  if ((seen & required) !== required || gapCount !== members - 1) return false;
  ROW_COUNT = members;
  ROW_LAST_TIME = lastTime;
  return true;
}

// Surface messages (eventRules.ts `messageShapeProblem`, legacy.ts `upgradeMessage`, closers.ts).
const MESSAGE_KEYS = ['id', 'role', 'source', 'content'].map(ascii);
const [M_ID, M_ROLE, M_SOURCE, M_CONTENT] = [0, 1, 2, 3];
const MESSAGE_REQUIRED = bits(M_ID, M_ROLE, M_SOURCE, M_CONTENT);
/** Keys of an assistant message's data: `message` (present, so no legacy upgrade) and `step` (pending calls keep it). */
const ASSISTANT_DATA_KEYS = ['message', 'step'].map(ascii);
const SOURCE_KEYS = ['kind', 'provider', 'model'].map(ascii);
const BLOCK_KEYS = ['type', 'id'].map(ascii);
const ROLE_ASSISTANT = ascii('assistant');
const ROLE_USER = ascii('user');
const KIND_MODEL = ascii('model');
const TOOL_CALL = ascii('tool-call');
const APPEND = ascii('append');

/** Byte ranges of values the fold keeps as they are (a call's id, the data's step), parsed on their own. */
let CALL_IDS: number[] = [];
let STEP_START = -1;
let STEP_END = -1;

/** A non-empty string value (any escapes: it is only compared with ''). */
function nonEmptyString(): boolean {
  return peek() === QUOTE && string() && S1 > S0;
}

/** A message's `source`: an object with a non-empty string kind; for the assistant kind `model` and a non-empty provider and model. */
function source(assistant: boolean): boolean {
  if (!take(OPEN_BRACE)) return false;
  let seen = 0;
  if (!take(CLOSE_BRACE)) {
    do {
      const k = key(SOURCE_KEYS);
      if (k === -2) return false;
      if (k < 0) {
        if (!value(3)) return false;
        continue;
      }
      if ((seen & (1 << k)) !== 0) return false;
      seen |= 1 << k;
      if (k === 0) {
        if (!nonEmptyString()) return false;
        if (assistant && (ESCAPED || !lastIs(KIND_MODEL))) return false;
      } else if (assistant) {
        if (!nonEmptyString()) return false;
      } else if (!value(3)) {
        return false;
      }
    } while (take(COMMA));
    if (!take(CLOSE_BRACE)) return false;
  }
  return (seen & 1) !== 0 && (!assistant || seen === 7);
}

/** An assistant message's content: an array of objects; each tool-call block's `id` value range goes to {@link CALL_IDS}. */
function assistantContent(): boolean {
  if (!take(OPEN_BRACKET)) return false;
  if (take(CLOSE_BRACKET)) return true;
  do {
    if (!take(OPEN_BRACE)) return false;
    let seen = 0;
    let toolCall = false;
    let idStart = -1;
    let idEnd = -1;
    if (!take(CLOSE_BRACE)) {
      do {
        const k = key(BLOCK_KEYS);
        if (k === -2) return false;
        if (k >= 0) {
          if ((seen & (1 << k)) !== 0) return false;
          seen |= 1 << k;
        }
        space();
        const start = P;
        if (!value(5)) return false;
        if (k === 0) {
          // A type spelled with an escape could be 'tool-call'.
          if (B[start] === QUOTE) {
            if (ESCAPED) return false;
            toolCall = lastIs(TOOL_CALL);
          }
        } else if (k === 1) {
          idStart = start;
          idEnd = P;
        }
      } while (take(COMMA));
      if (!take(CLOSE_BRACE)) return false;
    }
    if (toolCall) CALL_IDS.push(idStart, idEnd);
  } while (take(COMMA));
  return take(CLOSE_BRACKET);
}

/** A surface message object (the data of a user/message, `data.message` of an assistant/message). */
function message(assistant: boolean): boolean {
  if (!take(OPEN_BRACE)) return false;
  let seen = 0;
  if (take(CLOSE_BRACE)) return false;
  do {
    const k = key(MESSAGE_KEYS);
    if (k === -2) return false;
    if (k < 0) {
      if (!value(3)) return false;
      continue;
    }
    if ((seen & (1 << k)) !== 0) return false;
    seen |= 1 << k;
    switch (k) {
      case M_ID:
        if (!nonEmptyString()) return false;
        break;
      case M_ROLE:
        if (!plainString() || !lastIs(assistant ? ROLE_ASSISTANT : ROLE_USER)) return false;
        break;
      case M_SOURCE:
        if (!source(assistant)) return false;
        break;
      default:
        if (assistant) {
          if (!assistantContent()) return false;
        } else if (peek() !== OPEN_BRACKET || !value(2)) {
          return false;
        }
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE) && seen === MESSAGE_REQUIRED;
}

/** An assistant/message's data: an object with a valid `message`; the range of `step` goes to {@link STEP_START}. */
function assistantData(): boolean {
  if (!take(OPEN_BRACE)) return false;
  let seen = 0;
  if (take(CLOSE_BRACE)) return false;
  do {
    const k = key(ASSISTANT_DATA_KEYS);
    if (k === -2) return false;
    if (k >= 0) {
      if ((seen & (1 << k)) !== 0) return false;
      seen |= 1 << k;
    }
    if (k === 0) {
      if (!message(true)) return false;
    } else {
      space();
      const start = P;
      if (!value(2)) return false;
      if (k === 1) {
        STEP_START = start;
        STEP_END = P;
      }
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE) && (seen & 1) !== 0;
}

/** Where {@link toolResultData} found the tool's output array. */
let CONTENT_START = -1;
let CONTENT_END = -1;
const DATA_MESSAGE_KEYS = [ascii('message')];
const CONTENT_KEYS = [ascii('content')];

/**
 * An object (at `P`) whose key `names[0]` occurs exactly once and holds what `inner` accepts;
 * any other key's value is only validated. No key may hold an escape (it could spell the name).
 */
function objectWith(names: readonly Uint8Array[], depth: number, inner: () => boolean): boolean {
  if (!take(OPEN_BRACE)) return false;
  if (take(CLOSE_BRACE)) return false;
  let found = false;
  do {
    const k = key(names);
    if (k === -2) return false;
    if (k === 0) {
      if (found || !inner()) return false;
      found = true;
    } else if (!value(depth + 1)) {
      return false;
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE) && found;
}

/** The tool's output: an array, recorded in {@link CONTENT_START} and {@link CONTENT_END}. */
function toolOutput(): boolean {
  if (peek() !== OPEN_BRACKET) return false;
  const start = P;
  if (!value(4)) return false;
  CONTENT_START = start;
  CONTENT_END = P;
  return true;
}

/** `data.message.content`: an array whose first element is an object with a `content` array. */
function toolResultContent(): boolean {
  if (!take(OPEN_BRACKET)) return false;
  if (peek() !== OPEN_BRACE || !objectWith(CONTENT_KEYS, 3, toolOutput)) return false;
  while (take(COMMA)) if (!value(3)) return false;
  return take(CLOSE_BRACKET);
}

/** A tool/result's data, down to its first block's content (see {@link SkimmedLine}). */
function toolResultData(): boolean {
  CONTENT_START = -1;
  return objectWith(DATA_MESSAGE_KEYS, 0, () => peek() === OPEN_BRACE && objectWith(CONTENT_KEYS, 1, toolResultContent));
}

/** Result of {@link sources}: the last (largest) seq, -1 for none. */
let LAST_SOURCE = -1;

/** `sourceEventSeqs`: non-empty (unless `emptyAllowed`), strictly ascending non-negative safe integers. */
function sources(emptyAllowed: boolean): boolean {
  space();
  if (compactIntegers(0, true)) {
    LAST_SOURCE = GAP_SUM;
    return emptyAllowed || GAP_COUNT > 0;
  }
  if (!take(OPEN_BRACKET)) return false;
  let last = -1;
  if (take(CLOSE_BRACKET)) {
    LAST_SOURCE = -1;
    return emptyAllowed;
  }
  do {
    const seq = integer();
    if (!(seq > last)) return false;
    last = seq;
  } while (take(COMMA));
  LAST_SOURCE = last;
  return take(CLOSE_BRACKET);
}

/**
 * A value's bytes as `JSON.parse` reads them (a small range: a call id or a step). A string
 * without escapes is its bytes decoded (they begin and end at ASCII quotes, where UTF-8 decoding
 * resynchronizes), a short run of digits their number; anything else goes to `JSON.parse`.
 */
function parseRange(start: number, end: number): unknown {
  const b = B;
  if (b[start] === QUOTE && b.subarray(start + 1, end - 1).indexOf(BACKSLASH) < 0) return utf8Text(b.subarray(start + 1, end - 1));
  if (end - start <= MAX_SAFE_DIGITS && (b[start] !== ZERO || end - start === 1)) {
    let number = 0;
    let p = start;
    while (p < end && isDigit(b[p])) number = number * 10 + (b[p++] - ZERO);
    if (p === end) return number;
  }
  return JSON.parse(utf8Text(b.subarray(start, end)));
}

/**
 * What the fold needs of a line that only moves the seq and the last time, or appends a plain
 * message to the surface, read from its bytes; or undefined: parse the line (see the module comment).
 */
export function skimLine(bytes: Uint8Array): SkimmedLine | undefined {
  B = bytes;
  P = 0;
  E = bytes.length;
  try {
    return skim();
  } finally {
    B = EMPTY;
  }
}
const EMPTY = new Uint8Array(0);

function skim(): SkimmedLine | undefined {
  if (!take(OPEN_BRACE)) return undefined;
  let code = 0;
  let seq = Number.NaN;
  let time = Number.NaN;
  let seen = 0;
  let rowCount = 0;
  let rowLastTime = 0;
  let lastSource = -1;
  CALL_IDS = [];
  STEP_START = -1;
  do {
    const k = key(LINE_KEYS);
    if (k < 0 || (seen & (1 << k)) !== 0) return undefined;
    seen |= 1 << k;
    switch (k) {
      case TYPE: {
        if (!plainString()) return undefined;
        const length = S1 - S0;
        if (length === 0) return undefined;
        const candidates = TYPES.get(typeKey(B, S0, length));
        if (candidates === undefined) return undefined;
        for (const [name, candidate] of candidates) if (lastIs(name)) code = candidate;
        if (code === 0) return undefined;
        break;
      }
      case SEQ:
      case SEQ0:
        seq = integer();
        if (!(seq >= 0)) return undefined;
        break;
      case TIME:
      case TIME0:
        time = integer();
        if (time !== time) return undefined;
        break;
      case DATA:
        // The kind decides what data must be: known only when `type` came first (as dsh writes it).
        if (code === 0) return undefined;
        if (code === TEXT_ROW || code === TOOL_ROW) {
          if (time !== time || !rowData(code === TOOL_ROW, time)) return undefined;
          rowCount = ROW_COUNT;
          rowLastTime = ROW_LAST_TIME;
        } else if (code === ASSISTANT) {
          if (!assistantData()) return undefined;
        } else if (code === USER) {
          if (!message(false)) return undefined;
        } else if (code === TOOL_RESULT) {
          if (!toolResultData()) return undefined;
        } else if (!value(0)) {
          return undefined;
        }
        break;
      case SURFACE_OP:
        if (code === TOOL_RESULT) {
          if (!value(1)) return undefined;
        } else if (!plainString() || !lastIs(APPEND)) {
          return undefined;
        }
        break;
      case SOURCES:
        if (code === TOOL_RESULT) {
          if (!value(1)) return undefined;
          break;
        }
        if (code !== ASSISTANT && code !== USER) return undefined;
        if (!sources(code === ASSISTANT)) return undefined;
        lastSource = LAST_SOURCE;
        break;
      case IGNORABLE:
      default:
        space();
        if (!word(TRUE)) return undefined;
    }
  } while (take(COMMA));
  if (!take(CLOSE_BRACE)) return undefined;
  space();
  if (P !== E || code === 0) return undefined;
  if (code === TEXT_ROW || code === TOOL_ROW) {
    // Exactly {type, seq0, time0, data}.
    if (seen !== ROW_LINE_KEYS) return undefined;
    return { row: true, seq, count: rowCount, lastTime: rowLastTime };
  }
  if ((seen & EVENT_LINE_REQUIRED) !== EVENT_LINE_REQUIRED || (seen & ROW_ONLY) !== 0) return undefined;
  if (code === PLAIN) {
    if ((seen & EVENT_LINE_REFUSED) !== 0) return undefined;
    return { row: false, seq, time };
  }
  if (code === TOOL_RESULT) return { row: false, seq, time, surface: 't', content: [CONTENT_START, CONTENT_END] };
  // A surface message: appended, its sources (if any) all earlier.
  if ((seen & (1 << SURFACE_OP)) === 0 || lastSource >= seq) return undefined;
  const calls: RequestedCall[] = [];
  if (CALL_IDS.length > 0) {
    const step = STEP_START < 0 ? undefined : parseRange(STEP_START, STEP_END);
    for (let i = 0; i < CALL_IDS.length; i += 2) {
      calls.push([CALL_IDS[i] < 0 ? undefined : parseRange(CALL_IDS[i], CALL_IDS[i + 1]), step]);
    }
  }
  return { row: false, seq, time, surface: code === ASSISTANT ? 'a' : 'u', calls };
}
