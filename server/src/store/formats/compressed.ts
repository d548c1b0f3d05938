import { initZstdSupport } from '../log';
import { defaultZstdDecoder } from '../log/zstdDecoder';
import { scanZstdFrame } from '../log/zstdFrames';

/** Thrown when a compressed file's plaintext would pass the limit. */
export class PlaintextTooLarge extends Error {
  override readonly name = 'PlaintextTooLarge';
}

/**
 * The plaintext of a whole `.zst` session file (an agent may compress idle ones), frame after frame, through the store's
 * own zstd decoder. Damage never throws: a torn last frame gives its whole blocks, and decoding stops
 * at the first corrupt or undecodable frame, keeping what came before (a torn line there is skipped
 * by the JSONL parser, as in a plain file). Past `maxBytes` of plaintext: `PlaintextTooLarge`. The
 * plaintext comes in the decoder's pieces, never joined into one buffer.
 */
export async function decodeZstdPieces(bytes: Uint8Array, maxBytes: number): Promise<Buffer[]> {
  await initZstdSupport();
  const decoder = defaultZstdDecoder();
  const pieces: Buffer[] = [];
  let total = 0;
  const sink = (piece: Uint8Array): void => {
    total += piece.length;
    if (total > maxBytes) throw new PlaintextTooLarge(`more than ${maxBytes} bytes of plaintext`);
    pieces.push(Buffer.from(piece)); // A piece is valid only during the call.
  };
  let offset = 0;
  while (offset < bytes.length) {
    // As the store's reader does: each frame scanned at the start of the bytes that remain.
    const rest = bytes.subarray(offset);
    const scan = scanZstdFrame(rest, 0, offset);
    const mark = pieces.length;
    const markTotal = total;
    try {
      if ('frame' in scan) {
        decoder.decodeFrame(rest.subarray(0, scan.frame.end), scan.frame, sink);
        offset += scan.frame.end;
        continue;
      }
      if ('torn' in scan && scan.torn.blocksEnd !== undefined) decoder.decodeBlocks(rest.subarray(0, scan.torn.blocksEnd), scan.torn, sink);
    } catch (error) {
      if (error instanceof PlaintextTooLarge) throw error;
      // A frame that fails to decode adds nothing.
      pieces.length = mark;
      total = markTotal;
    }
    break;
  }
  return pieces;
}
