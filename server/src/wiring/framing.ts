/**
 * The byte stream of a stream transport (stdio), checked for LSP framing before vscode-jsonrpc reads
 * it. A header without a usable `Content-Length` leaves no way to tell where its body ends, so no
 * later message can be read either; the library's reader then eats every later message as a broken
 * header, silently, and the server looks alive while it answers nothing. Here such a header (no
 * `Content-Length`, one that is not a non-negative integer, a line without `:`, or a header block
 * past {@link MAX_HEADER_BYTES}) is reported once and ends the input, so the server stops as when
 * its client goes away and the client sees it stop. A body that is not JSON is the library's to
 * answer, and later messages are read as usual.
 *
 * Bytes pass through unchanged, and a body is passed on as it arrives, never gathered.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** A header block longer than this is not one (a client writing its body without a header, say). */
export const MAX_HEADER_BYTES = 64 * 1024;

const HEADER_END = Buffer.from('\r\n\r\n');

/** The body length a header block gives, or why it gives none. */
export function contentLengthOf(block: string): number | string {
  let length: number | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1) return `a header line without ":" (${JSON.stringify(line.slice(0, 80))})`;
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
    const value = line.slice(colon + 1).trim();
    if (!/^[0-9]{1,15}$/.test(value)) return `a Content-Length that is not a byte count (${JSON.stringify(value.slice(0, 40))})`;
    length = Number(value);
  }
  return length ?? 'a header without Content-Length';
}

export class CheckedFraming extends Transform {
  /** Bytes of the header block read so far (small: a header is a few lines). */
  private header: Buffer = Buffer.alloc(0);
  /** Body bytes still to pass on before the next header. */
  private bodyLeft = 0;
  private broken = false;

  /** `onBroken` hears, once, why the input ends early. */
  constructor(private readonly onBroken: (reason: string) => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let rest = chunk;
    while (rest.length > 0 && !this.broken) {
      if (this.bodyLeft > 0) {
        const take = Math.min(this.bodyLeft, rest.length);
        this.push(rest.subarray(0, take));
        this.bodyLeft -= take;
        rest = rest.subarray(take);
        continue;
      }
      const seen = this.header.length;
      this.header = seen === 0 ? rest : Buffer.concat([this.header, rest]);
      // The end may straddle the previous chunk and this one.
      const end = this.header.indexOf(HEADER_END, Math.max(0, seen - HEADER_END.length + 1));
      if ((end === -1 ? this.header.length : end) > MAX_HEADER_BYTES) this.fail(`a header block of more than ${MAX_HEADER_BYTES} bytes`);
      if (end === -1 || this.broken) return done();
      const length = contentLengthOf(this.header.toString('latin1', 0, end));
      if (typeof length === 'string') {
        this.fail(length);
        return done();
      }
      this.push(this.header.subarray(0, end + HEADER_END.length));
      rest = this.header.subarray(end + HEADER_END.length);
      this.header = Buffer.alloc(0);
      this.bodyLeft = length;
    }
    done();
  }

  private fail(reason: string): void {
    this.broken = true;
    this.header = Buffer.alloc(0);
    this.onBroken(`the client's message framing is broken (${reason}); no later message can be read`);
    this.push(null);
  }
}
