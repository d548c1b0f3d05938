/**
 * Most lines of a dsh log cannot change what the index keeps of it: `assistant/chunk` deltas,
 * packed chunk rows (store doc §4), `request/context` and other kinds that no load stage looks
 * into. For such a line a valid log only moves the next seq and the last time. This module reads
 * those two straight from the line's bytes, after checking the bytes are JSON that `JSON.parse`
 * would accept and that every check dsh makes of the kind would pass (envelope keys, seq, time,
 * data present, `ignorable: true` or absent; a packed row exactly as dsh writes it) — without
 * decoding the line to text or building its objects.
 *
 * It is sound, not complete: whenever a line is anything else, or anything is unusual (an escape
 * in a key or type, a number written with a fraction or exponent, a duplicate key, `data` before
 * `type`, deep nesting), the answer is "parse it", and the full fold decides. `lineSkim.test.ts`
 * proves with fast-check that summaries with and without skimming are identical.
 */
import { KNOWN_EVENT_TYPES } from './eventRules';

/** What a skimmed line stands for, as the fold needs it. */
export type SkimmedLine =
  /** One event of a kind that only moves the seq and the last time. */
  | { row: false; seq: number; time: number }
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
const SKIMMABLE_TYPES: ReadonlySet<string> = new Set([...KNOWN_EVENT_TYPES].filter((type) => !LOOKED_INTO.has(type)));
const ROW_TYPES: ReadonlySet<string> = new Set(['text-chunks', 'reasoning-chunks', 'tool-call-chunks']);

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
/** Deeper values are left to `JSON.parse` (the skim recurses). */
const MAX_DEPTH = 64;
/** Integers of at most this many digits are safe integers. */
const MAX_SAFE_DIGITS = 15;

const names = (...list: string[]): Uint8Array[] => list.map((name) => Uint8Array.from(name, (c) => c.charCodeAt(0)));

/** Keys of a log line the skim knows, by index (a bit each in a seen-mask). */
const LINE_KEYS = names('type', 'seq', 'time', 'data', 'ignorable', 'seq0', 'time0');
const [TYPE, SEQ, TIME, DATA, IGNORABLE, SEQ0, TIME0] = [0, 1, 2, 3, 4, 5, 6];
/** Keys of a packed row's data (rows.ts): turn, step and index first. */
const ROW_DATA_KEYS = names('turn', 'step', 'index', 'dt', 'texts', 'args', 'id', 'name');
const [ROW_INDEX, ROW_DT, ROW_TEXTS, ROW_ARGS, ROW_ID, ROW_NAME] = [2, 3, 4, 5, 6, 7];
const bits = (...indexes: number[]): number => indexes.reduce((mask, index) => mask | (1 << index), 0);
const TEXT_ROW_REQUIRED = bits(0, 1, ROW_INDEX, ROW_DT, ROW_TEXTS);
const TOOL_ROW_REQUIRED = bits(0, 1, ROW_INDEX, ROW_ID, ROW_DT, ROW_ARGS);
const ROW_LINE_KEYS = bits(TYPE, SEQ0, TIME0, DATA);
const EVENT_LINE_REQUIRED = bits(TYPE, SEQ, TIME, DATA);

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** A cursor over one line; every method returns false (or NaN, undefined) on anything it does not accept. */
class Skim {
  pos = 0;

  constructor(
    readonly bytes: Uint8Array,
    readonly end: number,
  ) {}

