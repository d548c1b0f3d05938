/**
 * Concatenated zstd frames as dsh writes them: split with the store's own frame scanner
 * (store doc §5.2), and decompressed one frame at a time with fzstd, the decoder on Node 20.
 */
import { scanZstdFrame, type ZstdFrame } from 'dsh-session-ls/dist/store/log/zstdFrames';
import { decompress } from 'fzstd';

/** The complete frames of `data`, at most `limit` of them; throws on a torn or corrupt frame. */
export function completeFrames(data: Uint8Array, limit = Infinity): ZstdFrame[] {
  const frames: ZstdFrame[] = [];
  let at = 0;
  while (at < data.length && frames.length < limit) {
    const scan = scanZstdFrame(data, at);
    if ('corrupt' in scan) throw new Error(scan.corrupt);
    if ('torn' in scan) throw new Error(`torn zstd frame at byte ${at}`);
    frames.push(scan.frame);
    at = scan.frame.end;
  }
  return frames;
}

/** Byte offsets where each complete frame ends, at most `limit` of them. */
export function frameEnds(data: Uint8Array, limit = Infinity): number[] {
  return completeFrames(data, limit).map((frame) => frame.end);
}

/**
 * One frame's plaintext. fzstd allocates and shifts a buffer of the declared window for every
 * frame without a content size; dsh's frames declare 2 MiB (Node's zlib) however small they are,
 * which makes a log of many small frames several times slower to decode. A frame never refers
 * further back than its own content, so declaring the smallest window that covers its plaintext
 * bound decodes the same bytes (the checksum covers the content only).
 */
export function decompressFrame(data: Uint8Array, frame: ZstdFrame): Uint8Array {
  let bytes = data.subarray(frame.start, frame.end);
  const descriptor = bytes[4];
  const hasWindowDescriptor = (descriptor & 0x20) === 0;
  if (hasWindowDescriptor && frame.contentSize === undefined) {
    let exponent = 0;
    while (exponent < 31 && 2 ** (10 + exponent) < frame.plaintextBound) exponent += 1;
    const smaller = exponent << 3;
    if (smaller < bytes[5]) {
      bytes = Uint8Array.from(bytes);
      bytes[5] = smaller;
    }
  }
  return decompress(bytes);
}

/** The whole plaintext of concatenated frames. */
export function decompressFrames(data: Uint8Array): Uint8Array {
  const parts = completeFrames(data).map((frame) => decompressFrame(data, frame));
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
