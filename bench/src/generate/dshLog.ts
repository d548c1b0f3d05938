/**
 * The one writer of dsh session logs for tests, fixtures and the bench (dsh-session-store.md §2–§5):
 * header and event lines in dsh's key order, packed chunk rows, append batches, and the transcript
 * bytes in both encodings (raw JSONL; zstd: one frame per batch, shaped like the frames dsh writes
 * through Node's zlib).
 *
 * It lives in the bench because the bench's build (rootDir bench/src) can compile nothing outside
 * it, while the server's unit tests reach it through server/src/testing/ (excluded from the server
 * build, so none of this ships). It imports nothing from the server.
 */
import { execFileSync } from 'node:child_process';
import zlib from 'node:zlib';

/** A surface operation (§6.1). */
export type SurfaceOp = 'append' | { op: 'replace'; start: number; end: number };

/** One decoded event as a log holds it (structurally the server's `SessionEventRecord`). */
export interface EventRecord {
  type: string;
  seq: number;
  time?: number;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- any payload, as the server's record
  surfaceOp?: SurfaceOp;
  sourceEventSeqs?: number[];
}

/** Envelope keys after `data`, in dsh's order; anything else given is written after them. */
export interface EventExtra {
  sourceEventSeqs?: number[];
  surfaceOp?: SurfaceOp;
  [key: string]: unknown;
}

/** Header fields (§2); the line is written in dsh's key order. */
export interface HeaderFields {
  id: string;
  createdAt: number;
  /** Absent: the header has no cwd (`_no-cwd`). */
  cwd?: string;
  /** Set for subagent children (then `origin: 'subagent'` and depth 1 by default). */
  parentSession?: string;
  delegationDepth?: number;
  [key: string]: unknown;
}

/** The header record: `{type, version, id, createdAt, cwd?, parentSession?, origin?, delegationDepth, ...rest}`. */
export function headerRecord(fields: HeaderFields): Record<string, unknown> {
  const { id, createdAt, cwd, parentSession, delegationDepth, ...rest } = fields;
  const record: Record<string, unknown> = { type: 'session', version: 0, id, createdAt };
  if (cwd !== undefined) record.cwd = cwd;
  if (parentSession !== undefined) {
    record.parentSession = parentSession;
    record.origin = 'subagent';
  }
  record.delegationDepth = delegationDepth ?? (parentSession !== undefined ? 1 : 0);
  return Object.assign(record, rest);
}

/** An event record: `{type, seq, time, data, sourceEventSeqs?, surfaceOp?, ...rest}` (undefined keys are not written). */
export function eventRecord(type: string, seq: number, time: number | undefined, data: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { sourceEventSeqs, surfaceOp, ...rest } = extra;
  const record: Record<string, unknown> = { type, seq, time, data };
  if (sourceEventSeqs !== undefined) record.sourceEventSeqs = sourceEventSeqs;
  if (surfaceOp !== undefined) record.surfaceOp = surfaceOp;
  return Object.assign(record, rest);
}

/** The content of a message: a string is one text block. */
export type Content = string | unknown[];

const blocks = (content: Content): unknown[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : content);

/** The model source the convenience writers give assistant messages. */
export const MODEL_SOURCE = { kind: 'model', provider: 'deepseek-official', model: 'deepseek-v4-flash' } as const;

/** Where `DshLog` takes event times from. */
export type Clock =
  /** `epoch + seq` (the default, epoch 1_700_000_000_000). */
  | { epoch: number }
  /** A clock the writer moves with `tick`, `at` and packed rows' `dt`. */
  | { start: number };

/**
 * Writes one session's log, numbering seqs from 0: every writer returns the seq it used, so later
 * events (replacements, titles) can cite it. `flush()` ends an append batch (one zstd frame).
 */
export class DshLog {
  /** The next seq. */
  seq = 0;
  /** Characters written so far (header excluded). */
  chars = 0;
  /** The last line written, without its `\n`. */
  lastLine = '';
  private header: string | undefined;
  /** The current surface's seqs, in surface order (§6.1), as the events written so far fold. */
  private readonly surfaceNow: number[] = [];
  private readonly done: string[][] = [];
  private pending: string[] = [];
  private readonly epoch: number | undefined;
  private clock: number;

