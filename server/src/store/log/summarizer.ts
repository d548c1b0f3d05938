/**
 * The index's view of one transcript: header, title, `capturedThroughSeq` and surface counts,
 * kept up to date as the file grows, without keeping events in memory.
 */
import type { SessionReadError } from '../../resolver/sessionStore';
import type { SessionHeaderRecord } from './header';
import { SessionLogReader, type SessionLogReaderState, type TranscriptEncoding } from './sessionLogReader';
import type { SurfaceCounts } from './surfaceFold';
import type { ZstdFrameDecoder } from './zstdDecoder';

/** What the index keeps about a transcript, as `inspect()` would read it right now. */
export interface LogSummary {
  /** The header, once its line/frame is complete and valid as listing sees it. */
  header?: SessionHeaderRecord;
  /** Latest title; undefined when there is none or the log does not load. */
  title?: string;
  /** As `loadSessionLog` gives it; null for an empty log or one that does not load. */
  capturedThroughSeq: number | null;
  surfaceCounts: SurfaceCounts;
  /** Events `inspect()` returns (closers included); 0 when the log does not load. */
  eventCount: number;
  /**
   * Why the log does not load, exactly as `loadSessionLog` would throw it; undefined while the
   * header line/frame is still incomplete (no header and no error: not written yet).
   */
  error?: SessionReadError;
}

/** Serialized summarizer state (see {@link SessionLogSummarizer.toJSON}). */
export interface SessionLogSummarizerJSON {
  version: 1;
  reader: SessionLogReaderState;
}

const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** A structural check of saved state, so a damaged cache entry is refused rather than misread. */
function isReaderState(value: unknown): value is SessionLogReaderState {
  if (!isObject(value) || (value.encoding !== 'raw' && value.encoding !== 'zstd')) return false;
  if (!isCount(value.committedBytes) || !isCount(value.zstdFrames)) return false;
  if (value.fold === undefined && value.scan === undefined) return true;
  const { fold, scan } = value;
  if (!isObject(fold) || !isObject(scan) || !isObject(value.header) || !isCount(scan.lineNumber)) return false;
  const { turns, surface } = fold;
  return (
    isCount(fold.eventCount) &&
    isObject(fold.refusals) &&
    isObject(turns) &&
    typeof turns.turnOpen === 'boolean' &&
    typeof turns.stepOpen === 'boolean' &&
    Array.isArray(turns.pending) &&
    isObject(surface) &&
    Array.isArray(surface.seqs) &&
    typeof surface.kinds === 'string' &&
    surface.kinds.length === surface.seqs.length &&
    Array.isArray(surface.tools)
  );
}

/** Summarizer options (tests use them). */
export interface SessionLogSummarizerOptions {
  maxRecordBytes?: number;
  zstdDecoder?: ZstdFrameDecoder;
  /** Read the lines that cannot change a summary without parsing them (default; tests compare). */
  skimLines?: boolean;
  /** zstd: the most plaintext the log is read as (tests lower it). */
  maxPlaintextBytes?: number;
}

/**
 * Summarizes one transcript incrementally: `push` the bytes appended since the last push;
 * `summary()` reflects the file as pushed so far (torn tail excluded, closers counted). Earlier
 * bytes are never decoded again. For 'zstd', `await initZstdSupport()` once before constructing.
 */
export class SessionLogSummarizer {
  private readonly reader: SessionLogReader;

  constructor(encoding: TranscriptEncoding, options: SessionLogSummarizerOptions = {}, saved?: SessionLogReaderState) {
    this.reader = new SessionLogReader(encoding, options, saved);
  }

  /** Rebuilds a summarizer saved with {@link toJSON}; push the file's bytes from {@link resumeOffset} on. */
  static fromJSON(json: SessionLogSummarizerJSON, options: SessionLogSummarizerOptions = {}): SessionLogSummarizer {
    if (json?.version !== 1 || !isReaderState(json.reader)) throw new TypeError('not a saved SessionLogSummarizer state');
    return new SessionLogSummarizer(json.reader.encoding, options, json.reader);
  }

  /** Bytes pushed so far (the file offset the next push continues from). */
  get consumedBytes(): number {
    return this.reader.consumed;
  }

  /**
   * Where a summarizer restored from {@link toJSON} continues: the committed position (raw: after
   * the last complete line; zstd: the start of the first incomplete frame).
   */
  get resumeOffset(): number {
    return this.reader.committed;
  }

  /**
   * Feeds the bytes appended to the file since the last push. What it keeps of them (a torn
   * tail, an incomplete zstd frame) is copied, so the caller may reuse `bytes` once this returns
   * (the index reads every file into one buffer).
   */
  push(bytes: Uint8Array): void {
    this.reader.push(bytes);
  }

  /**
   * {@link push}, yielding to the event loop every few ms of decoding; resolves false when
   * `signal` stopped it (the summarizer is then unusable).
   */
  pushAsync(bytes: Uint8Array, signal?: AbortSignal): Promise<boolean> {
    return this.reader.pushAsync(bytes, signal);
  }

  /**
   * Computes what the next {@link summary} answers, yielding to the event loop while a torn last
   * frame is decoded; false when `signal` stopped it.
   */
  prepareSummary(signal?: AbortSignal): Promise<boolean> {
    return this.reader.prepareRead(signal);
  }

  /** Gives back what the summarizer drew from the process's read budget: call when done reading. */
  releaseMemory(): void {
    this.reader.releaseMemory();
  }

  /** The transcript as `inspect()` would read the bytes pushed so far. */
  summary(): LogSummary {
    const reading = this.reader.read();
    const summary: LogSummary = {
      capturedThroughSeq: null,
      surfaceCounts: { user: 0, assistant: 0, tool: 0 },
      eventCount: 0,
    };
    if (reading.header) summary.header = reading.header;
    if (reading.headerIncomplete) return summary;
    if (reading.error) {
      summary.error = reading.error;
      return summary;
    }
    const outcome = reading.outcome;
    if (outcome) {
      summary.capturedThroughSeq = outcome.capturedThroughSeq;
      summary.surfaceCounts = outcome.surfaceCounts;
      summary.eventCount = outcome.eventCount;
      if (outcome.title !== undefined) summary.title = outcome.title;
    }
    return summary;
  }

  /** Plain-JSON state for a persistent cache (it covers the file up to {@link resumeOffset}). */
  toJSON(): SessionLogSummarizerJSON {
    return { version: 1, reader: this.reader.state() };
  }
}
