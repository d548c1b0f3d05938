/**
 * Reads one transcript's bytes, pushed in any pieces, into what dsh's read-only `inspect()` sees.
 * Committed bytes (raw: complete lines; zstd: complete frames) are folded once; the torn tail
 * (raw: a final line without `\n`; zstd: the whole blocks of a torn last frame) is read on demand
 * without being committed, so later bytes continue from the committed position. A zstd frame's
 * plaintext streams into the line scanner piece by piece, so memory is bounded by the record
 * limit, never by a frame's or a record's size.
 */
import { SessionReadError } from '../../resolver/sessionStore';
import { parseHeaderLineForLoad, type SessionHeaderRecord } from './header';
import { LineSplitter, MAX_RECORD_BYTES, SingleLineCollector, utf8Text, type CollectedLine, type LineHandler } from './lines';
import { LogFold, emptyFoldState, type EventCollection, type FoldFailure, type FoldOutcome, type LogFoldState } from './logFold';
import { RecordScanner, type ScanState } from './recordScanner';
import type { KeptEvent } from './storedLines';
import {
  MAX_FRAME_PLAINTEXT_BYTES,
  MAX_LOG_PLAINTEXT_BYTES,
  MAX_ONE_CALL_FRAME_BYTES,
  defaultZstdDecoder,
  type PlaintextSink,
  type ZstdFrameDecoder,
} from './zstdDecoder';
import { scanZstdFrame, type ZstdFrame } from './zstdFrames';
import { ByteQueue, PAST_BOUND, decodeInto, resultOf, runInSlices, type Step } from './readerSteps';
import { HeldMemory } from './heldMemory';

/** A transcript's physical encoding. */
export type TranscriptEncoding = 'raw' | 'zstd';

/** Reader options. */
export interface SessionLogReaderOptions {
  /** The id being looked up: a header naming another id is corrupt. */
  expectedId?: string;
  /** Keep the decoded events (see {@link EventCollection}); the index keeps none. */
  collectEvents?: EventCollection;
  /** Record size limit (tests lower it). */
  maxRecordBytes?: number;
  /** zstd frame decoder (tests pick one); default: {@link defaultZstdDecoder}. */
  zstdDecoder?: ZstdFrameDecoder;
  /** Read the lines that cannot change the answer without parsing them (default; tests compare). */
  skimLines?: boolean;
  /** zstd: the most plaintext the whole log is read as (default {@link MAX_LOG_PLAINTEXT_BYTES}; tests lower it). */
  maxPlaintextBytes?: number;
}

/** The log as it reads right now. */
export interface LogReading {
  /** The header, when the header line/frame is complete and valid as listing sees it. */
  header?: SessionHeaderRecord;
  /** True while no complete header line/frame exists (not an error for the index: still being written). */
  headerIncomplete: boolean;
  /** Why the log does not load (for an incomplete header: "empty or header-less"). */
  error?: SessionReadError;
  /** The folded log when it loads. */
  outcome?: FoldOutcome;
  /**
   * The kept events in log order (closers not included; which ones: `collectEvents`), when
   * collecting. A stored line reads the reader's buffer: resolve it before pushing more.
   */
  events?: KeptEvent[];
}

/** Serializable reader state (see {@link SessionLogReader.state}). */
export interface SessionLogReaderState {
  encoding: TranscriptEncoding;
  /** File offset the state covers: continue by pushing the bytes from here. */
  committedBytes: number;
  zstdFrames: number;
  /** zstd: plaintext of the complete frames decoded so far (counts toward the log's bound). */
  plaintextBytes?: number;
  header?: SessionHeaderRecord;
  headerFailure?: FoldFailure;
  structureFailure?: FoldFailure;
  scan?: ScanState;
  fold?: LogFoldState;
  /** zstd only: a line left open at the end of the last complete frame (base64) and its length. */
  openLine?: string;
  openLineBytes?: number;
}

