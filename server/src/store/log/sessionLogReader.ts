/**
 * Reads one transcript's bytes, pushed in any pieces, into what dsh's read-only `inspect()` sees.
 * Committed bytes (raw: complete lines; zstd: complete frames) are folded once; the torn tail
 * (raw: a final line without `\n`; zstd: the whole blocks of a torn last frame) is read on demand
 * without being committed, so later bytes continue from the committed position.
 */
import { SessionReadError, type SessionEventRecord } from '../../resolver/sessionStore';
import { parseHeaderLineForLoad, type SessionHeaderRecord } from './header';
import { LineSplitter, MAX_RECORD_BYTES, utf8Text } from './lines';
import { LogFold, emptyFoldState, type FoldFailure, type FoldOutcome, type LogFoldState } from './logFold';
import { RecordScanner, type ScanState } from './recordScanner';
import { MAX_FRAME_PLAINTEXT_BYTES, defaultZstdDecoder, type ZstdFrameDecoder } from './zstdDecoder';
import { scanZstdFrame, type TornZstdFrame, type ZstdFrame } from './zstdFrames';

/** A transcript's physical encoding. */
export type TranscriptEncoding = 'raw' | 'zstd';

/** Reader options. */
export interface SessionLogReaderOptions {
  /** The id being looked up: a header naming another id is corrupt. */
  expectedId?: string;
  /** Keep the decoded events ('all': a full load; 'surface': only surface-type events); the index keeps none. */
  collectEvents?: 'all' | 'surface';
  /** Record size limit (tests lower it). */
  maxRecordBytes?: number;
  /** zstd frame decoder (tests pick one); default: `node:zlib` when present, else fzstd. */
  zstdDecoder?: ZstdFrameDecoder;
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
  /** The kept events (closers not included; only surface-type ones with collectEvents 'surface'), when collecting. */
  events?: SessionEventRecord[];
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

/** One transcript being read; see the module comment. */
export class SessionLogReader {
  readonly maxRecordBytes: number;
  private readonly decoder: ZstdFrameDecoder | undefined;
  private readonly sink: SessionEventRecord[] | undefined;
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
    this.fold = new LogFold(header, foldState, this.sink, this.options.collectEvents === 'surface');
    this.scanner = new RecordScanner(this.fold, this.maxRecordBytes, scanState);
  }

  /** Takes the header line (bytes without `\n`): listing validity, then dsh's load-time header refusal. */
  private acceptHeader(line: Uint8Array | undefined, length: number): void {
    if (line === undefined) {
      const message = `record too large: header has ${length} bytes (limit ${this.maxRecordBytes})`;
      this.headerFailure = { reason: 'too-large', message };
      return;
    }
    const { header, loadError } = parseHeaderLineForLoad(utf8Text(line));
    this.header = header;
    if (loadError) this.headerFailure = { reason: loadError.reason, message: loadError.message };
    else this.startFold(header as SessionHeaderRecord);
  }

  private pushRaw(bytes: Uint8Array): void {
    this.lines.push(bytes, (line, length) => {
      if (this.scanner) this.scanner.line(line, length);
      else if (!this.settled) this.acceptHeader(line, length);
    });
    this.committedBytes = this.consumedBytes - this.lines.pendingBytes;
  }