  constructor(options: { header?: HeaderFields; clock?: Clock } = {}) {
    const clock = options.clock ?? { epoch: 1_700_000_000_000 };
    this.epoch = 'epoch' in clock ? clock.epoch : undefined;
    this.clock = 'start' in clock ? clock.start : 0;
    if (options.header !== undefined) this.header = JSON.stringify(headerRecord(options.header));
  }

  /** The time the next event gets. */
  get time(): number {
    return this.epoch !== undefined ? this.epoch + this.seq : this.clock;
  }

  /** Move a writer-driven clock on. */
  tick(ms: number): this {
    this.clock += ms;
    return this;
  }

  /** Set a writer-driven clock. @forTests */
  at(time: number): this {
    this.clock = time;
    return this;
  }

  /** Any event (surface events need a `surfaceOp`); returns its seq. */
  event(type: string, data: unknown, extra: EventExtra = {}): number {
    const seq = this.seq;
    this.write(JSON.stringify(eventRecord(type, seq, this.time, data, extra)));
    this.seq += 1;
    const op = extra.surfaceOp;
    if (op === 'append') this.surfaceNow.push(seq);
    else if (op !== undefined) {
      const range = this.shadowedBy(op.start, op.end);
      // A range not on the surface (a deliberately corrupt log) leaves the surface as it was.
      if (range !== undefined) this.surfaceNow.splice(range.from, range.count, seq);
    }
    return seq;
  }

  /** The current surface's seqs, in surface order. */
  surface(): readonly number[] {
    return this.surfaceNow;
  }

  /** The surface nodes from seq `start` through seq `end`, by their position on the surface. */
  shadowed(start: number, end: number): number[] {
    const range = this.shadowedBy(start, end);
    return range === undefined ? [] : this.surfaceNow.slice(range.from, range.from + range.count);
  }

  private shadowedBy(start: number, end: number): { from: number; count: number } | undefined {
    const from = this.surfaceNow.indexOf(start);
    const to = this.surfaceNow.indexOf(end);
    return from < 0 || to < from ? undefined : { from, count: to - from + 1 };
  }

  /** A packed chunk row (§4) covering `members` seqs from the next one; returns those seqs. */
  row(type: 'text-chunks' | 'reasoning-chunks' | 'tool-call-chunks', data: Record<string, unknown>, members: number, dt: readonly number[]): number[] {
    const seq0 = this.seq;
    this.write(JSON.stringify({ type, seq0, time0: this.time, data }));
    this.seq += members;
    for (const gap of dt) this.clock += gap;
    return Array.from({ length: members }, (_, k) => seq0 + k);
  }

  /** A `user/message` appended to the surface; the default source is a direct prompt `{kind:'user'}`. @forTests */
  user(content: Content, source: Record<string, unknown> = { kind: 'user' }): number {
    return this.event('user/message', { id: `u-${this.seq}`, role: 'user', content: blocks(content), source }, { surfaceOp: 'append' });
  }

  /** An `assistant/message` appended to the surface (turn 1, step 1 unless given). @forTests */
  assistant(content: Content, where: { turn?: number; step?: number; source?: unknown } = {}): number {
    const message = { id: `a-${this.seq}`, role: 'assistant', content: blocks(content), source: where.source ?? { kind: 'model', provider: 'p', model: 'm' } };
    return this.event('assistant/message', { turn: where.turn ?? 1, step: where.step ?? 1, message }, { surfaceOp: 'append' });
  }

