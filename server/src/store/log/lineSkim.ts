/**
 * Most lines of a dsh log change what the index keeps of it in a few predictable ways only:
 * `assistant/chunk` deltas, packed chunk rows (store doc §4), `request/context` and other kinds
 * that no load stage looks into only move the next seq and the last time; a plain appended
 * `assistant/message` or `user/message` also puts one node on the surface (and an assistant's
 * tool-call blocks become pending calls); a plain appended `tool/result` answers its call and puts
 * one node on the surface with the fingerprint a later rewrite is checked against (its rewrite
 * key, which the skim computes from the bytes when they are already in canonical form). This
 * module reads what the fold needs of such lines
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
 *
 * The skim itself is C compiled to WebAssembly with 128-bit SIMD (`server/wasm/lineSkim.c`,
 * committed as base64 in `lineSkimWasm.ts`): in V8 it reads these bytes ~1.5× as fast as the same
 * loop in JavaScript, and fast from the first line (no interpreter warm-up). This module copies a
 * line, or a whole chunk for {@link LineSkim.run}, into the module's memory and reads back what it
 * found.
 */
import { KNOWN_EVENT_TYPES } from './eventRules';
import { utf8Text } from './lines';
import { LINE_SKIM_WASM } from './lineSkimWasm';
import { compileForThisThread } from './wasmCompile';

/** A tool call an assistant message requests: its block's `id` and the message's `data.step` (undefined when absent). */
export type RequestedCall = [callId: unknown, step: unknown];

/** The event kinds the closers' tracking follows (closers.ts), which the skim reads too. */
export type TrackedKind = 'turn/start' | 'turn/end' | 'step/start' | 'step/end' | 'tool/call';

/** What a skimmed line stands for, as the fold needs it. */
export type SkimmedLine =
  /** One event of a kind that only moves the seq and the last time. */
  | { row: false; seq: number; time: number; surface?: undefined; track?: undefined }
  /**
   * One valid event the closers' tracking follows, in a form no load stage changes: `value` is
   * what the tracking reads of its data (`data.turn` of a turn/start, `data.step` of a
   * step/start, `data.callId` of a tool/call; undefined when absent or for the other kinds).
   */
  | { row: false; seq: number; time: number; surface?: undefined; track: TrackedKind; value: unknown }
  /**
   * A valid `assistant/message` ('a') or `user/message` ('u') appended to the surface, without
   * provenance problems; `calls` are its tool-call blocks, in order.
   */
  | { row: false; seq: number; time: number; surface: 'a' | 'u'; calls: RequestedCall[]; track?: undefined }
  /**
   * A `tool/result` the skim does not fold (see the next kind) whose
   * `data.message.content[0].content` is an array at bytes `content` (start, end), the line being
   * valid JSON: it must still be parsed, but that array (the tool's
   * output, most of the line) may be read as `[]`, since no check looks into it (it is blanked in
   * the rewrite key) beyond its being an array.
   */
  | { row: false; seq: number; time: number; surface: 't'; content: [start: number, end: number]; track?: undefined }
  /**
   * A valid appended `tool/result` the skim folded itself: what the surface keeps of it (the
   * rewrite key, exactly as surfaceFold.ts's `rewriteKey` makes it, and the message id) and the
   * call it answers.
   */
  | { row: false; seq: number; time: number; surface: 'tool'; key: string; messageId: string; callId: string; track?: undefined }
  /** A packed row of `count` `assistant/chunk` events, from `seq` on. */
  | { row: true; seq: number; count: number; lastTime: number };

/**
 * Event kinds whose valid events no stage of a load looks into beyond the envelope: not the
 * surface types, not what closers track (turn/step starts and ends, tool calls: the skim reads
 * those as tracked kinds), not the title, not a request header (its config is checked), none with
 * a legacy form.
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
const TOOL_FOLDED = 12;
/** The tracked kinds, codes 7 to 11 in this order. */
const TRACKED: readonly TrackedKind[] = ['turn/start', 'turn/end', 'step/start', 'step/end', 'tool/call'];
const FIRST_TRACKED = 7;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const NINE = 0x39;
/** Integers of at most this many digits are safe integers. */
const MAX_SAFE_DIGITS = 15;

/** The little of the WebAssembly API used here (the compiler's ES2022 library does not type it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The exports of `server/wasm/lineSkim.c`. */
interface SkimExports {
  memory: { readonly buffer: ArrayBuffer };
  line_buffer(length: number): number;
  add_type(length: number, code: number): number;
  skim_line(length: number): number;
  skim_run(start: number, length: number, expected: number, maxLine: number): void;
  results(): number;
  run_results(): number;
  calls(): number;
  tool_results(): number;
}

