/**
 * The bytes of one long pending line, in one resizable ArrayBuffer: grown in place as bytes come
 * (what is there is never copied again), and its memory given back to the system the moment the
 * line is done (shrunk to nothing) rather than left to the garbage collector. V8 lets tens of MB
 * of dead array buffers wait for a collection, per thread; a dropped long line would come on top
 * of the next one, and a thread whose read is over might keep it for good.
 */

/** What the ES2024 library calls a resizable ArrayBuffer (the project compiles against ES2022). */
interface ResizableBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const ResizableBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableBuffer;

export class LongLine {
  private readonly buffer: ResizableBuffer;
  private length = 0;

  /** `maxBytes`: the most the line may hold (address space is reserved for it, memory only as it grows). */
  constructor(maxBytes: number) {
    this.buffer = new ResizableBuffer(0, { maxByteLength: maxBytes });
  }

  /** Appends `bytes` (copied); the line must stay within its `maxBytes`. */
  append(bytes: Uint8Array): void {
    const at = this.length;
    this.buffer.resize(at + bytes.length);
    new Uint8Array(this.buffer, at, bytes.length).set(bytes);
    this.length += bytes.length;
  }

  /** The line's bytes, a view valid until the next append or release. */
  view(): Uint8Array {
    return new Uint8Array(this.buffer, 0, this.length);
  }

  /** Gives the line's memory back to the system; the line is empty afterwards. */
  release(): void {
    this.buffer.resize(0);
    this.length = 0;
  }
}
