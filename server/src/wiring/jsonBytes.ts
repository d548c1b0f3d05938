import { isJsonPlain, type JsonSink } from '../resolver/jsonSink';

/**
 * The wire writer's {@link JsonSink}: JSON written straight into a reused UTF-8 buffer, so a row
 * of a long answer leaves almost no garbage for the young generation (resolver/jsonSink.ts).
 */

const QUOTE = 0x22;

/** A growing UTF-8 buffer of JSON text, reused from piece to piece. */
export class JsonBytes implements JsonSink {
  private buffer: Buffer;
  /** Bytes written so far. */
  length = 0;
  /** Scratch room for bytes that are encoded again before they are written (base64url). */
  private scratch: Buffer;

  constructor(initialBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
    this.scratch = Buffer.allocUnsafe(1024);
  }

  /** Empties the buffer, keeping its memory. */
  reset(): void {
    this.length = 0;
  }

  /** A copy of the bytes written since the last reset. */
  copy(): Buffer {
    const out = Buffer.allocUnsafe(this.length);
    this.buffer.copy(out, 0, 0, this.length);
    return out;
  }

  private reserve(bytes: number): void {
    const needed = this.length + bytes;
    if (needed <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  /** One byte. */
  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  /** `text`'s UTF-8 bytes, as they are (no JSON escaping): for JSON punctuation and safe text. */
  raw(text: string): void {
    this.reserve(text.length * 3);
    this.length += this.buffer.write(text, this.length);
  }

  /**
   * Unpadded base64url of the UTF-8 bytes of `JSON.stringify(text)`, as text (no quotes): the
   * payload of a session URI (shared/uri.ts makes the same string).
   */
  base64UrlOfJsonString(text: string): void {
    const json = isJsonPlain(text) ? undefined : JSON.stringify(text);
    const most = (json ?? text).length * 3 + 2;
    if (this.scratch.length < most) this.scratch = Buffer.allocUnsafe(most);
    const scratch = this.scratch;
    let n: number;
    if (json !== undefined) {
      n = scratch.write(json, 0);
    } else {
      scratch[0] = QUOTE;
      n = 1 + scratch.write(text, 1);
      scratch[n++] = QUOTE;
    }
    this.raw(scratch.toString('base64url', 0, n));
  }
}

/** Base64 characters (unpadded) for 0, 1 and 2 bytes left over after the whole groups of three. */
const BASE64_TAIL = [0, 2, 3] as const;

/** The UTF-8 length of `JSON.stringify(text)`. */
function jsonStringBytes(text: string): number {
  return isJsonPlain(text) ? Buffer.byteLength(text, 'utf-8') + 2 : Buffer.byteLength(JSON.stringify(text), 'utf-8');
}

/**
 * A {@link JsonSink} that only counts: `length` ends as the bytes {@link JsonBytes} would have
 * written for the same calls, without encoding or copying any of them. The encoder sizes a long
 * answer with it before writing the answer.
 */
export class JsonByteCount implements JsonSink {
  /** Bytes counted so far. */
  length = 0;

  byte(): void {
    this.length += 1;
  }

  raw(text: string): void {
    this.length += Buffer.byteLength(text, 'utf-8');
  }

  base64UrlOfJsonString(text: string): void {
    const bytes = jsonStringBytes(text);
    this.length += Math.floor(bytes / 3) * 4 + BASE64_TAIL[bytes % 3]!;
  }
}