/** One instance of the skim (one per thread): a line is copied into its memory and skimmed there. */
export class LineSkim {
  private heap: Uint8Array;
  /** `struct results`: seq, time, count, last_time as doubles, then content, step and call ranges as int32. */
  private numbers: Float64Array;
  private ranges: Int32Array;
  private callIds: Int32Array;
  /** `struct run`: event_count, last_time as doubles, then lines, next, stop_code, stop_end, reset as int32. */
  private runNumbers: Float64Array;
  private runInts: Int32Array;
  /** `struct tool`: the message id's and the call id's ranges as int32, then the key's 44 bytes. */
  private toolRanges: Int32Array;
  private toolKey: Uint8Array;

  constructor(private readonly wasm: SkimExports) {
    this.heap = this.numbers = this.ranges = this.callIds = this.runNumbers = this.runInts = this.toolRanges = this.toolKey = undefined as never;
    this.views();
    const types: Array<[string, number]> = [];
    for (const type of KNOWN_EVENT_TYPES) if (!LOOKED_INTO.has(type)) types.push([type, PLAIN]);
    types.push(['text-chunks', TEXT_ROW], ['reasoning-chunks', TEXT_ROW], ['tool-call-chunks', TOOL_ROW]);
    types.push(['assistant/message', ASSISTANT], ['user/message', USER], ['tool/result', TOOL_RESULT]);
    TRACKED.forEach((kind, i) => types.push([kind, FIRST_TRACKED + i]));
    for (const [name, code] of types) {
      const bytes = Buffer.from(name, 'latin1');
      if (!this.stage(bytes) || wasm.add_type(bytes.length, code) !== 1) throw new Error(`line skim: cannot add the type ${name}`);
    }
  }

  private views(): void {
    const buffer = this.wasm.memory.buffer;
    this.heap = new Uint8Array(buffer);
    this.numbers = new Float64Array(buffer, this.wasm.results(), 4);
    this.ranges = new Int32Array(buffer, this.wasm.results() + 32, 5);
    this.callIds = new Int32Array(buffer, this.wasm.calls(), 2048);
    this.runNumbers = new Float64Array(buffer, this.wasm.run_results(), 2);
    this.runInts = new Int32Array(buffer, this.wasm.run_results() + 16, 5);
    this.toolRanges = new Int32Array(buffer, this.wasm.tool_results(), 4);
    this.toolKey = new Uint8Array(buffer, this.wasm.tool_results() + 16, 44);
  }

  /** Where a line of `length` bytes goes (0 when the memory cannot hold it). */
  private buffer(length: number): number {
    const pointer = this.wasm.line_buffer(length);
    // Growing the memory detaches the views' buffer.
    if (this.heap.length === 0) this.views();
    this.pointer = pointer;
    this.capacity = pointer === 0 ? 0 : this.heap.length - pointer - 16;
    return pointer;
  }

  /** The line buffer and how long a line it holds without growing. */
  private pointer = 0;
  private capacity = 0;

  line(bytes: Uint8Array): SkimmedLine | undefined {
    return this.stage(bytes) ? this.found(this.wasm.skim_line(bytes.length), bytes) : undefined;
  }

  /** What the skim found of `bytes` (the line it last read), given its code. */
  found(code: number, bytes: Uint8Array): SkimmedLine | undefined {
    if (code === 0) return undefined;
    const numbers = this.numbers;
    const seq = numbers[0];
    if (code === TEXT_ROW || code === TOOL_ROW) return { row: true, seq, count: numbers[2], lastTime: numbers[3] };
    const time = numbers[1];
    if (code === PLAIN) return { row: false, seq, time };
    const ranges = this.ranges;
    if (code === TOOL_RESULT) return { row: false, seq, time, surface: 't', content: [ranges[0], ranges[1]] };
    if (code === TOOL_FOLDED) {
      // Both ids are strings without escapes: their bytes decoded.
      const tool = this.toolRanges;
      const key = Buffer.from(this.toolKey.buffer, this.toolKey.byteOffset, 44).toString('latin1');
      return { row: false, seq, time, surface: 'tool', key, messageId: utf8Text(bytes.subarray(tool[0], tool[1])), callId: utf8Text(bytes.subarray(tool[2], tool[3])) };
    }
    if (code >= FIRST_TRACKED) {
      // The value's range shares the fields of an assistant message's step.
      return { row: false, seq, time, track: TRACKED[code - FIRST_TRACKED]!, value: ranges[2] < 0 ? undefined : parseRange(bytes, ranges[2], ranges[3]) };
    }
    const calls: RequestedCall[] = [];
    const callCount = ranges[4];
    if (callCount > 0) {
      const step = ranges[2] < 0 ? undefined : parseRange(bytes, ranges[2], ranges[3]);
      const ids = this.callIds;
      for (let i = 0; i < 2 * callCount; i += 2) calls.push([ids[i] < 0 ? undefined : parseRange(bytes, ids[i], ids[i + 1]), step]);
    }
    return { row: false, seq, time, surface: code === ASSISTANT ? 'a' : 'u', calls };
  }

