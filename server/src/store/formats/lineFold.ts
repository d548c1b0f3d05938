/**
 * Listing facts of a session file from its bytes, without parsing every line: a fold over the JSONL
 * lines that parses each line until the facts of the file's head are known (cwd, start time, first
 * prompt), and after that only the lines that can still change a fact (a title record, a metadata
 * record), found by searching the bytes for the record type's name. Every line a fold parses is
 * read exactly as `parseJsonl` (records.ts) reads it (torn, non-JSON and non-object lines skipped), so the
 * facts equal those of a whole parse, as each format adapter's tests check; the agents this serves
 * write record types unescaped.
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

/** Off only in the bench's variant build without the byte search (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_FOREIGN_SKIM: boolean | undefined;
const SKIM_ON = typeof DSH_DEVICE_FOREIGN_SKIM === 'undefined' || DSH_DEVICE_FOREIGN_SKIM;

/**
 * Folds lines: every line while `needles()` is undefined, else only the lines holding one of the
 * needles it names (a line whose record type is not named cannot change a fact). Subclasses say
 * what a line's object changes.
 */
export abstract class SkimFold implements LineFold {
  protected abstract needles(): readonly Buffer[] | undefined;
  protected abstract apply(value: Record<string, unknown>): void;
  abstract clone(): LineFold;

  fold(bytes: Buffer, start: number, end: number): void {
    const view = end === bytes.length ? bytes : bytes.subarray(0, end);
    let position = start;
    let needles: readonly Buffer[] | undefined;
    // The next occurrence of each needle at or after `position` (-1: none before `end`).
    let next: number[] = [];
    while (position < end) {
      // The plain path parses every line.
      const wanted = SKIM_ON ? this.needles() : undefined;
      if (wanted === undefined) {
        let lineEnd = view.indexOf(NEWLINE, position);
        if (lineEnd < 0) lineEnd = end;
        const value = parseJsonlLine(view, position, lineEnd);
        if (value !== undefined) this.apply(value);
        position = lineEnd + 1;
        continue;
      }
      if (wanted !== needles) {
        needles = wanted;
        next = wanted.map(() => -2);
      }
      let hit = -1;
      for (let i = 0; i < wanted.length; i++) {
        if (next[i]! !== -1 && next[i]! < position) next[i] = view.indexOf(wanted[i]!, position);
        if (next[i]! >= 0 && (hit < 0 || next[i]! < hit)) hit = next[i]!;
      }
      if (hit < 0) return;
      const lineStart = Math.max(position, view.lastIndexOf(NEWLINE, hit) + 1);
      let lineEnd = view.indexOf(NEWLINE, hit);
      if (lineEnd < 0) lineEnd = end;
      const value = parseJsonlLine(view, lineStart, lineEnd);
      if (value !== undefined) this.apply(value);
      position = lineEnd + 1;
    }
  }
}