const corrupt = (message: string): FoldFailure => ({ reason: 'corrupt', message });
const toError = (failure: FoldFailure): SessionReadError => new SessionReadError(failure.reason, failure.message);
const HEADERLESS = corrupt('corrupt session log: empty or header-less session log');
const frameTooLarge = (what: string): FoldFailure => ({
  reason: 'too-large',
  message: `record too large: ${what} may decode past ${MAX_FRAME_PLAINTEXT_BYTES} bytes`,
});
const logTooLarge = (limit: number, at: number): FoldFailure => ({
  reason: 'too-large',
  message: `record too large: the log's zstd frames decode past ${limit} bytes (at the frame at byte ${at})`,
});

/** One transcript being read; see the module comment. */
export class SessionLogReader {
  readonly maxRecordBytes: number;
  private readonly decoder: ZstdFrameDecoder | undefined;
  private readonly sink: KeptEvent[] | undefined;
  private consumedBytes = 0;
  private committedBytes: number;
  private zstdFrames: number;
  private plaintextBytes: number;
  private readonly maxPlaintextBytes: number;
  private header: SessionHeaderRecord | undefined;
  /** The header line/frame is complete but the log cannot load because of it. */
  private headerFailure: FoldFailure | undefined;
  /** zstd: the frame structure is corrupt at or after the committed position. */
  private structureFailure: FoldFailure | undefined;
  private fold: LogFold | undefined;
  private scanner: RecordScanner | undefined;
  private readonly lines: LineSplitter;
  private readonly pending = new ByteQueue();
  /** Memory from the process's read budget while the reader holds a lot (see heldMemory.ts). */
  private readonly memory: HeldMemory;
  /** What {@link prepareRead} computed, answered by the next {@link read} (a push drops it). */
  private readAhead: LogReading | undefined;

  constructor(
    readonly encoding: TranscriptEncoding,
    private readonly options: SessionLogReaderOptions = {},
    saved?: SessionLogReaderState,
  ) {
    this.maxRecordBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
    this.decoder = encoding === 'zstd' ? (options.zstdDecoder ?? defaultZstdDecoder()) : undefined;
    this.sink = options.collectEvents ? [] : undefined;
    this.lines = new LineSplitter(this.maxRecordBytes);
    this.committedBytes = saved?.committedBytes ?? 0;
    this.consumedBytes = this.committedBytes;
    this.zstdFrames = saved?.zstdFrames ?? 0;
    this.plaintextBytes = saved?.plaintextBytes ?? 0;
    this.maxPlaintextBytes = options.maxPlaintextBytes ?? MAX_LOG_PLAINTEXT_BYTES;
    this.memory = new HeldMemory(this.maxRecordBytes);
    this.header = saved?.header;
    this.headerFailure = saved?.headerFailure;
    this.structureFailure = saved?.structureFailure;
    if (saved?.header && saved.fold && saved.scan) this.startFold(saved.header, saved.fold, saved.scan);
    if (saved?.openLineBytes) {
      const line = saved.openLine === undefined ? undefined : new Uint8Array(Buffer.from(saved.openLine, 'base64'));
      this.lines.restorePending(line, saved.openLineBytes);
    }
  }

  /** The file offset everything before which has been folded for good. */
  get committed(): number {
    return this.committedBytes;
  }

  /** Bytes pushed so far (counting from the start of the file). */
  get consumed(): number {
    return this.consumedBytes;
  }

  /** Serializable state: a reader rebuilt from it continues with the bytes from `committedBytes` on. */
  state(): SessionLogReaderState {
    const saved: SessionLogReaderState = {
      encoding: this.encoding,
      committedBytes: this.committedBytes,
      zstdFrames: this.zstdFrames,
    };
    if (this.plaintextBytes > 0) saved.plaintextBytes = this.plaintextBytes;
    if (this.header) saved.header = this.header;
    if (this.headerFailure) saved.headerFailure = this.headerFailure;
    if (this.structureFailure) saved.structureFailure = this.structureFailure;
    if (this.fold && this.scanner) {
      saved.fold = structuredClone(this.fold.state);
      saved.scan = structuredClone(this.scanner.state);
    }
    if (this.encoding === 'zstd' && this.lines.pendingBytes > 0) {
      const line = this.lines.pendingLine();
      if (line) saved.openLine = Buffer.from(line).toString('base64');
      saved.openLineBytes = this.lines.pendingBytes;
    }
    return saved;
  }