  /** Copies `chunk` (a line, or a chunk for {@link run}) into the skim's memory; false when the memory cannot hold it. */
  stage(chunk: Uint8Array): boolean {
    const pointer = chunk.length <= this.capacity ? this.pointer : this.buffer(chunk.length);
    if (pointer === 0) return false;
    this.heap.set(chunk, pointer);
    return true;
  }

  /** Skims the staged chunk's lines from `start` (see `skim_run` in lineSkim.c). */
  run(start: number, length: number, expected: number, maxLine: number): SkimRun {
    this.wasm.skim_run(start, length, expected, maxLine);
    const numbers = this.runNumbers;
    const ints = this.runInts;
    return { eventCount: numbers[0], lastTime: numbers[1], lines: ints[0], next: ints[1], stop: ints[2], stopEnd: ints[3], reset: ints[4] as SkimRun['reset'] };
  }
}

/** What {@link LineSkim.run} read of a chunk. */
export interface SkimRun {
  /** The fold's event count and last time after the lines read (lastTime only when `lines` > 0). */
  eventCount: number;
  lastTime: number;
  /**
   * How many lines were read, each an event or packed row that only moves the count and the time,
   * or a turn/end or step/end.
   */
  lines: number;
  /**
   * What those turn/end and step/end lines did to the closers' tracking: {@link TURN_RESET} when
   * one was a turn/end, else {@link STEP_RESET} when one was a step/end, else {@link NO_RESET}.
   */
  reset: typeof NO_RESET | typeof STEP_RESET | typeof TURN_RESET;
  /** Where the first line not read begins. */
  next: number;
  /**
   * Why the run stopped: {@link RUN_END} (no complete line left), {@link RUN_TOO_LONG} (the line
   * at `next` is longer than the limit), or the skim code of the complete line `next`..`stopEnd`,
   * whose {@link LineSkim.found} tells what it is (0: parse it).
   */
  stop: number;
  stopEnd: number;
}
export const RUN_END = -1;
export const RUN_TOO_LONG = -2;
export const NO_RESET = 0;
export const STEP_RESET = 1;
export const TURN_RESET = 2;

/** This thread's skim: undefined until the first line, null where WebAssembly cannot run it. */
let SKIM: LineSkim | null | undefined;

/** Off only in the bench's variant build without the skim (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_LINE_SKIM: boolean | undefined;
const SKIM_ON = typeof DSH_DEVICE_LINE_SKIM === 'undefined' || DSH_DEVICE_LINE_SKIM;

function loadSkim(): LineSkim | null {
  // The plain path: every line is parsed.
  if (!SKIM_ON) return (SKIM = null);
  try {
    const exports = compileForThisThread(() => new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(LINE_SKIM_WASM, 'base64'))).exports);
    SKIM = new LineSkim(exports as SkimExports);
  } catch {
    SKIM = null;
  }
  return SKIM;
}

/** This thread's skim, or null where WebAssembly cannot run it (every line is then parsed). */
export function lineSkim(): LineSkim | null {
  return SKIM ?? loadSkim();
}
/**
 * A value's bytes as `JSON.parse` reads them (a small range: a call id or a step). A string
 * without escapes is its bytes decoded (they begin and end at ASCII quotes, where UTF-8 decoding
 * resynchronizes), a short run of digits their number; anything else goes to `JSON.parse`.
 */
function parseRange(b: Uint8Array, start: number, end: number): unknown {
  if (b[start] === QUOTE && b.subarray(start + 1, end - 1).indexOf(BACKSLASH) < 0) return utf8Text(b.subarray(start + 1, end - 1));
  if (end - start <= MAX_SAFE_DIGITS && (b[start] !== ZERO || end - start === 1)) {
    let number = 0;
    let p = start;
    while (p < end && b[p] >= ZERO && b[p] <= NINE) number = number * 10 + (b[p++] - ZERO);
    if (p === end) return number;
  }
  return JSON.parse(utf8Text(b.subarray(start, end)));
}

/**
 * What the fold needs of a line that only moves the seq and the last time, or appends a plain
 * message to the surface, read from its bytes; or undefined: parse the line (see the module comment).
 * @forTests
 */
export function skimLine(bytes: Uint8Array): SkimmedLine | undefined {
  const skim = SKIM ?? loadSkim();
  return skim === null ? undefined : skim.line(bytes);
}
