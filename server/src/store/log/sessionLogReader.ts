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
import { MAX_FRAME_PLAINTEXT_BYTES, defaultZstdDecoder, type PlaintextSink, type ZstdFrameDecoder } from './zstdDecoder';
import { scanZstdFrame, type ZstdFrame } from './zstdFrames';

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
  header?: SessionHeaderRecord;
  headerFailure?: FoldFailure;
  structureFailure?: FoldFailure;
  scan?: ScanState;
  fold?: LogFoldState;
  /** zstd only: a line left open at the end of the last complete frame (base64) and its length. */
  openLine?: string;
  openLineBytes?: number;
}

const EMPTY = new Uint8Array(0);

/** Appended bytes not yet consumed, without quadratic copying. */
class ByteQueue {
  private buffer = EMPTY;
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  view(): Uint8Array {
    return this.buffer.subarray(this.start, this.end);
  }

  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.end + chunk.length > this.buffer.length) {
      const needed = this.length + chunk.length;
      const capacity = Math.max(needed, this.buffer.length * 2, 4096);
      const next = needed <= this.buffer.length ? this.buffer : new Uint8Array(capacity);
      next.set(this.buffer.subarray(this.start, this.end), 0);
      this.buffer = next;
      this.end -= this.start;
      this.start = 0;
    }
    this.buffer.set(chunk, this.end);
    this.end += chunk.length;
  }

  consume(count: number): void {
    this.start += count;
    if (this.start === this.end) {
      // Nothing pending: let the memory go (an index keeps many idle readers).
      this.buffer = EMPTY;
      this.start = this.end = 0;
    }
  }
}

const corrupt = (message: string): FoldFailure => ({ reason: 'corrupt', message });
const toError = (failure: FoldFailure): SessionReadError => new SessionReadError(failure.reason, failure.message);
const HEADERLESS = corrupt('corrupt session log: empty or header-less session log');
const frameTooLarge = (what: string): FoldFailure => ({
  reason: 'too-large',
  message: `record too large: ${what} may decode past ${MAX_FRAME_PLAINTEXT_BYTES} bytes`,
});

/**
 * Runs a decoding into `sink`; returns why the decoding failed, if it did. An exception of the
 * sink itself is ours, not the file's: it is rethrown (the caller's catch reports it).
 */
function decodeInto(decode: (sink: PlaintextSink) => void, sink: PlaintextSink): string | undefined {
  let sinkError: { error: unknown } | undefined;
  try {
    decode((piece) => {
      try {
        sink(piece);
      } catch (error) {
        sinkError = { error };
        throw error; // stops the decoding
      }
    });
  } catch (error) {
    if (sinkError) throw sinkError.error;
    return error instanceof Error ? error.message : String(error);
  }
  return undefined;
}

/** One transcript being read; see the module comment. */
export class SessionLogReader {
  readonly maxRecordBytes: number;
  private readonly decoder: ZstdFrameDecoder | undefined;
  private readonly sink: KeptEvent[] | undefined;
  private consumedBytes = 0;
  private committedBytes: number;
  private zstdFrames: number;
  private header: SessionHeaderRecord | undefined;
  /** The header line/frame is complete but the log cannot load because of it. */
  private headerFailure: FoldFailure | undefined;
  /** zstd: the frame structure is corrupt at or after the committed position. */
  private structureFailure: FoldFailure | undefined;
  private fold: LogFold | undefined;
  private scanner: RecordScanner | undefined;
  private readonly lines: LineSplitter;
  private readonly pending = new ByteQueue();

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
    this.consumedBytes += bytes.length;
    // zstd frame structure is checked over the whole file before anything is decoded (dsh's
    // order), so it is still walked after a decoding or scanning failure.
    if (this.structureFailure || (this.settled && this.encoding === 'raw')) {
      if (this.encoding === 'raw') this.committedBytes = this.consumedBytes;
      return;
    }
    try {
      if (this.encoding === 'raw') this.pushRaw(bytes);
      else this.pushZstd(bytes);
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

  private pushZstd(bytes: Uint8Array): void {
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
      if (!this.settled) this.foldFrame(view.subarray(0, scan.frame.end), { ...scan.frame, start: this.committedBytes });
      this.pending.consume(scan.frame.end);
      this.committedBytes += scan.frame.end;
      this.zstdFrames++;
    }
  }

  /**
   * Decodes a complete frame into the header (the first frame) or the event lines. A frame that
   * fails validation is corrupt whatever its plaintext said before the failure showed, so after
   * a scanning failure the rest of the frame is still decoded (not scanned) to verify it.
   */
  private foldFrame(frame: Uint8Array, info: ZstdFrame): void {
    const scanner = this.zstdFrames === 0 ? undefined : (this.scanner as RecordScanner);
    const fail = (failure: FoldFailure) => {
      if (scanner) scanner.state.fatal = failure;
      else this.headerFailure = failure;
    };
    if ((info.contentSize ?? 0) > MAX_FRAME_PLAINTEXT_BYTES || info.plaintextBound > MAX_FRAME_PLAINTEXT_BYTES) {
      fail(frameTooLarge(`zstd frame at byte ${info.start}`));
      return;
    }
    const header = scanner ? undefined : new SingleLineCollector(this.maxRecordBytes);
    const sink: PlaintextSink = scanner
      ? (piece) => {
          if (scanner.state.fatal === undefined) scanner.push(this.lines, piece);
        }
      : (header as SingleLineCollector).push;
    const decoder = this.decoder as ZstdFrameDecoder;
    const why = decodeInto((into) => decoder.decodeFrame(frame, info, into), sink);
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
    try {
      return this.readNow();
    } catch (error) {
      const failure = corrupt(`corrupt session log: unreadable (${(error as Error).message})`);
      return { header: this.header, headerIncomplete: false, error: toError(failure) };
    }
  }

  private readNow(): LogReading {
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
      const why = decodeInto(
        (into) => decoder.decodeBlocks(prefix, torn, into),
        (piece) => {
          if (scanner.state.fatal === undefined) scanner.push(lines, piece);
        },
      );
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
