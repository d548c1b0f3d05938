/**
 * dsh's log scanner (store doc §5.3–5.4) over complete event lines: each line is parsed (a packed
 * row validated as a run of events); records are kept while their seqs continue the log. At the first
 * unparsable line or seq gap, keeping stops (a torn tail), unless a later line holds a `turn/end`,
 * which makes the log corrupt.
 */
import { isObjectLike } from './eventRules';
import { skimLine } from './lineSkim';
import type { FoldFailure, LogFold } from './logFold';
import { utf8Text, type LineHandler } from './lines';
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

  /** Handles one complete line (pass as a {@link LineHandler}). */
  readonly line: LineHandler = (bytes, length) => {
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
    let text: string | undefined;
    if (this.skim && state.issue === undefined) {
      // A line the fold only counts, continuing the seqs: never decoded or parsed.
      const skimmed = skimLine(bytes);
      if (skimmed !== undefined && !skimmed.row && skimmed.surface === 't') {
        // A tool result is parsed, but its output (which no check reads) as an empty array.
        if (!this.fold.keepsEvents) {
          const [start, end] = skimmed.content;
          text = `${utf8Text(bytes.subarray(0, start))}[]${utf8Text(bytes.subarray(end))}`;
        }
      } else if (skimmed !== undefined && skimmed.seq === this.fold.eventCount && this.fold.acceptSkimmed(skimmed)) {
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
  };
}
