/**
 * Byte-level JSONL splitting: lines are found by their `\n` byte and only a complete line is
 * decoded to text, so a huge log never becomes one huge string and a record over the size limit
 * is never decoded at all.
 */
import { LongLine } from './longLine';

/** A single record (one line) larger than this makes the log unreadable ('too-large'). */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

const NEWLINE = 0x0a;

/** A complete line: its bytes, or undefined when it is longer than the limit (only its length is kept). */
export type LineHandler = (line: Uint8Array | undefined, length: number) => void;

/** Decodes a line's bytes as UTF-8 the way Node's Buffer does (a BOM is kept, invalid bytes become U+FFFD). */
export function utf8Text(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * A pending line longer than this is kept in one {@link LongLine} (grown in place, its memory
 * given back the moment the line ends or passes the limit) rather than in pieces.
 */
const LONG_LINE_BYTES = 1024 * 1024;

/** Splits a byte stream into `\n`-terminated lines; an unterminated tail stays pending until more bytes arrive. */
export class LineSplitter {
  /** The pending line's bytes: in pieces while short, then all in `long`. */
  private fragments: Uint8Array[] = [];
  private long: LongLine | undefined;
  private fragmentLength = 0;

  constructor(readonly maxLineBytes: number = MAX_RECORD_BYTES) {}

  /** Bytes of the pending, not yet terminated line. */
  get pendingBytes(): number {
    return this.fragmentLength;
  }

  /** Bytes of the pending line actually kept (none once it is past the limit). */
  get heldBytes(): number {
    return this.fragmentLength > this.maxLineBytes ? 0 : this.fragmentLength;
  }

  /** The pending line's bytes (a copy), for serialization; undefined once it is past the limit. */
  pendingLine(): Uint8Array | undefined {
    if (this.fragmentLength > this.maxLineBytes) return undefined;
    return this.long ? this.long.view().slice() : this.joined();
  }

  /** Restores a pending line saved with {@link pendingLine} (or one past the limit, by length). */
  restorePending(line: Uint8Array | undefined, length: number): void {
    this.clear();
    this.fragments = line === undefined || line.length === 0 ? [] : [line];
    this.fragmentLength = length;
  }

  /** An independent copy. */
  fork(): LineSplitter {
    const copy = new LineSplitter(this.maxLineBytes);
    copy.fragments = this.long ? [this.long.view().slice()] : [...this.fragments];
    copy.fragmentLength = this.fragmentLength;
    return copy;
  }

  /**
   * Feeds bytes that follow everything fed so far; `onLine` gets each completed line in order (a
   * view valid only during the call). The part of `chunk` an unterminated line needs is copied,
   * so the caller may reuse `chunk` once this returns.
   */
  push(chunk: Uint8Array, onLine: LineHandler): void {
    let lineStart = 0;
    // Buffer's indexOf searches natively (memchr), many times faster than a Uint8Array's: a view, no copy.
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let newline = bytes.indexOf(NEWLINE); newline !== -1; newline = bytes.indexOf(NEWLINE, lineStart)) {
      const tail = chunk.subarray(lineStart, newline);
      const length = this.fragmentLength + tail.length;
      if (length > this.maxLineBytes) onLine(undefined, length);
      else onLine(this.fragmentLength === 0 ? tail : this.joined(tail), length);
      this.clear();
      this.fragmentLength = 0;
      lineStart = newline + 1;
    }
    if (lineStart < chunk.length) {
      const rest = chunk.length - lineStart;
      // Past the limit the line can only be reported as too large, so its bytes need not be kept.
      if (this.fragmentLength + rest > this.maxLineBytes) {
        this.clear();
      } else if (this.long !== undefined || this.fragmentLength + rest > LONG_LINE_BYTES) {
        this.keepLong(chunk.subarray(lineStart));
      } else {
        // A copy even of a Buffer, whose own `slice` is a view the caller may overwrite.
        this.fragments.push(Uint8Array.prototype.slice.call(chunk, lineStart));
      }
      this.fragmentLength += rest;
    }
  }

  /** Feeds `chunk` up to and including its first `\n` (all of it when it has none), as {@link push}; the rest. */
  pushFirstLine(chunk: Uint8Array, onLine: LineHandler): Uint8Array {
    const newline = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).indexOf(NEWLINE);
    const end = newline < 0 ? chunk.length : newline + 1;
    this.push(chunk.subarray(0, end), onLine);
    return chunk.subarray(end);
  }

  /** Appends to the long pending line, moving the pieces into it first. */
  private keepLong(bytes: Uint8Array): void {
    if (this.long === undefined) {
      this.long = new LongLine(this.maxLineBytes);
      for (const fragment of this.fragments) this.long.append(fragment);
      this.fragments = [];
    }
    this.long.append(bytes);
  }

  /** Forgets the pending line's bytes (its length is the caller's to reset). */
  private clear(): void {
    this.fragments = [];
    this.long?.release();
    this.long = undefined;
  }

  /** The pending line's bytes and `extra`: a view of the long line (valid until it changes), else a copy. */
  private joined(extra?: Uint8Array): Uint8Array {
    if (this.long !== undefined) {
      if (extra) this.long.append(extra);
      return this.long.view();
    }
    const out = new Uint8Array(this.fragmentLength + (extra?.length ?? 0));
    let offset = 0;
    for (const fragment of this.fragments) {
      out.set(fragment, offset);
      offset += fragment.length;
    }
    if (extra) out.set(extra, offset);
    return out;
  }
}

/** The bytes pushed to a {@link SingleLineCollector}, when they form exactly one `\n`-terminated line. */
export interface CollectedLine {
  /** The line as text (without `\n`); undefined when it is longer than the limit. */
  text?: string;
  /** The line's length in bytes. */
  length: number;
}

/**
 * Collects bytes that must form exactly one `\n`-terminated line (a zstd header frame's
 * plaintext), pushed in any pieces; a line past the limit is only counted.
 */
export class SingleLineCollector {
  private readonly lines: LineSplitter;
  private line: CollectedLine | undefined;
  private more = false;

  constructor(maxLineBytes: number = MAX_RECORD_BYTES) {
    this.lines = new LineSplitter(maxLineBytes);
  }

  /** Feeds the next piece of a decoder's output (what is kept of it is copied). */
  readonly push = (piece: Uint8Array): void => {
    if (this.more) return;
    const onLine: LineHandler = (line, length) => {
      if (this.line !== undefined) this.more = true;
      else this.line = line === undefined ? { length } : { text: utf8Text(line), length };
    };
    this.lines.push(piece, onLine);
    // Bytes after the line already decide the answer: they are not kept.
    if (this.line !== undefined && this.lines.pendingBytes > 0) this.more = true;
  };

  /** The line, or undefined when the bytes were empty, unterminated or more than one line. */
  result(): CollectedLine | undefined {
    return this.more || this.lines.pendingBytes > 0 ? undefined : this.line;
  }
}
