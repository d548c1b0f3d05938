/**
 * Concatenated zstd frames as dsh writes them (store doc §5.2): split without decompressing,
 * and decompressed one frame at a time with fzstd, the project's decoder on Node 20.
 */
import { decompress } from 'fzstd';

const FRAME_MAGIC = 0xfd2fb528;
/** Largest plaintext one compressed block can hold. */
const MAX_BLOCK_CONTENT = 128 * 1024;

/** Where one complete frame lies, and the most plaintext it can hold. */
export interface FrameSpan {
  start: number;
  end: number;
  /** Upper bound of the frame's plaintext: raw and RLE blocks exactly, compressed ones 128 KiB. */
  contentBound: number;
  /** Offset of the window descriptor byte, when the frame has one (not single-segment). */
  windowDescriptorAt?: number;
}

/** The complete frames of `data`, at most `limit` of them; throws on a torn or invalid frame. */
export function scanFrames(data: Uint8Array, limit = Infinity): FrameSpan[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const spans: FrameSpan[] = [];
  let at = 0;
  const need = (n: number): void => {
    if (at + n > data.length) throw new Error(`torn zstd frame at ${spans.length > 0 ? spans[spans.length - 1].end : 0}`);
  };
  while (at < data.length && spans.length < limit) {
    const start = at;
    need(5);
    if (view.getUint32(at, true) !== FRAME_MAGIC) throw new Error(`invalid frame magic at ${at}`);
    const descriptor = data[at + 4];
    if (descriptor & 0x18) throw new Error(`reserved descriptor bits at ${at}`);
    const sizeFlag = descriptor >> 6;
    const singleSegment = (descriptor & 0x20) !== 0;
    const dictionaryBytes = [0, 1, 2, 4][descriptor & 3];
    const sizeBytes = sizeFlag === 0 ? (singleSegment ? 1 : 0) : 1 << sizeFlag;
    at += 5 + (singleSegment ? 0 : 1) + dictionaryBytes + sizeBytes;
    let contentBound = 0;
    for (;;) {
      need(3);
      const header = data[at] | (data[at + 1] << 8) | (data[at + 2] << 16);
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) throw new Error(`reserved block type at ${at}`);
      contentBound += type === 2 ? MAX_BLOCK_CONTENT : size;
      at += 3 + (type === 1 ? 1 : size);
      need(0);
      if (header & 1) break;
    }
    if (descriptor & 0x04) at += 4;
    need(0);
    spans.push({ start, end: at, contentBound, windowDescriptorAt: singleSegment ? undefined : start + 5 });
  }
  return spans;
}

/** Byte offsets where each complete frame ends, at most `limit` of them. */
export function frameEnds(data: Uint8Array, limit = Infinity): number[] {
  return scanFrames(data, limit).map((span) => span.end);
}

/**
 * One frame's plaintext. fzstd allocates and shifts a buffer of the declared window per frame;
 * dsh's frames declare 2 MiB (Node's zlib) however small they are, which makes a log of many
 * small frames ~10× slower to decode. A frame never refers further back than its own content,
 * so declaring the smallest window that covers its content bound is equivalent (the checksum
 * covers the content only).
 */
export function decompressFrame(data: Uint8Array, span: FrameSpan): Uint8Array {
  let frame = data.subarray(span.start, span.end);
  if (span.windowDescriptorAt !== undefined && data[span.start + 4] >> 6 === 0) {
    let exponent = 0;
    while (exponent < 31 && 2 ** (10 + exponent) < span.contentBound) exponent += 1;
    const smaller = exponent << 3;
    if (smaller < data[span.windowDescriptorAt]) {
      frame = Uint8Array.from(frame);
      frame[5] = smaller;
    }
  }
  return decompress(frame);
}

/** The whole plaintext of concatenated frames. */
export function decompressFrames(data: Uint8Array): Uint8Array {
  const parts = scanFrames(data).map((span) => decompressFrame(data, span));
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
