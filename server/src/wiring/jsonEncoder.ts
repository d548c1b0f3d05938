/**
 * The stdio writer of outgoing messages: the bytes vscode-jsonrpc's own writer sends
 * (`Content-Length` header, then `Buffer.from(JSON.stringify(msg))`), but without the whole message
 * in memory when it carries a long array. A `dshSession.candidates` answer of 100,000 rows is ~28 MB
 * of UTF-8; as one V8 string (two bytes a character once one title is not Latin-1, plus the
 * builder's parts) and then one Buffer it cost well over 100 MB of transient memory. Such an array
 * is sized first (the header comes before it), then written a slice at a time; the first
 * {@link KEPT_SLICE_BYTES} are made once and kept between the two passes.
 * Rows that write their own JSON bytes (`JsonSinkSource`, the candidate rows) are written into one
 * reused buffer instead: no strings or objects per row for the young generation to collect.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-languageserver/node';
import { foregroundRequests } from '../store/concurrency';
import { isJsonSinkSource, type JsonSink, type JsonSinkSource } from '../resolver/jsonSink';
import { JsonByteCount, JsonBytes } from './jsonBytes';

/** Off only in the bench's variant build without streamed answers (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_STREAMING_JSON: boolean | undefined;
const STREAMING_ON = typeof DSH_DEVICE_STREAMING_JSON === 'undefined' || DSH_DEVICE_STREAMING_JSON;

/** Arrays at least this long are encoded a slice at a time. */
export const SLICED_ARRAY_LENGTH = 2048;

/** Elements per slice. */
const SLICE = 1024;

/** The payload fields a message's long array may sit in. */
const PAYLOAD_FIELDS = ['result', 'params'] as const;

/**
 * The sizing pass keeps the slices' bytes for the writing pass while they come to at most this many
 * bytes in all (a few thousand rows: each is then stringified once); the slices of a longer array
 * past them are only sized, then stringified again one at a time as they are written, so it is
 * never held whole. Rows that write their own bytes are sized by counting them (`JsonByteCount`).
 */
export const KEPT_SLICE_BYTES = 4 * 1024 * 1024;

/** A message's UTF-8 JSON: its length, and its bytes a piece at a time. */
export interface EncodedMessage {
  byteLength: number;
  chunks(): Iterable<Buffer>;
}

/**
 * Whether every element serializes the same alone as inside the whole array: a `toJSON` is called
 * with the element's index as its key, which a slice would change, unless it takes no parameter
 * (rows made as they are written, `MentionCandidateOnWrite`).
 */
function sliceable(items: readonly unknown[]): boolean {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== 'object' || item === null) continue;
    const toJSON = (item as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function' && toJSON.length > 0) return false;
  }
  return true;
}

/** The text of `items[start, end)` as it appears inside the array's JSON: elements joined by commas, no brackets. */
function sliceText(items: readonly unknown[], start: number): string {
  const text = JSON.stringify(items.slice(start, Math.min(items.length, start + SLICE)));
  return text.slice(1, -1);
}

/** Whether every element writes its own JSON bytes (rows made as they are written). */
function allWriteJson(items: readonly unknown[]): items is readonly JsonSinkSource[] {
  for (let i = 0; i < items.length; i++) if (!isJsonSinkSource(items[i])) return false;
  return true;
}

function whole(msg: Message): EncodedMessage {
  const buffer = Buffer.from(JSON.stringify(msg, undefined, 0), 'utf-8');
  return { byteLength: buffer.byteLength, chunks: () => [buffer] };
}

/**
 * `msg` as UTF-8 JSON, byte for byte `Buffer.from(JSON.stringify(msg))`. A top-level `result` or
 * `params` array of {@link SLICED_ARRAY_LENGTH} elements or more comes a slice at a time (JSON
 * serialization of plain data is deterministic, so both passes give the same text).
 */