  /** True when no later byte can change the answer, except a zstd structural failure (which wins over everything). */
  private get settled(): boolean {
    return (
      this.structureFailure !== undefined ||
      this.headerFailure !== undefined ||
      this.scanner?.state.fatal !== undefined
    );
  }

  /** Feeds the bytes that follow everything pushed so far. */
  push(bytes: Uint8Array): void {
    for (const _ of this.pushSteps(bytes));
  }

  /**
   * {@link push}, giving the event loop a turn every few ms while it decodes (a few KB of zstd can
   * hold a GiB of plaintext). Resolves false when `signal` stopped it: the reader is then unusable.
   * Nothing else may be called on the reader until it resolves.
   */
  pushAsync(bytes: Uint8Array, signal?: AbortSignal): Promise<boolean> {
    return this.memory.driving(signal, () => runInSlices(this.pushSteps(bytes), signal));
  }

  /** Gives back the memory the reader drew from the read budget: call when done with it. */
  releaseMemory(): void {
    this.memory.giveBack();
  }

  /** `steps` with the memory check between them: a long line may grow in any of them. */
  private *holdingBetween(steps: Generator<void, void, void>): Generator<Step, void, void> {
    for (const _ of steps) {
      yield;
      yield* this.holding(0);
    }
  }

  /** What the reader holds at once, plus `more` about to come. */
  private holding(more: number): Generator<Step, void, void> {
    return this.memory.hold(this.lines.heldBytes + this.pending.length + more);
  }

  private *pushSteps(bytes: Uint8Array): Generator<Step, void, void> {
    this.readAhead = undefined;
    this.consumedBytes += bytes.length;
    // zstd frame structure is checked over the whole file before anything is decoded (dsh's
    // order), so it is still walked after a decoding or scanning failure.
    if (this.structureFailure || (this.settled && this.encoding === 'raw')) {
      if (this.encoding === 'raw') this.committedBytes = this.consumedBytes;
      return;
    }
    try {
      yield* this.holding(bytes.length);
      if (this.encoding === 'raw') this.pushRaw(bytes);
      else yield* this.pushZstd(bytes);
      yield* this.holding(0);
    } catch (error) {
      // Our own checks failed in a way we did not foresee; a damaged file must never crash the reader.
      this.structureFailure = corrupt(`corrupt session log: unreadable (${(error as Error).message})`);
    }
  }

  private startFold(header: SessionHeaderRecord, foldState = emptyFoldState(), scanState?: ScanState): void {
    this.fold = new LogFold(header, foldState, this.sink, this.options.collectEvents);
    this.scanner = new RecordScanner(this.fold, this.maxRecordBytes, scanState, this.options.skimLines ?? true);
  }

  /** Takes the header line (text without `\n`; undefined past the limit): listing validity, then dsh's load-time header refusal. */
  private acceptHeader(line: string | undefined, length: number): void {
    if (line === undefined) {
      const message = `record too large: header has ${length} bytes (limit ${this.maxRecordBytes})`;
      this.headerFailure = { reason: 'too-large', message };
      return;
    }
    const { header, loadError } = parseHeaderLineForLoad(line);
    this.header = header;
    if (loadError) this.headerFailure = { reason: loadError.reason, message: loadError.message };
    else this.startFold(header as SessionHeaderRecord);
  }

  private pushRaw(bytes: Uint8Array): void {
    const header: LineHandler = (line, length) => {
      if (!this.settled) this.acceptHeader(line && utf8Text(line), length);
    };
    // The header line first: once it starts the fold, the lines after it go to the scanner.
    const body = this.scanner === undefined ? this.lines.pushFirstLine(bytes, header) : bytes;
    // After a header that failed, the rest is only split (what stays pending is not committed).
    if (this.scanner) this.scanner.push(this.lines, body);
    else this.lines.push(body, header);
    this.committedBytes = this.consumedBytes - this.lines.pendingBytes;
  }

