/**
 * Concatenated zstd frames as dsh writes them, split with the store's own frame scanner (store
 * doc §5.2) and decoded with the store's own frame decoder (checksums verified), so the floor
 * decodes exactly as fast as the project can.
 */
import { defaultZstdDecoder, initZstdSupport, type ZstdFrameDecoder } from 'dsh-session-ls/dist/store/log/zstdDecoder';
import { scanZstdFrame, type ZstdFrame } from 'dsh-session-ls/dist/store/log/zstdFrames';

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

let decoder: ZstdFrameDecoder | undefined;

/** Load the decoder's checksum hasher; await once before {@link decompressFrames}. */
export async function initFrameDecoding(): Promise<void> {
  await initZstdSupport();
  decoder = defaultZstdDecoder();
}

/** Which decoder {@link decompressFrames} uses (after {@link initFrameDecoding}). */
export function frameDecoderName(): string {
  if (!decoder) throw new Error('initFrameDecoding() first');
  return decoder.name;
}

/** Decodes each complete frame of `data` (checksums verified), handing over its plaintext piece by piece. */
function decodeFrames(data: Uint8Array, onPiece: (piece: Uint8Array) => void): void {
  if (!decoder) throw new Error('initFrameDecoding() first');
  for (const frame of completeFrames(data)) decoder.decodeFrame(data.subarray(frame.start, frame.end), frame, onPiece);
}

/**
 * The plaintext length of concatenated frames, each decoded and its checksum verified, with the
 * plaintext left where the decoder put it: what a floor must do, without the copies
 * {@link decompressFrames} makes to hand the plaintext over.
 */
export function decodedLength(data: Uint8Array): number {
  let length = 0;
  decodeFrames(data, (piece) => {
    length += piece.length;
  });
  return length;
}

/** The whole plaintext of concatenated frames (each checksum verified). */
export function decompressFrames(data: Uint8Array): Uint8Array {
  const pieces: Uint8Array[] = [];
  let length = 0;
  decodeFrames(data, (piece) => {
    // A piece is only valid during the call.
    pieces.push(piece.slice());
    length += piece.length;
  });
  if (pieces.length === 1) return pieces[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