export function encodedMessage(msg: Message, keptSliceBytes = KEPT_SLICE_BYTES): EncodedMessage {
  // The plain path: the library writer's bytes, made whole.
  if (!STREAMING_ON) return whole(msg);
  const record = msg as unknown as Record<string, unknown>;
  const field = PAYLOAD_FIELDS.find((name) => Array.isArray(record[name]) && (record[name] as unknown[]).length >= SLICED_ARRAY_LENGTH);
  if (field === undefined) return whole(msg);
  const items = record[field] as unknown[];
  if (!sliceable(items)) return whole(msg);
  // The message around the array: the array's place marked by an empty one, in the same key order.
  const outer = JSON.stringify({ ...record, [field]: [] });
  const marker = `"${field}":[]`;
  const at = outer.indexOf(marker);
  if (at === -1 || outer.indexOf(marker, at + 1) !== -1) return whole(msg);
  const head = outer.slice(0, at + marker.length - 1);
  const tail = outer.slice(at + marker.length - 1);
  let sliceBytes: (start: number) => Buffer;
  let sliceLength: (start: number) => number;
  if (allWriteJson(items)) {
    const writeSlice = (sink: JsonSink, start: number): void => {
      const end = Math.min(items.length, start + SLICE);
      for (let i = start; i < end; i++) {
        if (i > 0) sink.byte(0x2c);
        items[i]!.writeJson(sink);
      }
    };
    // Written straight into bytes: one buffer reused for every slice, copied out to be sent.
    const out = new JsonBytes();
    sliceBytes = (start) => {
      out.reset();
      writeSlice(out, start);
      return out.copy();
    };
    // Sized by counting only: what each row would write, with nothing encoded or copied.
    const count = new JsonByteCount();
    sliceLength = (start) => {
      count.length = 0;
      writeSlice(count, start);
      return count.length;
    };
  } else {
    sliceBytes = (start) => Buffer.from(start === 0 ? sliceText(items, start) : `,${sliceText(items, start)}`, 'utf-8');
    sliceLength = (start) => Buffer.byteLength(sliceText(items, start)) + (start === 0 ? 0 : 1);
  }
  let byteLength = Buffer.byteLength(head) + Buffer.byteLength(tail);
  // Slices [0, keptEnd) are made once and kept for the writing pass; the rest are sized now and
  // made again as they are written.
  const kept: Buffer[] = [];
  let keptEnd = 0;
  for (let start = 0; start < items.length; start += SLICE) {
    if (byteLength > keptSliceBytes) {
      byteLength += sliceLength(start);
      continue;
    }
    const bytes = sliceBytes(start);
    byteLength += bytes.length;
    kept.push(bytes);
    keptEnd = start + SLICE;
  }
  function* chunks(): Generator<Buffer> {
    yield Buffer.from(head, 'utf-8');
    yield* kept;
    for (let start = keptEnd; start < items.length; start += SLICE) yield sliceBytes(start);
    yield Buffer.from(tail, 'utf-8');
  }
  return { byteLength, chunks };
}

/**
 * A `StreamMessageWriter` that writes a long message a slice at a time (see above); messages go out
 * one after another, in order. Failures are reported as the library's writer reports them.
 */
export class SlicedStreamMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private queue: Promise<void> = Promise.resolve();
  private errorCount = 0;

  constructor(private readonly stream: NodeJS.WritableStream) {
    super();
    stream.on('error', (error: unknown) => this.fireError(error));
    stream.on('close', () => this.fireClose());
  }

  write(msg: Message): Promise<void> {
    // A long answer is written for a while after its handler returned: background store work
    // waits for it too (store/concurrency.ts).
    const ended = foregroundRequests.begin();
    const run = this.queue.then(() => this.send(msg)).finally(ended);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async send(msg: Message): Promise<void> {
    let encoded: EncodedMessage;
    try {
      encoded = encodedMessage(msg);
    } catch (error) {
      this.fireError(error);
      throw error;
    }
    try {
      await this.chunk(Buffer.from(`Content-Length: ${encoded.byteLength}\r\n\r\n`, 'ascii'));
      for (const chunk of encoded.chunks()) await this.chunk(chunk);
    } catch (error) {
      this.errorCount++;
      this.fireError(error, msg, this.errorCount);
      throw error;
    }
  }

  private chunk(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stream.write(data, (error?: Error | null) => (error === undefined || error === null ? resolve() : reject(error)));
    });
  }

  end(): void {
    this.stream.end();
  }
}
