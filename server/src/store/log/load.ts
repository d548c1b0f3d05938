/**
 * Reads of a whole file: just the header (for listing), or the full load dsh's `inspect()` /
 * `readSurface` performs, in one piece or streamed.
 */
import { SessionReadError, type SessionEventRecord } from '../../resolver/sessionStore';
import { SURFACE_EVENT_TYPES } from './eventRules';
import { parseSessionHeaderLine, type SessionHeaderRecord } from './header';
import { MAX_RECORD_BYTES, SingleLineCollector, utf8Text } from './lines';
import { SessionLogReader, type LogReading, type TranscriptEncoding } from './sessionLogReader';
import { StoredLine, keptEvent } from './storedLines';
import type { SurfaceCounts } from './surfaceFold';
import { MAX_FRAME_PLAINTEXT_BYTES, defaultZstdDecoder, type ZstdFrameDecoder } from './zstdDecoder';
import { scanZstdFrame } from './zstdFrames';

/** A session log as dsh's read-only `inspect()` sees it. */
export interface LoadedSessionLog {
  header: SessionHeaderRecord;
  /** Every event: rows expanded, legacy shapes upgraded, in-memory closers appended (fewer or none per `keepEvents`). */
  events: SessionEventRecord[];
  /** The current surface, in surface order. */
  surface: SessionEventRecord[];
  /** `data.title` of the last `session/title`, when there is one. */
  title?: string;
  /** Seq of the last event (closers included); null for an empty log. */
  capturedThroughSeq: number | null;
  /** Current surface nodes by type. */
  surfaceCounts: SurfaceCounts;
}

/** Options of {@link loadSessionLog}. */
export interface LoadSessionLogOptions {
  /** The id being looked up: a header naming another id is corrupt. */
  expectedId?: string;
  /** Record size limit (tests lower it). */
  maxRecordBytes?: number;
  /** zstd frame decoder (tests pick one). */
  zstdDecoder?: ZstdFrameDecoder;
  /** zstd: the most plaintext the log is read as (tests lower it). */
  maxPlaintextBytes?: number;
  /**
   * True (the default): `events` holds every event. False: `events` is left empty, and only the
   * events on the current surface are kept in memory. 'surface-types': `events` holds just the
   * user/message, assistant/message and tool/result events, shadowed ones included.
   */
  keepEvents?: boolean | 'surface-types';
}

/** A full load fed in pieces (see {@link createSessionLogLoader}). */
export interface SessionLogLoader {
  /** Feeds the bytes that follow everything pushed so far; copies what it keeps, so the caller may reuse `bytes`. */
  push(bytes: Uint8Array): void;
  /**
   * {@link push}, yielding to the event loop every few ms of decoding; resolves false when
   * `signal` stopped it (the loader is then unusable).
   */
  pushAsync(bytes: Uint8Array, signal?: AbortSignal): Promise<boolean>;
  /**
   * Computes what {@link finish} answers, yielding to the event loop while a torn last frame is
   * decoded; false when `signal` stopped it.
   */
  prepareFinish(signal?: AbortSignal): Promise<boolean>;
  /** The log as {@link loadSessionLog} reads the bytes pushed; throws its SessionReadError. Call once, after the last push. */
  finish(): LoadedSessionLog;
  /** Gives back what the loader drew from the process's read budget (done by `finish`; call it when a load is abandoned). */
  releaseMemory(): void;
}

/**
 * The streaming form of {@link loadSessionLog}: push a file's bytes in any pieces (a large file
 * never needs to be in memory whole), then `finish()`. Memory is bounded by the record limit and,
 * for zstd, the compressed size of one frame; with `keepEvents: false` also by the current surface.
 * For 'zstd', `await initZstdSupport()` once beforehand.
 */
export function createSessionLogLoader(encoding: TranscriptEncoding, options: LoadSessionLogOptions = {}): SessionLogLoader {
  const keepEvents = options.keepEvents ?? true;
  const collectEvents = keepEvents === true ? 'all' : keepEvents === false ? 'surface' : keepEvents;
  const reader = new SessionLogReader(encoding, { ...options, collectEvents });
  let finished = false;
  const open = (): void => {
    if (finished) throw new Error('session log loader already finished');
  };
  return {
    push(bytes) {
      open();
      reader.push(bytes);
    },
    pushAsync(bytes, signal) {
      open();
      return reader.pushAsync(bytes, signal);
    },
    prepareFinish(signal) {
      open();
      return reader.prepareRead(signal);
    },
    finish() {
      open();
      finished = true;
      try {
        return loadedLog(reader.read(), keepEvents);
      } finally {
        reader.releaseMemory();
      }
    },
    releaseMemory: () => reader.releaseMemory(),
  };
}

