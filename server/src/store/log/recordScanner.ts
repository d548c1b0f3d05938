/**
 * dsh's log scanner (store doc §5.3–5.4) over complete event lines: each line is parsed (a packed
 * row validated as a run of events); records are kept while their seqs continue the log. At the first
 * unparsable line or seq gap, keeping stops (a torn tail), unless a later line holds a `turn/end`,
 * which makes the log corrupt.
 */
import { isObjectLike } from './eventRules';
import { lineSkim, RUN_END, RUN_TOO_LONG, type SkimmedLine } from './lineSkim';
import type { FoldFailure, LogFold } from './logFold';
import { utf8Text, type LineHandler, type LineSplitter } from './lines';
import { packedRowOf, type PackedRow } from './rows';

/** Serializable scanner state. */
export interface ScanState {
  /** Event lines seen (1-based numbering in messages). */
  lineNumber: number;
  /** The first defect: from it on nothing is kept. */
  issue?: string;
  /** A failure no later byte can undo. */
  fatal?: FoldFailure;
}

/** Feeds complete event lines to a {@link LogFold} with dsh's torn-tail rules. */
const NEWLINE = 0x0a;

/**
 * Whether lines after the first defect may still matter: only a `null` record or a `turn/end`
 * (whose `/` is written as `/`, `\\/` or a `\\u` escape) can change the answer then. A line
 * without `null`, `/` and `\\u` is only counted, never decoded or parsed (an unparsable one
 * costs an exception: a log of a billion empty lines took hours).
 */
function mayMatterAfterDefect(bytes: Uint8Array): boolean {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view.includes('/') || view.includes('null') || view.includes('\\u');
}

/** Newlines to compare with: a stretch of blank lines (a zstd bomb's) is counted at memcmp speed. */
let blankLines: Buffer | undefined;

function countNewlines(bytes: Uint8Array): number {
  blankLines ??= Buffer.alloc(1024 * 1024, NEWLINE);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (let at = 0; at < view.length; at += blankLines.length) {
    const part = view.subarray(at, at + blankLines.length);
    if (part.equals(blankLines.subarray(0, part.length))) count += part.length;
    else for (let i = 0; i < part.length; i++) if (part[i] === NEWLINE) count++;
  }
  return count;
}

export class RecordScanner {
  constructor(
    readonly fold: LogFold,
    readonly maxRecordBytes: number,
    readonly state: ScanState = { lineNumber: 0 },
    /** Read lines that cannot change the fold's answer from their bytes (lineSkim.ts); tests turn it off. */
    readonly skim = true,
  ) {}

  /** An independent copy, folding into `fold`. */
  fork(fold: LogFold): RecordScanner {
    return new RecordScanner(fold, this.maxRecordBytes, structuredClone(this.state), this.skim);
  }

  /** Every line so far was kept. */
  get clean(): boolean {
    return this.state.issue === undefined && this.state.fatal === undefined;
  }

  /**
   * Feeds `chunk` through `lines` (see {@link LineSplitter.push}), each complete line to
   * {@link line}. With the skim on, runs of lines that only move the fold's count and time are
   * read in the skim's memory and folded at once, without a view, a call or an object per line
   * (turn/end and step/end lines among them: they reset the closers' tracking whatever their data).
   */
  push(lines: LineSplitter, bytes: Uint8Array): void {
    if (this.state.issue !== undefined) {
      this.pushAfterDefect(lines, bytes);
      return;
    }
    const skim = this.skim ? lineSkim() : null;
    if (skim === null || !this.fold.foldsSkimmedRuns) {
      lines.push(bytes, this.line);
      return;
    }
    // The line an earlier chunk began ends at the first newline.
    const chunk = lines.pendingBytes > 0 ? lines.pushFirstLine(bytes, this.line) : bytes;
    if (!skim.stage(chunk)) {
      lines.push(chunk, this.line);
      return;
    }
    const state = this.state;
    let start = 0;
    while (start < chunk.length && state.issue === undefined && state.fatal === undefined) {
      const run = skim.run(start, chunk.length, this.fold.eventCount, this.maxRecordBytes);
      if (run.lines > 0) {
        state.lineNumber += run.lines;
        this.fold.acceptSkimmedRun(run.eventCount, run.lastTime, run.reset);
      }
      start = run.next;
      if (run.stop === RUN_END || run.stop === RUN_TOO_LONG) break;
      const bytes = chunk.subarray(start, run.stopEnd);
      this.read(bytes, bytes.length, skim.found(run.stop, bytes));
      start = run.stopEnd + 1;
    }
    if (start >= chunk.length) return;
    if (state.issue !== undefined) this.pushAfterDefect(lines, chunk.subarray(start));
    else lines.push(chunk.subarray(start), this.line);
  }