  private *pushZstd(bytes: Uint8Array): Generator<Step, void, void> {
    this.pending.append(bytes);
    while (this.pending.length > 0) {
      const view = this.pending.view();
      const scan = scanZstdFrame(view, 0, this.committedBytes);
      if ('corrupt' in scan) {
        this.structureFailure = corrupt(`corrupt Zstandard session log: ${scan.corrupt}`);
        this.pending.consume(this.pending.length);
        return;
      }
      if ('torn' in scan) return;
      // Once the answer is settled, later frames are only walked, never decoded.
      if (!this.settled) yield* this.foldFrame(view.subarray(0, scan.frame.end), { ...scan.frame, start: this.committedBytes });
      this.pending.consume(scan.frame.end);
      this.committedBytes += scan.frame.end;
      this.zstdFrames++;
      yield;
      yield* this.holding(0);
    }
  }

  /**
   * Decodes a complete frame into the header (the first frame) or the event lines. A frame that
   * fails validation is corrupt whatever its plaintext said before the failure showed, so after
   * a scanning failure the rest of the frame is still decoded (not scanned) to verify it.
   */
  private *foldFrame(frame: Uint8Array, info: ZstdFrame): Generator<Step, void, void> {
    const scanner = this.zstdFrames === 0 ? undefined : (this.scanner as RecordScanner);
    const fail = (failure: FoldFailure) => {
      if (scanner) scanner.state.fatal = failure;
      else this.headerFailure = failure;
    };
    if ((info.contentSize ?? 0) > MAX_FRAME_PLAINTEXT_BYTES || info.plaintextBound > MAX_FRAME_PLAINTEXT_BYTES) {
      fail(frameTooLarge(`zstd frame at byte ${info.start}`));
      return;
    }
    const limit = this.maxPlaintextBytes;
    if (this.plaintextBytes + (info.contentSize ?? 0) > limit) {
      fail(logTooLarge(limit, info.start));
      return;
    }
    const header = scanner ? undefined : new SingleLineCollector(this.maxRecordBytes);
    const read: PlaintextSink = scanner
      ? (piece) => {
          if (scanner.state.fatal === undefined) scanner.push(this.lines, piece);
        }
      : (header as SingleLineCollector).push;
    const sink: PlaintextSink = (piece) => {
      this.plaintextBytes += piece.length;
      if (this.plaintextBytes > limit) throw PAST_BOUND;
      read(piece);
    };
    const decoder = this.decoder as ZstdFrameDecoder;
    // A frame that may be large is decoded in steps, so a reader pushed asynchronously can yield.
    const inSteps = info.plaintextBound > MAX_ONE_CALL_FRAME_BYTES ? decoder.decodeFrameInSteps?.bind(decoder) : undefined;
    let why: string | undefined;
    try {
      why = yield* decodeInto((into) => (inSteps ? this.holdingBetween(inSteps(frame, info, into)) : decoder.decodeFrame(frame, info, into)), sink);
    } catch (error) {
      if (error !== PAST_BOUND) throw error;
      fail(logTooLarge(limit, info.start));
      return;
    }
    if (why !== undefined) {
      fail(corrupt(`corrupt Zstandard session log: frame at byte ${info.start} failed validation (${why})`));
    } else if (header) {
      this.acceptHeaderFrame(header.result());
    }
  }

  private acceptHeaderFrame(line: CollectedLine | undefined): void {
    if (line === undefined) {
      this.headerFailure = corrupt('corrupt Zstandard session log: first frame is not exactly one header line');
      return;
    }
    this.acceptHeader(line.text, line.length);
  }

  /** The log as it reads now (the torn tail is read into a copy: pushing may go on afterwards). */
  read(): LogReading {
    const ahead = this.readAhead;
    this.readAhead = undefined;
    return ahead ?? resultOf(this.readSteps());
  }

  /**
   * Computes what {@link read} will answer (until the next push), yielding to the event loop while
   * a torn last frame's blocks are decoded; false when `signal` stopped it.
   */
  async prepareRead(signal?: AbortSignal): Promise<boolean> {
    let reading: LogReading | undefined;
    const steps = this.readSteps();
    const finished = await runInSlices(
      (function* () {
        reading = yield* steps;
      })(),
      signal,
    );
    this.readAhead = reading;
    return finished;
  }