/** A finished reading as the loaded log, or its failure thrown. */
function loadedLog(reading: LogReading, keepEvents: boolean | 'surface-types'): LoadedSessionLog {
  if (reading.error) throw reading.error;
  const outcome = reading.outcome;
  const header = reading.header;
  if (!outcome || !header || !reading.events) throw new SessionReadError('corrupt', 'corrupt session log: unreadable');
  const closers = keepEvents === 'surface-types' ? outcome.closers.filter((event) => SURFACE_EVENT_TYPES.has(event.type)) : outcome.closers;
  const kept = reading.events.map(keptEvent);
  kept.push(...closers);
  // Every stored line has been read: their buffers can serve the next load (the loader is finished).
  for (const arena of new Set(reading.events.flatMap((event) => (event instanceof StoredLine ? [event.arena] : [])))) arena.recycle();
  // Only the whole log is indexed by seq; a partial one is looked up.
  const bySeq = keepEvents === true ? undefined : new Map(kept.map((event) => [event.seq, event]));
  const loaded: LoadedSessionLog = {
    header,
    events: keepEvents === false ? [] : kept,
    surface: outcome.surfaceSeqs.map((seq) => (bySeq ? (bySeq.get(seq) as SessionEventRecord) : kept[seq])),
    capturedThroughSeq: outcome.capturedThroughSeq,
    surfaceCounts: outcome.surfaceCounts,
  };
  if (outcome.title !== undefined) loaded.title = outcome.title;
  return loaded;
}

/**
 * Full load as inspect() does: events (rows expanded, legacy upgraded, in-memory closers appended),
 * surface fold, title, capturedThroughSeq. Throws SessionReadError with reason 'corrupt' |
 * 'unsupported' (version≠0, unknown non-ignorable type) | 'too-large' (a single record > 64 MiB).
 * Synchronous; for 'zstd', `await initZstdSupport()` once beforehand.
 */
export function loadSessionLog(
  bytes: Uint8Array,
  encoding: TranscriptEncoding,
  options: LoadSessionLogOptions = {},
): LoadedSessionLog {
  const loader = createSessionLogLoader(encoding, options);
  loader.push(bytes);
  return loader.finish();
}

function corruptHeader(message: string): SessionReadError {
  return new SessionReadError('corrupt', `corrupt session log: ${message}`);
}

/**
 * Read just the header from the start of a file (raw: bytes up to first \n; zstd: first frame,
 * decompressed + checksum-verified). Returns {header, headerBytes} or {incomplete:true} when the
 * first line/frame is not complete yet; throws SessionReadError('corrupt') for a complete-but-bad
 * header frame/line ('too-large' past the record limit). For 'zstd', `await initZstdSupport()` first.
 */
export function readSessionHeader(
  prefix: Uint8Array,
  encoding: TranscriptEncoding,
  options: { maxRecordBytes?: number; zstdDecoder?: ZstdFrameDecoder } = {},
): { header: SessionHeaderRecord; headerBytes: number } | { incomplete: true } {
  const maxRecordBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
  const tooLarge = () => new SessionReadError('too-large', `record too large: header has more than ${maxRecordBytes} bytes`);
  if (encoding === 'raw') {
    const newline = prefix.indexOf(0x0a);
    if (newline === -1) {
      if (prefix.length > maxRecordBytes) throw tooLarge();
      return { incomplete: true };
    }
    if (newline > maxRecordBytes) throw tooLarge();
    return { header: parseSessionHeaderLine(utf8Text(prefix.subarray(0, newline))), headerBytes: newline + 1 };
  }
  if (prefix.length === 0) return { incomplete: true };
  const scan = scanZstdFrame(prefix, 0);
  if ('corrupt' in scan) throw corruptHeader(scan.corrupt);
  if ('torn' in scan) return { incomplete: true };
  const frame = scan.frame;
  if ((frame.contentSize ?? 0) > MAX_FRAME_PLAINTEXT_BYTES || frame.plaintextBound > MAX_FRAME_PLAINTEXT_BYTES) {
    throw tooLarge();
  }
  const decoder = options.zstdDecoder ?? defaultZstdDecoder();
  const collector = new SingleLineCollector(maxRecordBytes);
  try {
    decoder.decodeFrame(prefix.subarray(0, frame.end), frame, collector.push);
  } catch (error) {
    throw corruptHeader(`header frame failed validation (${(error as Error).message})`);
  }
  const line = collector.result();
  if (line === undefined) throw corruptHeader('first frame is not exactly one header line');
  if (line.text === undefined) throw tooLarge();
  return { header: parseSessionHeaderLine(line.text), headerBytes: frame.end };
}