  space(): void {
    const bytes = this.bytes;
    let pos = this.pos;
    while (pos < this.end) {
      const c = bytes[pos];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  /** Consumes `byte` after optional whitespace. */
  take(byte: number): boolean {
    this.space();
    if (this.pos < this.end && this.bytes[this.pos] === byte) {
      this.pos++;
      return true;
    }
    return false;
  }

  /** The next byte after optional whitespace (-1 at the end). */
  peek(): number {
    this.space();
    return this.pos < this.end ? this.bytes[this.pos] : -1;
  }

  /** A JSON string (at `pos`, its opening quote). Bytes of 0x80 and up decode to text, never to JSON syntax. */
  string(): boolean {
    const bytes = this.bytes;
    const end = this.end;
    let pos = this.pos + 1;
    for (;;) {
      if (pos >= end) return false;
      const c = bytes[pos++];
      if (c === QUOTE) break;
      if (c < 0x20) return false;
      if (c !== BACKSLASH) continue;
      if (pos >= end) return false;
      const escaped = bytes[pos++];
      if (escaped === 0x75) {
        if (pos + 4 > end || !isHex(bytes[pos]) || !isHex(bytes[pos + 1]) || !isHex(bytes[pos + 2]) || !isHex(bytes[pos + 3])) return false;
        pos += 4;
      } else if (
        escaped !== QUOTE &&
        escaped !== BACKSLASH &&
        escaped !== 0x2f &&
        escaped !== 0x62 &&
        escaped !== 0x66 &&
        escaped !== 0x6e &&
        escaped !== 0x72 &&
        escaped !== 0x74
      ) {
        return false;
      }
    }
    this.pos = pos;
    return true;
  }

  /** A string of plain ASCII (no escape, nothing over 0x7e) as text; undefined otherwise. */
  plainString(): string | undefined {
    if (this.peek() !== QUOTE) return undefined;
    const bytes = this.bytes;
    const start = this.pos + 1;
    let pos = start;
    let text = '';
    for (;;) {
      if (pos >= this.end) return undefined;
      const c = bytes[pos++];
      if (c === QUOTE) break;
      if (c < 0x20 || c > 0x7e || c === BACKSLASH) return undefined;
      text += String.fromCharCode(c);
    }
    this.pos = pos;
    return text;
  }

  /**
   * A plain-ASCII string that is one of `names` (as bytes): its index, or -1 for any other string
   * or anything that is not a plain string (an escape included).
   */
  name(names: readonly Uint8Array[]): number {
    if (this.peek() !== QUOTE) return -1;
    const bytes = this.bytes;
    const start = this.pos + 1;
    let pos = start;
    for (;;) {
      if (pos >= this.end) return -1;
      const c = bytes[pos];
      if (c === QUOTE) break;
      if (c < 0x20 || c > 0x7e || c === BACKSLASH) return -1;
      pos++;
    }
    const length = pos - start;
    outer: for (let i = 0; i < names.length; i++) {
      const candidate = names[i];
      if (candidate.length !== length) continue;
      for (let k = 0; k < length; k++) if (bytes[start + k] !== candidate[k]) continue outer;
      this.pos = pos + 1;
      return i;
    }
    return -1;
  }

  /** A JSON number, any form. */
  number(): boolean {
    const bytes = this.bytes;
    const end = this.end;
    let pos = this.pos;
    if (bytes[pos] === MINUS) pos++;
    if (pos >= end || !isDigit(bytes[pos])) return false;
    if (bytes[pos] === ZERO) pos++;
    else while (pos < end && isDigit(bytes[pos])) pos++;
    if (pos < end && bytes[pos] === 0x2e) {
      pos++;
      if (pos >= end || !isDigit(bytes[pos])) return false;
      while (pos < end && isDigit(bytes[pos])) pos++;
    }
    if (pos < end && (bytes[pos] === 0x65 || bytes[pos] === 0x45)) {
      pos++;
      if (pos < end && (bytes[pos] === 0x2b || bytes[pos] === MINUS)) pos++;
      if (pos >= end || !isDigit(bytes[pos])) return false;
      while (pos < end && isDigit(bytes[pos])) pos++;
    }
    this.pos = pos;
    return true;
  }

  /**
   * An integer written as plain digits (optionally negative, never `-0`), short enough to be a
   * safe integer; NaN for anything else (a fraction or exponent included: left to `JSON.parse`).
   */
  integer(): number {
    this.space();
    const bytes = this.bytes;
    const end = this.end;
    let pos = this.pos;
    const negative = pos < end && bytes[pos] === MINUS;
    if (negative) pos++;
    const first = pos;
    let value = 0;
    while (pos < end && isDigit(bytes[pos])) value = value * 10 + (bytes[pos++] - ZERO);
    const digits = pos - first;
    if (digits === 0 || digits > MAX_SAFE_DIGITS || (digits > 1 && bytes[first] === ZERO)) return Number.NaN;
    if (negative && value === 0) return Number.NaN;
    if (pos < end && (bytes[pos] === 0x2e || bytes[pos] === 0x65 || bytes[pos] === 0x45)) return Number.NaN;
    this.pos = pos;
    return negative ? -value : value;
  }

  /** Any JSON value. */
  value(depth = 0): boolean {
    const c = this.peek();
    if (c === QUOTE) return this.string();
    if (c === OPEN_BRACE) {
      if (depth >= MAX_DEPTH) return false;
      this.pos++;
      if (this.take(CLOSE_BRACE)) return true;
      do {
        if (this.peek() !== QUOTE || !this.string() || !this.take(COLON) || !this.value(depth + 1)) return false;
      } while (this.take(COMMA));
      return this.take(CLOSE_BRACE);
    }
    if (c === OPEN_BRACKET) {
      if (depth >= MAX_DEPTH) return false;
      this.pos++;
      if (this.take(CLOSE_BRACKET)) return true;
      do {
        if (!this.value(depth + 1)) return false;
      } while (this.take(COMMA));
      return this.take(CLOSE_BRACKET);
    }
    if (c === MINUS || isDigit(c)) return this.number();
    return this.word('true') || this.word('false') || this.word('null');
  }

  /** A literal (`true`, `false`, `null`). */
  word(literal: string): boolean {
    if (this.pos + literal.length > this.end) return false;
    for (let i = 0; i < literal.length; i++) if (this.bytes[this.pos + i] !== literal.charCodeAt(i)) return false;
    this.pos += literal.length;
    return true;
  }

  /** A non-empty array of strings; its length, or 0 when it is not one. */
  stringArray(): number {
    if (!this.take(OPEN_BRACKET)) return 0;
    let count = 0;
    do {
      if (this.peek() !== QUOTE || !this.string()) return 0;
      count++;
    } while (this.take(COMMA));
    return this.take(CLOSE_BRACKET) ? count : 0;
  }

  /** An array of safe integers, added up from `start`; undefined when it is not one or a sum leaves the safe range. */
  gaps(start: number): { count: number; sum: number } | undefined {
    if (!this.take(OPEN_BRACKET)) return undefined;
    let count = 0;
    let sum = start;
    if (this.take(CLOSE_BRACKET)) return { count, sum };
    do {
      const gap = this.integer();
      if (Number.isNaN(gap)) return undefined;
      sum += gap;
      if (!Number.isSafeInteger(sum)) return undefined;
      count++;
    } while (this.take(COMMA));
    return this.take(CLOSE_BRACKET) ? { count, sum } : undefined;
  }

  /**
   * A packed row's `data`, exactly as dsh writes it (rows.ts): turn, step and index numbers, the
   * members, dt one shorter; for tool calls an id and an optional name. Returns the member count
   * and the last member's time.
   */
  rowData(tag: string, time0: number): { count: number; lastTime: number } | undefined {
    if (!this.take(OPEN_BRACE)) return undefined;
    const toolCall = tag === 'tool-call-chunks';
    let seen = 0;
    let members = 0;
    let gaps: { count: number; sum: number } | undefined;
    do {
      const key = this.name(ROW_DATA_KEYS);
      if (key < 0 || (seen & (1 << key)) !== 0 || !this.take(COLON)) return undefined;
      seen |= 1 << key;
      this.space();
      if (key <= ROW_INDEX) {
        if (!(this.peek() === MINUS || isDigit(this.peek())) || !this.number()) return undefined;
      } else if (key === (toolCall ? ROW_ARGS : ROW_TEXTS)) {
        members = this.stringArray();
        if (members === 0) return undefined;
      } else if (key === ROW_DT) {
        gaps = this.gaps(time0);
        if (gaps === undefined) return undefined;
      } else if (toolCall && (key === ROW_ID || key === ROW_NAME)) {
        if (this.peek() !== QUOTE || !this.string()) return undefined;
      } else {
        return undefined;
      }
    } while (this.take(COMMA));
    if (!this.take(CLOSE_BRACE)) return undefined;
    const required = toolCall ? TOOL_ROW_REQUIRED : TEXT_ROW_REQUIRED;
    if ((seen & required) !== required || gaps === undefined || gaps.count !== members - 1) return undefined;
    return { count: members, lastTime: gaps.sum };
  }
}

/**
 * The seq and time of a line that cannot change what the index keeps, read from its bytes; or
 * undefined: parse the line (see the module comment).
 */
export function skimLine(bytes: Uint8Array): SkimmedLine | undefined {
  const skim = new Skim(bytes, bytes.length);
  if (!skim.take(OPEN_BRACE)) return undefined;
  let type: string | undefined;
  let isRow = false;
  let seq = Number.NaN;
  let time = Number.NaN;
  let row: { count: number; lastTime: number } | undefined;
  let seen = 0;
  do {
    const key = skim.name(LINE_KEYS);
    if (key < 0 || (seen & (1 << key)) !== 0 || !skim.take(COLON)) return undefined;
    seen |= 1 << key;
    switch (key) {
      case TYPE:
        type = skim.plainString();
        if (type === undefined) return undefined;
        isRow = ROW_TYPES.has(type);
        if (!isRow && !SKIMMABLE_TYPES.has(type)) return undefined;
        break;
      case SEQ:
      case SEQ0:
        seq = skim.integer();
        if (!(seq >= 0)) return undefined;
        break;
      case TIME:
      case TIME0:
        time = skim.integer();
        if (Number.isNaN(time)) return undefined;
        break;
      case DATA:
        // The kind decides what data must be: known only when `type` came first (as dsh writes it).
        if (type === undefined) return undefined;
        if (isRow) {
          if (Number.isNaN(time)) return undefined;
          row = skim.rowData(type, time);
          if (row === undefined) return undefined;
        } else if (!skim.value()) {
          return undefined;
        }
        break;
      case IGNORABLE:
      default:
        skim.space();
        if (!skim.word('true')) return undefined;
    }
  } while (skim.take(COMMA));
  if (!skim.take(CLOSE_BRACE)) return undefined;
  skim.space();
  if (skim.pos !== bytes.length || type === undefined) return undefined;
  if (isRow) {
    // Exactly {type, seq0, time0, data}.
    if (seen !== ROW_LINE_KEYS || row === undefined) return undefined;
    return { row: true, seq, count: row.count, lastTime: row.lastTime };
  }
  if ((seen & EVENT_LINE_REQUIRED) !== EVENT_LINE_REQUIRED || (seen & bits(SEQ0, TIME0)) !== 0) return undefined;
  return { row: false, seq, time };
}