  private *readSteps(): Generator<Step, LogReading, void> {
    try {
      return yield* this.readNow();
    } catch (error) {
      const failure = corrupt(`corrupt session log: unreadable (${(error as Error).message})`);
      return { header: this.header, headerIncomplete: false, error: toError(failure) };
    }
  }

  private *readNow(): Generator<Step, LogReading, void> {
    const header = this.header;
    if (this.structureFailure) return { header, headerIncomplete: false, error: toError(this.structureFailure) };
    if (this.headerFailure) return { header, headerIncomplete: false, error: toError(this.headerFailure) };
    if (!this.fold || !this.scanner) {
      if (this.encoding === 'raw' && this.lines.pendingBytes > this.maxRecordBytes) {
        const message = `record too large: header has more than ${this.maxRecordBytes} bytes`;
        return { headerIncomplete: false, error: new SessionReadError('too-large', message) };
      }
      return { headerIncomplete: true, error: toError(HEADERLESS) };
    }
    const failed = (failure: FoldFailure): LogReading => ({ header, headerIncomplete: false, error: toError(failure) });
    if (this.scanner.state.fatal) return failed(this.scanner.state.fatal);

    if (this.encoding === 'zstd' && (!this.scanner.clean || this.lines.pendingBytes > 0)) {
      return failed(corrupt('corrupt Zstandard session log: complete frame contains a torn JSONL record'));
    }
    let fold = this.fold;
    let sink = this.sink;
    const scan = this.encoding === 'zstd' && this.pending.length > 0 ? scanZstdFrame(this.pending.view(), 0) : undefined;
    // pushZstd consumed every complete frame and stopped at corruption, so only a torn frame is left.
    const torn = scan && 'torn' in scan ? scan.torn : undefined;
    if (torn?.headerEnd !== undefined && torn.blocksEnd !== undefined && torn.blocksEnd > torn.headerEnd) {
      if (torn.plaintextBound > MAX_FRAME_PLAINTEXT_BYTES) {
        return failed(frameTooLarge(`torn zstd frame at byte ${this.committedBytes}`));
      }
      // Its whole blocks are read into a copy: if they fail to decode, the frame holds nothing (as dsh's flush-mode read).
      const tornSink = this.sink ? [...this.sink] : undefined;
      const tornFold = this.fold.fork(tornSink);
      const scanner = this.scanner.fork(tornFold);
      // A line left open at the end of the torn frame's blocks is dropped with the copy.
      const lines = this.lines.fork();
      const prefix = this.pending.view().subarray(0, torn.blocksEnd);
      const decoder = this.decoder as ZstdFrameDecoder;
      let plaintextBytes = this.plaintextBytes;
      let why: string | undefined;
      try {
        const inSteps = torn.plaintextBound > MAX_ONE_CALL_FRAME_BYTES ? decoder.decodeBlocksInSteps?.bind(decoder) : undefined;
        why = yield* decodeInto(
          (into) => (inSteps ? inSteps(prefix, torn, into) : decoder.decodeBlocks(prefix, torn, into)),
          (piece) => {
            plaintextBytes += piece.length;
            if (plaintextBytes > this.maxPlaintextBytes) throw PAST_BOUND;
            if (scanner.state.fatal === undefined) scanner.push(lines, piece);
          },
        );
      } catch (error) {
        if (error !== PAST_BOUND) throw error;
        return failed(logTooLarge(this.maxPlaintextBytes, this.committedBytes));
      }
      if (why === undefined) {
        if (scanner.state.fatal) return failed(scanner.state.fatal);
        fold = tornFold;
        sink = tornSink;
      }
    }
    const expectedId = this.options.expectedId;
    if (expectedId !== undefined && header?.id !== expectedId) {
      const found = JSON.stringify(header?.id);
      return failed(corrupt(`stored session identity mismatch: requested ${JSON.stringify(expectedId)}, header contains ${found}`));
    }
    const outcome = fold.finish();
    if (outcome.error) return { header, headerIncomplete: false, error: outcome.error };
    return { header, headerIncomplete: false, outcome, events: sink };
  }
}