  /** A `tool/result` appended to the surface. @forTests */
  toolResult(callId: string, text: string): number {
    const content = [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError: false }];
    const message = { id: `t-${this.seq}`, role: 'user', content, source: { kind: 'tool', callId } };
    return this.event('tool/result', { turn: 1, step: 1, message }, { surfaceOp: 'append' });
  }

  /**
   * A compaction checkpoint replacing the surface nodes from seq `start` through seq `end`; its
   * `sourceEventSeqs` are `sources` (e.g. the bracket's compaction/start and summary) and then
   * every node it shadows, as dsh writes them.
   * @forTests
   */
  checkpoint(content: Content, start: number, end: number, sources: readonly number[] = []): number {
    const source = { kind: 'plugin', plugin: 'compact', compactionId: `c-${this.seq}` };
    const sourceEventSeqs = [...sources, ...this.shadowed(start, end)];
    return this.event('user/message', { id: `c-${this.seq}`, role: 'user', content: blocks(content), source }, { sourceEventSeqs, surfaceOp: { op: 'replace', start, end } });
  }

  /** A `session/title` event (log-only); the default source is a user rename. @forTests */
  title(title: string, messageSeqs: number[] = [], source: unknown = { kind: 'user' }): number {
    return this.event('session/title', { title, messageSeqs, source });
  }

  /** End the current append batch (a coalescing window closed, or an explicit flush). */
  flush(): this {
    if (this.pending.length > 0) this.done.push(this.pending);
    this.pending = [];
    return this;
  }

  /** The header line, if the log has one. @forTests */
  headerLine(): string | undefined {
    return this.header;
  }

  /** The lines of each batch: the header alone first (if any), then the flushed batches and the open one. */
  batches(): string[][] {
    const batches = [...this.done, ...(this.pending.length > 0 ? [this.pending] : [])].map((batch) => [...batch]);
    return this.header === undefined ? batches : [[this.header], ...batches];
  }

  /** Every line, header first. */
  lines(): string[] {
    return this.batches().flat();
  }

  /** The events written so far (packed rows as written, not expanded), without the header. @forTests */
  events(): EventRecord[] {
    return [...this.done.flat(), ...this.pending].map((line) => JSON.parse(line) as EventRecord);
  }

  /** The `session.jsonl` bytes. @forTests */
  raw(): Uint8Array {
    return rawTranscript(this.lines());
  }

  /** The `session.jsonl.zstd` bytes: one frame per batch. @forTests */
  zstd(): Uint8Array {
    return zstdTranscript(this.batches());
  }

  private write(line: string): void {
    this.pending.push(line);
    this.chars += line.length + 1;
    this.lastLine = line;
  }
}

const encoder = new TextEncoder();

/** A plain `session.jsonl`: each line followed by `\n`. */
export function rawTranscript(lines: readonly string[]): Uint8Array {
  return encoder.encode(lines.map((line) => `${line}\n`).join(''));
}

/** Byte arrays joined. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Window descriptor of the frames Node's zlib writes for dsh: 2 MiB (windowLog 21, size unknown up front). */
export const NODE_WINDOW_DESCRIPTOR = 0x58;

/** `zstd` CLI arguments for a frame like dsh's: content checksum, no content size. */
export const ZSTD_CLI_ARGS = ['-q', '--check', '--no-content-size', '-c'] as const;

/**
 * Make a frame look like the ones dsh writes through Node's zlib (descriptor 0x04: checksum, no
 * content size; window 2 MiB). The CLI sizes the window to the input; a larger declared window is
 * always valid (the checksum covers only the content), and decoders size their buffers by it.
 */
export function likeDshFrame<T extends Uint8Array>(frame: T): T {
  if (frame[4] !== 0x04) throw new Error(`unexpected zstd frame descriptor 0x${frame[4]!.toString(16)}`);
  if (frame[5]! < NODE_WINDOW_DESCRIPTOR) frame[5] = NODE_WINDOW_DESCRIPTOR;
  return frame;
}

type ZstdCompressSync = (data: Uint8Array, options?: { params?: Record<number, number> }) => Buffer;

