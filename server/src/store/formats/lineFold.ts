/**
 * Listing facts of a session file from its bytes: a fold over the JSONL lines, each read exactly as
 * `parseJsonl` (records.ts) reads it (torn, non-JSON and non-object lines skipped), so the facts
 * equal those of a whole parse, as each format adapter's tests check.
 *
 * A fold can be continued: its state after the last complete line, with the offset of that line's
 * end, is what an append resumes from (see `foreignRead.ts`).
 */
/** What a fold of one agent's lines keeps. */
export interface LineFold {
  /** Folds the complete lines of `bytes[start, end)` (the last may lack its newline only at the end of the file). */
  fold(bytes: Buffer, start: number, end: number): void;
  /** An independent copy (the committed state, before a torn tail is folded into the copy). */
  clone(): LineFold;
}

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

/** One line's object, as parseJsonl reads it; undefined for anything it skips. */
export function parseJsonlLine(bytes: Buffer, start: number, end: number): Record<string, unknown> | undefined {
  const raw = bytes.toString('utf8', start, end).trim();
  if (raw === '' || raw.charCodeAt(0) !== OPEN_BRACE) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Folds every line, as parseJsonl reads it; subclasses say what a line's object changes. */
export abstract class JsonlFold implements LineFold {
  protected abstract apply(value: Record<string, unknown>): void;
  abstract clone(): LineFold;

  fold(bytes: Buffer, start: number, end: number): void {
    const view = end === bytes.length ? bytes : bytes.subarray(0, end);
    let position = start;
    while (position < end) {
      let lineEnd = view.indexOf(NEWLINE, position);
      if (lineEnd < 0) lineEnd = end;
      const value = parseJsonlLine(view, position, lineEnd);
      if (value !== undefined) this.apply(value);
      position = lineEnd + 1;
    }
  }
}
