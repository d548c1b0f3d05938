/**
 * Other agents' JSONL files as bounded lines: bytes pushed in any pieces come out as runs of
 * complete lines, a line never held past {@link MAX_FOREIGN_LINE_BYTES}. The agents read their files
 * line by line and skip a line they cannot parse; a line too big to hold is such a damaged line
 * here: it is skipped (only its length is counted) and the lines after it are read as usual.
 *
 * A line is too big to hold when it has more than {@link MAX_FOREIGN_LINE_BYTES} bytes, or when,
 * from {@link DENSE_CHECK_BYTES} on, it holds more JSON values than one per
 * {@link MIN_BYTES_PER_VALUE} bytes (at most {@link MAX_FOREIGN_LINE_VALUES}): `JSON.parse` takes up to
 * ~35 times the bytes of a line dense in small values (`[{},{},…]`), about twice those of text. So
 * a line handed on parses into at most ~10 times its bytes (a shorter one, ~35 times at most
 * 64 KiB), and memory, whatever the file, is the piece being split, one open line, its parse, and
 * what the sink keeps.
 */
import { MAX_RECORD_BYTES } from '../log/lines';
import { LongLine } from '../log/longLine';
import { acquireReadMemory, type ReleaseReadMemory } from '../memoryBudget';

/** The longest line of another agent's file that is read: dsh's own record limit (64 MiB). */
export const MAX_FOREIGN_LINE_BYTES = MAX_RECORD_BYTES;

/** The most JSON values any line may hold (each costs up to ~64 bytes parsed). */
export const MAX_FOREIGN_LINE_VALUES = 1 << 20;

/** A line from {@link DENSE_CHECK_BYTES} on holds at most one JSON value per this many bytes. */
export const MIN_BYTES_PER_VALUE = 8;

/** Pieces are split at most this many bytes at a time: a line inside one is shorter. */
export const LINE_PIECE_BYTES = 1 << 20;

/** Lines from this size on are checked for their values before they are handed on. */
export const DENSE_CHECK_BYTES = 64 * 1024;

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** Where the lines go. */
export interface ForeignLineSink {
  /**
   * Complete lines `bytes[start, end)`, each ending with its `\n` (the torn last line of the input,
   * from {@link BoundedLines.end}, without one). A view valid only during the call, unless `owned`:
   * a line put together on its own, in a buffer nothing else uses (the sink may keep it).
   */
  lines(bytes: Buffer, start: number, end: number, owned?: boolean): void;
  /** A line too big to hold, skipped: its length in bytes (its newline not counted). */
  skipped?(length: number): void;
}

/**
 * Allocates a buffer for a line or a piece of a file: the one place the bounded readers take a
 * buffer. One longer than a piece is taken by a read that holds a {@link BigBufferGrant} (or is
 * about to wait for one: a line that just outgrew its piece holds a piece's worth meanwhile).
 */
export function takeLineBuffer(bytes: number): Buffer {
  return Buffer.allocUnsafe(bytes);
}

/**
 * One read's grant for a big buffer, from the process's read memory budget (`../memoryBudget.ts`,
 * the one dsh's log readers and the index workers draw on): a read puts a line longer than a piece
 * together (or decodes a compressed file whole) only while it holds a grant of the line limit, so
 * reads running side by side (a walk reads 16 files at once, dsh reads beside them) add pieces,
 * never big lines beyond the budget.
 */
export class BigBufferGrant {
  private releaseGrant: ReleaseReadMemory | undefined;

  /** `signal`: the read's; once it aborts, a wait for the grant rejects (granting nothing). */
  constructor(private readonly signal?: AbortSignal) {}

  /** Acquires the grant (waiting while the budget is spent) while `needed`, gives it back once not. */
  async hold(needed: boolean): Promise<void> {
    if (needed === (this.releaseGrant !== undefined)) return;
    if (!needed) return this.release();
    this.releaseGrant = await acquireReadMemory(MAX_FOREIGN_LINE_BYTES, this.signal);
  }

  /** Gives the grant back if held (a read that ends or fails); calling it again does nothing. */
  release(): void {
    const release = this.releaseGrant;
    this.releaseGrant = undefined;
    release?.();
  }
}