/** Node ≥ 22.15 has zstd in zlib (its typings on Node 20 do not, hence the probe); undefined before. */
export function builtinZstdCompressor(): ((part: Uint8Array) => Buffer) | undefined {
  const z = zlib as unknown as { zstdCompressSync?: ZstdCompressSync; constants: Record<string, number> };
  const checksumFlag = z.constants.ZSTD_c_checksumFlag;
  const contentSizeFlag = z.constants.ZSTD_c_contentSizeFlag;
  if (typeof z.zstdCompressSync !== 'function' || checksumFlag === undefined || contentSizeFlag === undefined) return undefined;
  const compress = z.zstdCompressSync;
  // A one-shot compression declares the content size (and may use a single-segment header);
  // dsh's streamed frames do not, so neither may ours.
  return (part) => likeDshFrame(compress(part, { params: { [checksumFlag]: 1, [contentSizeFlag]: 0 } }));
}

const builtin = builtinZstdCompressor();

/** One zstd frame of any bytes, as dsh writes it (node:zlib when it has zstd, else the `zstd` command). */
export function zstdFrameOf(bytes: Uint8Array): Uint8Array {
  if (builtin !== undefined) return new Uint8Array(builtin(bytes));
  return likeDshFrame(new Uint8Array(execFileSync('zstd', ZSTD_CLI_ARGS, { input: bytes, maxBuffer: 1 << 30 })));
}

/** One zstd frame holding the given lines. */
export function zstdFrame(lines: readonly string[]): Uint8Array {
  return zstdFrameOf(rawTranscript(lines));
}

/** A `session.jsonl.zstd`: one frame per part (the header line alone in the first part). */
export function zstdTranscript(parts: readonly (readonly string[])[]): Uint8Array {
  return concatBytes(parts.map(zstdFrame));
}

/** A header line for a hand-made session (cwd /home/alice/proj unless `extra` says otherwise). @forTests */
export function headerLine(id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...headerRecord({ id, createdAt: 1767225600000, cwd: '/home/alice/proj' }), ...extra });
}

const at = (seq: number): number => 1767300000000 + seq;
const line = (type: string, seq: number, data: unknown, extra?: Record<string, unknown>): string => JSON.stringify(eventRecord(type, seq, at(seq), data, extra));

/**
 * Event lines with explicit seqs (time derived from the seq), for hand-made and deliberately odd
 * logs; `extra` (any keys and values, odd ones included) replaces the default envelope keys after `data`.
 * @forTests
 */
export const ev = {
  /** Any event. */
  of: (type: string, seq: number, data: unknown, extra: Record<string, unknown> = {}) => line(type, seq, data, extra),
  turnStart: (seq: number, turn = 1) => line('turn/start', seq, { turn }),
  turnEnd: (seq: number, turn = 1) => line('turn/end', seq, { turn, reason: { kind: 'completed' } }),
  stepStart: (seq: number, step = 1, turn = 1) => line('step/start', seq, { turn, step }),
  stepEnd: (seq: number, step = 1, turn = 1) => line('step/end', seq, { turn, step }),
  user: (seq: number, text: string, extra: Record<string, unknown> = { surfaceOp: 'append' }, source: unknown = { kind: 'user' }) =>
    line('user/message', seq, { content: [{ type: 'text', text }], source, role: 'user', id: `u-${seq}` }, extra),
  assistant: (seq: number, content: unknown[], extra: Record<string, unknown> = { surfaceOp: 'append' }) =>
    line('assistant/message', seq, { turn: 1, step: 1, message: { role: 'assistant', content, source: MODEL_SOURCE, id: `a-${seq}` } }, extra),
  toolCall: (seq: number, callId: string) => line('tool/call', seq, { turn: 1, step: 1, callId, name: 'read', arguments: '{}' }),
  toolResult: (seq: number, callId: string, text: string, extra: Record<string, unknown> = { surfaceOp: 'append' }, id = `t-${seq}`) =>
    line(
      'tool/result',
      seq,
      {
        turn: 1,
        step: 1,
        message: {
          source: { kind: 'tool', callId },
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError: false }],
          role: 'user',
          id,
        },
      },
      extra,
    ),
  title: (seq: number, title: string) => line('session/title', seq, { title, messageSeqs: [], source: { kind: 'user' } }),
};

/** A tool-call content block. @forTests */
export function toolCallBlock(id: string): Record<string, unknown> {
  return { type: 'tool-call', id, name: 'read', arguments: '{}' };
}