  /** Decodes a complete frame, or gives the failure that makes the log unreadable. */
  private decodeFrame(frame: Uint8Array, info: ZstdFrame): Uint8Array | FoldFailure {
    if ((info.contentSize ?? 0) > MAX_FRAME_PLAINTEXT_BYTES || info.plaintextBound > MAX_FRAME_PLAINTEXT_BYTES) {
      return frameTooLarge(`zstd frame at byte ${info.start}`);
    }
    try {
      return (this.decoder as ZstdFrameDecoder).decodeFrame(frame, info);
    } catch (error) {
      const why = (error as Error).message;
      return corrupt(`corrupt Zstandard session log: frame at byte ${info.start} failed validation (${why})`);
    }
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
      const info = { ...scan.frame, start: this.committedBytes };
      // Once the answer is settled, later frames are only walked, never decoded.
      const plaintext = this.settled ? undefined : this.decodeFrame(view.subarray(0, scan.frame.end), info);
      this.pending.consume(scan.frame.end);
      this.committedBytes += scan.frame.end;
      this.zstdFrames++;
      if (plaintext === undefined) continue;
      if (!(plaintext instanceof Uint8Array)) {
        if (this.zstdFrames === 1) this.headerFailure = plaintext;
        else (this.scanner as RecordScanner).state.fatal = plaintext;
      } else if (this.zstdFrames === 1) {
        this.acceptHeaderFrame(plaintext);
      } else {
        this.lines.push(plaintext, (this.scanner as RecordScanner).line);
      }
    }
  }

  private acceptHeaderFrame(plaintext: Uint8Array): void {
    const newline = plaintext.indexOf(0x0a);
    if (plaintext.length === 0 || newline !== plaintext.length - 1) {
      this.headerFailure = corrupt('corrupt Zstandard session log: first frame is not exactly one header line');
      return;
    }
    const length = plaintext.length - 1;
    this.acceptHeader(length > this.maxRecordBytes ? undefined : plaintext.subarray(0, length), length);
  }

  /** The whole blocks of the torn last frame, decoded (empty when none, or when decoding fails, as dsh does). */
  private tornPlaintext(torn: TornZstdFrame, view: Uint8Array): Uint8Array | FoldFailure {
    if (torn.headerEnd === undefined || torn.blocksEnd === undefined || torn.blocksEnd === torn.headerEnd) return EMPTY;
    if (torn.plaintextBound > MAX_FRAME_PLAINTEXT_BYTES) {
      return frameTooLarge(`torn zstd frame at byte ${this.committedBytes}`);
    }
    try {
      return (this.decoder as ZstdFrameDecoder).decodeBlocks(view.subarray(0, torn.blocksEnd));
    } catch {
      return EMPTY;
    }
  }

  /**
   * The log as it reads now. With `final`, the torn tail is folded into this reader itself
   * (cheaper; the reader must not be pushed to afterwards); otherwise into a copy.
   */
  read(final = false): LogReading {
    try {
      return this.readNow(final);
    } catch (error) {
      const failure = corrupt(`corrupt session log: unreadable (${(error as Error).message})`);
      return { header: this.header, headerIncomplete: false, error: toError(failure) };
    }
  }

  private readNow(final: boolean): LogReading {
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

    let fold = this.fold;
    let sink = this.sink;
    if (this.encoding === 'zstd' && this.pending.length > 0) {
      if (!this.scanner.clean || this.lines.pendingBytes > 0) {
        return failed(corrupt('corrupt Zstandard session log: complete frame contains a torn JSONL record'));
      }
      const view = this.pending.view();
      const scan = scanZstdFrame(view, 0);
      // pushZstd consumed every complete frame and stopped at corruption, so only a torn frame is left.
      const plaintext = 'torn' in scan ? this.tornPlaintext(scan.torn, view) : EMPTY;
      if (!(plaintext instanceof Uint8Array)) return failed(plaintext);
      let scanner = this.scanner;
      if (!final) {
        sink = this.sink ? [...this.sink] : undefined;
        fold = this.fold.fork(sink);
        scanner = this.scanner.fork(fold);
      }
      // A line left open at the end of the torn frame's blocks is dropped.
      this.lines.fork().push(plaintext, scanner.line);
      if (scanner.state.fatal) return failed(scanner.state.fatal);
    } else if (this.encoding === 'zstd' && (!this.scanner.clean || this.lines.pendingBytes > 0)) {
      return failed(corrupt('corrupt Zstandard session log: complete frame contains a torn JSONL record'));
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