/** Whether `bytes[start, end)` holds more than `max` JSON values (commas, objects and arrays outside strings). */
export function holdsMoreValues(bytes: Buffer, start: number, end: number, max: number): boolean {
  let values = 0;
  let position = start;
  while (position < end) {
    const byte = bytes[position]!;
    if (byte === QUOTE) {
      // Jump to the string's closing quote (one not escaped by an odd run of backslashes).
      let close = bytes.indexOf(QUOTE, position + 1);
      while (close >= 0 && close < end) {
        let slashes = 0;
        while (bytes[close - 1 - slashes] === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        close = bytes.indexOf(QUOTE, close + 1);
      }
      if (close < 0 || close >= end) return false;
      position = close + 1;
      continue;
    }
    if ((byte === COMMA || byte === OPEN_BRACE || byte === OPEN_BRACKET) && ++values > max) return true;
    position++;
  }
  return false;
}

/** Splits pushed bytes into bounded lines for a {@link ForeignLineSink}; see the module comment. */
export class BoundedLines {
  /** The open line's bytes so far while it fits its first piece (dropped once it is too long to hold). */
  private buffer: Buffer | undefined;
  /** The open line's bytes once it outgrew its first piece. */
  private longLine: LongLine | undefined;
  private open = 0;
  private consumed = 0;

  constructor(
    private readonly sink: ForeignLineSink,
    readonly maxLineBytes: number = MAX_FOREIGN_LINE_BYTES,
    readonly maxLineValues: number = MAX_FOREIGN_LINE_VALUES,
  ) {}

  /** Bytes pushed so far. */
  get pushed(): number {
    return this.consumed;
  }

  /** Whether the open line is longer than a piece (being put together in a buffer of its own). */
  get long(): boolean {
    return this.open > LINE_PIECE_BYTES && this.open <= this.maxLineBytes;
  }

  /** Bytes pushed up to the end of the last complete line: everything before was handed on (or skipped). */
  get committed(): number {
    return this.consumed - this.open;
  }

  /** Feeds the bytes that follow everything pushed so far (the caller may reuse `bytes` once this returns). */
  push(bytes: Uint8Array): void {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // A line inside one piece is shorter than the piece, so no longer than the limit.
    const size = Math.min(LINE_PIECE_BYTES, this.maxLineBytes);
    for (let offset = 0; offset < buffer.length; offset += size) this.pushPiece(buffer.subarray(offset, offset + size));
  }

  /** Hands on the open line, if any, as the torn last line of the input (or skips it). */
  end(): void {
    if (this.open > 0) this.close(undefined);
  }

  private pushPiece(piece: Buffer): void {
    this.consumed += piece.length;
    let start = 0;
    if (this.open > 0) {
      const newline = piece.indexOf(NEWLINE);
      if (newline < 0) return this.keep(piece);
      this.close(piece.subarray(0, newline + 1));
      start = newline + 1;
    }
    const last = piece.lastIndexOf(NEWLINE);
    if (last >= start) {
      this.handOn(piece, start, last + 1);
      start = last + 1;
    }
    if (start < piece.length) this.keep(piece.subarray(start));
  }

  /**
   * Hands on the complete lines of `piece[start, end)`, skipping the long ones too dense to hold.
   * Long lines are found by looking for a newline in each {@link DENSE_CHECK_BYTES} after a line
   * start (backwards from its end: usually a step of that size), not line by line.
   */
  private handOn(piece: Buffer, start: number, end: number): void {
    let from = start;
    let lineStart = start;
    while (lineStart + DENSE_CHECK_BYTES < end) {
      const newline = piece.lastIndexOf(NEWLINE, lineStart + DENSE_CHECK_BYTES - 1);
      if (newline >= lineStart) {
        lineStart = newline + 1;
        continue;
      }
      const lineEnd = piece.indexOf(NEWLINE, lineStart + DENSE_CHECK_BYTES) + 1;
      if (this.tooDense(piece, lineStart, lineEnd)) {
        if (lineStart > from) this.sink.lines(piece, from, lineStart);
        this.sink.skipped?.(lineEnd - 1 - lineStart);
        from = lineEnd;
      }
      lineStart = lineEnd;
    }
    if (end > from) this.sink.lines(piece, from, end);
  }

  /** Whether the line `bytes[start, end)` holds too many JSON values to be parsed (see the module comment). */
  private tooDense(bytes: Buffer, start: number, end: number): boolean {
    const length = end - start;
    return length >= DENSE_CHECK_BYTES && holdsMoreValues(bytes, start, end, Math.min(this.maxLineValues, Math.floor(length / MIN_BYTES_PER_VALUE)));
  }

  /**
   * Adds bytes to the open line: copied while it may still be held, else only counted. A line that
   * outgrows its first piece moves to a {@link LongLine} (address space for the limit, memory only as
   * it grows), so it is never copied again as it grows, nor joined at its end; a long line that is
   * not handed on (too long, too dense) gives its memory back at once rather than to the garbage
   * collector, before the next big line of any read may take its place.
   */
  private keep(bytes: Buffer): void {
    const length = this.open + bytes.length;
    if (length > this.maxLineBytes) {
      this.drop();
    } else if (this.open === 0) {
      this.buffer = takeLineBuffer(bytes.length);
      bytes.copy(this.buffer);
    } else if (this.buffer !== undefined || this.longLine !== undefined) {
      if (this.longLine === undefined) {
        this.longLine = new LongLine(this.maxLineBytes + 1);
        this.longLine.append(this.buffer!.subarray(0, this.open));
        this.buffer = undefined;
      }
      this.longLine.append(bytes);
    }
    this.open = length;
  }

  /** Lets go of the open line's bytes (a long line's memory given back now). */
  private drop(): void {
    this.buffer = undefined;
    this.longLine?.release();
    this.longLine = undefined;
  }

  /** Ends the open line with `tail` (through its newline; undefined: the input ended) and hands it on. */
  private close(tail: Buffer | undefined): void {
    const length = this.open + (tail?.length ?? 0);
    const textLength = tail === undefined ? length : length - 1;
    const kept = this.open;
    this.open = 0;
    const line = textLength > this.maxLineBytes ? undefined : this.joined(kept, tail);
    if (line === undefined || this.tooDense(line, 0, length)) {
      this.drop();
      return this.sink.skipped?.(textLength);
    }
    const owned = line !== tail;
    this.buffer = undefined;
    this.longLine = undefined; // handed on whole: the sink may keep it
    this.sink.lines(line, 0, length, owned);
  }

  /** The open line of `kept` bytes ended by `tail`, in one buffer; undefined when its bytes were dropped. */
  private joined(kept: number, tail: Buffer | undefined): Buffer | undefined {
    if (kept === 0) return tail;
    if (this.longLine !== undefined) {
      if (tail !== undefined) this.longLine.append(tail);
      const view = this.longLine.view();
      return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    }
    if (this.buffer === undefined || tail === undefined) return this.buffer;
    const whole = takeLineBuffer(kept + tail.length);
    this.buffer.copy(whole, 0, 0, kept);
    tail.copy(whole, kept);
    return whole;
  }
}