  /**
   * After the first defect: the complete lines of `chunk` that cannot matter (see
   * {@link mayMatterAfterDefect}) are counted at once; a chunk holding one that may is read line by line.
   */
  private pushAfterDefect(lines: LineSplitter, chunk: Uint8Array): void {
    // The line an earlier chunk began ends at the first newline (read as every line is).
    const body = lines.pendingBytes > 0 ? lines.pushFirstLine(chunk, this.line) : chunk;
    const last = Buffer.from(body.buffer, body.byteOffset, body.byteLength).lastIndexOf(NEWLINE);
    const complete = body.subarray(0, last + 1);
    // Lines shorter than the chunk are under the record limit when the chunk is.
    if (last < 0) {
      lines.push(body, this.line);
      return;
    }
    // After a fatal failure lines are not even counted (as `read` does).
    if (this.state.fatal === undefined) {
      if (complete.length > this.maxRecordBytes || mayMatterAfterDefect(complete)) {
        lines.push(body, this.line);
        return;
      }
      this.state.lineNumber += countNewlines(complete);
    }
    lines.push(body.subarray(last + 1), this.line);
  }

  /** Handles one complete line (pass as a {@link LineHandler}). */
  readonly line: LineHandler = (bytes, length) => {
    if (this.state.fatal !== undefined) return;
    if (bytes !== undefined && this.skim && this.state.issue === undefined) this.read(bytes, length, lineSkim()?.line(bytes));
    else this.read(bytes, length, undefined);
  };

  /** Handles one complete line, given what the skim found of it (undefined: it must be parsed, or the skim is off). */
  private read(bytes: Uint8Array | undefined, length: number, skimmed: SkimmedLine | undefined): void {
    const state = this.state;
    if (state.fatal !== undefined) return;
    const lineNumber = ++state.lineNumber;
    if (bytes === undefined) {
      state.fatal = {
        reason: 'too-large',
        message: `record too large: event line ${lineNumber} has ${length} bytes (limit ${this.maxRecordBytes})`,
      };
      return;
    }
    if (state.issue !== undefined && !mayMatterAfterDefect(bytes)) return;
    let text: string | undefined;
    if (skimmed !== undefined) {
      // A line the fold only counts, continuing the seqs: never decoded or parsed.
      if (!skimmed.row && skimmed.surface === 't') {
        // A tool result is parsed, but its output (which no check reads) as an empty array.
        if (!this.fold.keepsEvents) {
          const [start, end] = skimmed.content;
          text = `${utf8Text(bytes.subarray(0, start))}[]${utf8Text(bytes.subarray(end))}`;
        }
      } else if (skimmed.seq === this.fold.eventCount && this.fold.acceptSkimmed(skimmed)) {
        return;
      }
    }
    let value: unknown;
    let row: PackedRow | undefined;
    try {
      value = JSON.parse(text ?? utf8Text(bytes));
      row = packedRowOf(value);
    } catch {
      state.issue ??= `corrupt session log: unparsable committed event at line ${lineNumber}`;
      return;
    }
    if (value === null) {
      // dsh reads `.seq`/`.type` of every record unguarded: a `null` line fails the whole read.
      state.fatal = { reason: 'corrupt', message: `corrupt session log: null record at line ${lineNumber}` };
      return;
    }
    // A packed row's events are all `assistant/chunk`: it never ends a turn.
    const endsTurn = row === undefined && isObjectLike(value) && value.type === 'turn/end';
    if (state.issue !== undefined) {
      if (endsTurn) state.fatal = { reason: 'corrupt', message: `${state.issue}, before a later turn/end` };
      return;
    }
    const expected = this.fold.eventCount;
    // A row's member seqs run on from its seq0, so only the first can break the sequence.
    const seq = row !== undefined ? row.seq0 : isObjectLike(value) ? value.seq : value;
    if (seq !== expected || !isObjectLike(value)) {
      state.issue = `corrupt session log: seq gap at line ${lineNumber} (expected ${expected}, got ${String(seq)})`;
      if (endsTurn) state.fatal = { reason: 'corrupt', message: `${state.issue}, before a later turn/end` };
      return;
    }
    if (row !== undefined) this.fold.acceptPackedRow(row);
    else this.fold.accept(value as Record<string, unknown>, bytes);
  }
}
