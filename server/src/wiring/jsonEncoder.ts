/**
 * The JSON encoding of outgoing messages, byte for byte what vscode-jsonrpc's own encoder writes
 * (`Buffer.from(JSON.stringify(msg))`), but without one string of the whole message when a message
 * carries a long array: a `dshSession.candidates` answer of 100,000 rows is ~30 MB of UTF-8, which as
 * one V8 string (two bytes a character as soon as one title is not Latin-1, plus the builder's
 * parts) cost more than 100 MB of transient heap on top of the Buffer. Such an array is stringified
 * a slice at a time, twice: once to size the Buffer, once to fill it.
 */
import type { Message } from 'vscode-languageserver/node';

/** Arrays at least this long are encoded a slice at a time. */
export const SLICED_ARRAY_LENGTH = 2048;

/** Elements per slice. */
const SLICE = 1024;

/** The payload fields a message's long array may sit in. */
const PAYLOAD_FIELDS = ['result', 'params'] as const;

interface ContentTypeEncoder {
  readonly name: string;
  encode(msg: Message, options: { charset: BufferEncoding }): Promise<Uint8Array>;
}

/**
 * Whether every element serializes the same alone as inside the whole array: a `toJSON` is called
 * with the element's index as its key, which a slice would change.
 */
function sliceable(items: readonly unknown[]): boolean {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item === 'object' && item !== null && typeof (item as { toJSON?: unknown }).toJSON === 'function') return false;
    if (typeof item === 'bigint') return false;
  }
  return true;
}

/** The text of `items[start, end)` as it appears inside the array's JSON: elements joined by commas, no brackets. */
function sliceText(items: readonly unknown[], start: number, end: number): string {
  const text = JSON.stringify(items.slice(start, end));
  return text.slice(1, -1);
}

/**
 * `msg` as UTF-8 JSON, identical to `Buffer.from(JSON.stringify(msg), charset)`. A top-level `result`
 * or `params` array of {@link SLICED_ARRAY_LENGTH} elements or more (with `utf-8` as the charset) is
 * written into the Buffer a slice at a time.
 */
export function encodeMessage(msg: Message, charset: BufferEncoding = 'utf-8'): Buffer {
  const record = msg as unknown as Record<string, unknown>;
  const field = PAYLOAD_FIELDS.find((name) => Array.isArray(record[name]) && (record[name] as unknown[]).length >= SLICED_ARRAY_LENGTH);
  const normalized = charset.toLowerCase().replace('-', '');
  if (field === undefined || normalized !== 'utf8') return Buffer.from(JSON.stringify(msg, undefined, 0), charset);
  const items = record[field] as unknown[];
  if (!sliceable(items)) return Buffer.from(JSON.stringify(msg, undefined, 0), charset);
  // The message around the array: the array's place marked by an empty one, in the same key order.
  const outer = JSON.stringify({ ...record, [field]: [] });
  const marker = `"${field}":[]`;
  const at = outer.indexOf(marker);
  if (at === -1 || outer.indexOf(marker, at + 1) !== -1) return Buffer.from(JSON.stringify(msg, undefined, 0), charset);
  const head = outer.slice(0, at + marker.length - 1);
  const tail = outer.slice(at + marker.length - 1);
  const lengths: number[] = [];
  let total = Buffer.byteLength(head) + Buffer.byteLength(tail);
  for (let start = 0; start < items.length; start += SLICE) {
    const length = Buffer.byteLength(sliceText(items, start, Math.min(items.length, start + SLICE)));
    lengths.push(length);
    total += length + (start > 0 ? 1 : 0);
  }
  const buffer = Buffer.allocUnsafe(total);
  let offset = buffer.write(head, 0);
  for (let start = 0, slice = 0; start < items.length; start += SLICE, slice++) {
    if (start > 0) offset += buffer.write(',', offset);
    const written = buffer.write(sliceText(items, start, Math.min(items.length, start + SLICE)), offset);
    // The elements changed between the passes (a getter): fall back to the one-string encoding.
    if (written !== lengths[slice]) return Buffer.from(JSON.stringify(msg, undefined, 0), charset);
    offset += written;
  }
  offset += buffer.write(tail, offset);
  if (offset !== total) return Buffer.from(JSON.stringify(msg, undefined, 0), charset);
  return buffer;
}

/** The encoder for `StreamMessageWriter`'s options. */
export const slicedJsonEncoder: ContentTypeEncoder = Object.freeze({
  name: 'application/json',
  encode(msg: Message, options: { charset: BufferEncoding }): Promise<Uint8Array> {
    try {
      return Promise.resolve(encodeMessage(msg, options.charset));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  },
});
