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
 * A body longer than {@link MAX_MESSAGE_BYTES} is not read: the library would gather it whole (and a
 * body past V8's string limit, ~512 MB, it drops without a word after buffering it all). Its bytes
 * are dropped as they arrive, so memory stays flat however long it declares itself, and in its place
 * the reader gets one small message, {@link MESSAGE_TOO_LARGE}, with what its first bytes tell (id,
 * method, document URI): the server answers that id with an error, or tells the user which document
 * it could not open. Later messages are read as usual.
 *
 * Other bytes pass through unchanged, and a body is passed on as it arrives, never gathered.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { MAX_MESSAGE_BYTES, MESSAGE_TOO_LARGE, type MessageTooLargeParams } from './sizeLimits';

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

/** How much of a body too long to read is kept to tell what it was (its id, method and document URI come first). */
export const TOO_LARGE_HEAD_BYTES = 16 * 1024;

/** What the start of a JSON-RPC message says: its id, method and `params.textDocument.uri`, when they come before the cut. */
export function messageHead(text: string): { id?: number | string; method?: string; uri?: string } {
  const found: { id?: number | string; method?: string; uri?: string } = {};
  let at = 0;
  const space = (): void => {
    while (at < text.length && ' \t\r\n'.includes(text[at]!)) at++;
  };
  const string = (): string => {
    let end = at + 1;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    if (end >= text.length) throw new RangeError('cut');
    const value = JSON.parse(text.slice(at, end + 1)) as string;
    at = end + 1;
    return value;
  };
  const value = (path: string): void => {
    space();
    const c = text[at];
    if (c === '{' || c === '[') {
      at++;
      for (let index = 0; ; index++) {
        space();
        if (text[at] === (c === '{' ? '}' : ']')) {
          at++;
          return;
        }
        let key = String(index);
        if (c === '{') {
          if (text[at] !== '"') throw new RangeError('not JSON');
          key = string();
          space();
          if (text[at++] !== ':') throw new RangeError('not JSON');
        }
        value(`${path}/${key}`);
        space();
        if (text[at] === ',') at++;
      }
    }
    let scalar: unknown;
    if (c === '"') {
      scalar = string();
    } else {
      const match = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at, at + 64));
      if (match === null || at + match[0].length >= text.length) throw new RangeError('cut');
      at += match[0].length;
      scalar = JSON.parse(match[0]);
    }
    if (path === '/id' && (typeof scalar === 'number' || typeof scalar === 'string')) found.id = scalar;
    if (path === '/method' && typeof scalar === 'string') found.method = scalar;
    if (path === '/params/textDocument/uri' && typeof scalar === 'string') found.uri = scalar;
  };
  try {
    value('');
  } catch {
    // Cut short (the usual case), not JSON, or nested too deep: what was found before is all there is.
  }
  return found;
}

/** Options of {@link CheckedFraming}. */
export interface CheckedFramingOptions {
  /** A longer body is dropped as it arrives (default {@link MAX_MESSAGE_BYTES}). */
  maxBodyBytes?: number;
  /** Hears one line per body dropped. */
  log?: (message: string) => void;
}

export class CheckedFraming extends Transform {
  /** Bytes of the header block read so far (small: a header is a few lines). */
  private header: Buffer = Buffer.alloc(0);
  /** Body bytes still to pass on before the next header. */
  private bodyLeft = 0;
  private broken = false;
  /** Bytes of a body too long to read still to drop before the next header. */
  private dropLeft = 0;
  /** The declared length of the body being dropped. */
  private dropLength = 0;
  /** Its first bytes (up to {@link TOO_LARGE_HEAD_BYTES}), until the message standing for it is sent. */
  private dropHead: Buffer[] | undefined;
  private dropHeadBytes = 0;
  private readonly maxBodyBytes: number;

  /** `onBroken` hears, once, why the input ends early. */
  constructor(
    private readonly onBroken: (reason: string) => void,
    private readonly options: CheckedFramingOptions = {},
  ) {
    super();
    this.maxBodyBytes = options.maxBodyBytes ?? MAX_MESSAGE_BYTES;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let rest = chunk;
    while (rest.length > 0 && !this.broken) {
      if (this.dropLeft > 0) {
        const take = Math.min(this.dropLeft, rest.length);
        if (this.dropHead !== undefined) {
          // Copied: a view would keep the whole chunk alive.
          const kept = Buffer.from(rest.subarray(0, Math.min(take, TOO_LARGE_HEAD_BYTES - this.dropHeadBytes)));
          this.dropHead.push(kept);
          this.dropHeadBytes += kept.length;
          if (this.dropHeadBytes >= TOO_LARGE_HEAD_BYTES || take === this.dropLeft) this.standIn();
        }
        this.dropLeft -= take;
        rest = rest.subarray(take);
        continue;
      }
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
      rest = this.header.subarray(end + HEADER_END.length);
      if (length > this.maxBodyBytes) {
        this.header = Buffer.alloc(0);
        this.dropLeft = this.dropLength = length;
        this.dropHead = [];
        this.dropHeadBytes = 0;
        continue;
      }
      this.push(this.header.subarray(0, end + HEADER_END.length));
      this.header = Buffer.alloc(0);
      this.bodyLeft = length;
    }
    done();
  }

  /** Send, in place of the body being dropped, the message that says what it was (once its first bytes are in). */
  private standIn(): void {
    const head = messageHead(Buffer.concat(this.dropHead!).toString('utf8'));
    this.dropHead = undefined;
    const params: MessageTooLargeParams = {
      length: this.dropLength,
      limit: this.maxBodyBytes,
      ...(head.method === undefined ? {} : { method: head.method }),
      ...(head.uri === undefined ? {} : { uri: head.uri }),
    };
    this.options.log?.(
      `a message of ${this.dropLength} bytes is over the limit of ${this.maxBodyBytes} and is not read` +
        `${head.method === undefined ? '' : ` (${head.method}${head.uri === undefined ? '' : ` of ${head.uri}`})`}` +
        `${head.id === undefined ? '' : `; request ${JSON.stringify(head.id)} is answered with an error`}`,
    );
    const message = { jsonrpc: '2.0', ...(head.id === undefined ? {} : { id: head.id }), method: MESSAGE_TOO_LARGE, params };
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.push(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  private fail(reason: string): void {
    this.broken = true;
    this.header = Buffer.alloc(0);
    this.onBroken(`the client's message framing is broken (${reason}); no later message can be read`);
    this.push(null);
  }
}
