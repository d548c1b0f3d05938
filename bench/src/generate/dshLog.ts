/**
 * The one writer of dsh session logs for tests, fixtures and the bench (dsh-session-store.md §2–§5):
 * header and event lines in dsh's key order, packed chunk rows, append batches, and zstd frames
 * shaped like the ones dsh writes through Node's zlib.
 *
 * It lives in the bench because the bench's build (rootDir bench/src) can compile nothing outside
 * it. Tests reach it through server/src/testing/testLogs.ts (excluded from the server build, so none
 * of this ships), which adds what only tests write: hand-made messages, checkpoints and titles, and
 * the transcript bytes in both encodings. It imports nothing from the server.
 */
import zlib from 'node:zlib';

/** A surface operation (§6.1). */
export type SurfaceOp = 'append' | { op: 'replace'; start: number; end: number };

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
  protected shadowed(start: number, end: number): number[] {
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

  /** End the current append batch (a coalescing window closed, or an explicit flush). */
  flush(): this {
    if (this.pending.length > 0) this.done.push(this.pending);
    this.pending = [];
    return this;
  }

  /** The lines of each batch: the header alone first (if any), then the flushed batches and the open one. */
  batches(): string[][] {
    const batches = [...this.done, ...(this.pending.length > 0 ? [this.pending] : [])].map((batch) => [...batch]);
    return this.header === undefined ? batches : [[this.header], ...batches];
  }

  private write(line: string): void {
    this.pending.push(line);
    this.chars += line.length + 1;
    this.lastLine = line;
  }
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
