/**
 * Splitting a `session.jsonl.zstd` file into its zstd frames without decompressing (store doc
 * §5.2), and finding the whole blocks of a torn last frame.
 */

const ZSTD_MAGIC = 0xfd2fb528;
/** Largest plaintext of one compressed block (zstd's block maximum). */
const MAX_BLOCK_PLAINTEXT = 128 * 1024;

/** A structurally complete frame. */
export interface ZstdFrame {
  start: number;
  /** Exclusive end. */
  end: number;
  /** Whether the frame ends in a content checksum. */
  checksum: boolean;
  /** The declared content size, when the header has one. */
  contentSize?: number;
  /** The window a decoder must keep (a single-segment frame's content size). */
  windowSize: number;
  /** An upper bound of the frame's plaintext size, from its block headers. */
  plaintextBound: number;
  /** Where the last block's 3-byte header starts, counted from the frame's start. */
  lastBlockOffset: number;
}

/** A frame cut short by the end of the bytes. */
export interface TornZstdFrame {
  start: number;
  /** End of the frame header; undefined when the header itself is incomplete. */
  headerEnd?: number;
  /** End of the last complete block (equals `headerEnd` when none is complete). */
  blocksEnd?: number;
  /** The window a decoder must keep, once the header is complete. */
  windowSize?: number;
  /** An upper bound of the plaintext of the complete blocks. */
  plaintextBound: number;
}

/** What is at one offset: a complete frame, a torn one, or structural corruption. */
export type ZstdFrameScan = { frame: ZstdFrame } | { torn: TornZstdFrame } | { corrupt: string };

function readUint32LE(bytes: Uint8Array, offset: number): number {
  return (bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16) | (bytes[offset + 3] << 24)) >>> 0;
}

function readContentSize(bytes: Uint8Array, offset: number, size: number): number {
  let value = 0;
  for (let i = size - 1; i >= 0; i--) value = value * 256 + bytes[offset + i];
  // A 2-byte field stores the size minus 256.
  return size === 2 ? value + 256 : value;
}

/** The window size a window descriptor byte declares (RFC 8878 §3.1.1.1.2). */
function windowSizeOf(descriptor: number): number {
  const base = 2 ** (10 + (descriptor >>> 3));
  return base + (base / 8) * (descriptor & 0x07);
}

/**
 * Reads the frame that starts at `start` (before the end of `bytes`); `fileOffset` is where
 * `start` lies in the file, for messages.
 */
export function scanZstdFrame(bytes: Uint8Array, start: number, fileOffset = start): ZstdFrameScan {
  const at = (offset: number): number => fileOffset + (offset - start);
  const length = bytes.length;
  const torn = (fields: Partial<TornZstdFrame> = {}): ZstdFrameScan => ({ torn: { start, plaintextBound: 0, ...fields } });
  if (length - start < 4) return torn();
  if (readUint32LE(bytes, start) !== ZSTD_MAGIC) return { corrupt: `invalid zstd frame magic at byte ${at(start)}` };
  let offset = start + 4;
  if (offset === length) return torn();
  const descriptor = bytes[offset++];
  if ((descriptor & 0x18) !== 0) return { corrupt: `reserved zstd frame-header bit set at byte ${at(offset - 1)}` };
  const contentSizeFlag = descriptor >>> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  const checksum = (descriptor & 0x04) !== 0;
  const dictionaryFlag = descriptor & 0x03;
  const dictionaryBytes = dictionaryFlag === 3 ? 4 : dictionaryFlag;
  const contentSizeBytes = contentSizeFlag === 0 ? (singleSegment ? 1 : 0) : 1 << contentSizeFlag;
  const headerRest = (singleSegment ? 0 : 1) + dictionaryBytes + contentSizeBytes;
  if (length - offset < headerRest) return torn();
  offset += headerRest;
  const headerEnd = offset;
  const contentSize =
    contentSizeBytes === 0 ? undefined : readContentSize(bytes, offset - contentSizeBytes, contentSizeBytes);
  const windowSize = singleSegment ? (contentSize as number) : windowSizeOf(bytes[start + 5]);

  let plaintextBound = 0;
  let blockStart: number;
  for (;;) {
    const blocksEnd = offset;
    blockStart = offset;
    if (length - offset < 3) return torn({ headerEnd, blocksEnd, windowSize, plaintextBound });
    const blockHeader = bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16);
    offset += 3;
    const lastBlock = (blockHeader & 1) !== 0;
    const blockType = (blockHeader >>> 1) & 0x03;
    const blockSize = blockHeader >>> 3;
    if (blockType === 3) return { corrupt: `reserved zstd block type at byte ${at(offset - 3)}` };
    const payloadBytes = blockType === 1 ? 1 : blockSize;
    if (length - offset < payloadBytes) return torn({ headerEnd, blocksEnd, windowSize, plaintextBound });
    offset += payloadBytes;
    // Raw and RLE blocks regenerate `blockSize` bytes; a compressed one at most the block maximum.
    plaintextBound += blockType === 2 ? MAX_BLOCK_PLAINTEXT : blockSize;
    if (lastBlock) break;
  }
  if (checksum) {
    if (length - offset < 4) return torn({ headerEnd, blocksEnd: offset, windowSize, plaintextBound });
    offset += 4;
  }
  const lastBlockOffset = blockStart - start;
  return { frame: { start, end: offset, checksum, contentSize, windowSize, plaintextBound, lastBlockOffset } };
}

/**
 * Where a complete frame (as {@link scanZstdFrame} found it), or a torn frame's header and whole
 * blocks, may be cut into runs of whole blocks whose plaintext bound is at least `runPlaintext`
 * each (one block at least); the last offset is the end of the bytes. Offsets count from the frame's start.
 */
export function blockRunEnds(frame: Uint8Array, runPlaintext: number): number[] {
  const descriptor = frame[4];
  const singleSegment = (descriptor & 0x20) !== 0;
  const dictionaryFlag = descriptor & 0x03;
  const contentSizeFlag = descriptor >>> 6;
  const contentSizeBytes = contentSizeFlag === 0 ? (singleSegment ? 1 : 0) : 1 << contentSizeFlag;
  let offset = 5 + (singleSegment ? 0 : 1) + (dictionaryFlag === 3 ? 4 : dictionaryFlag) + contentSizeBytes;
  const ends: number[] = [];
  let run = 0;
  while (offset + 3 <= frame.length) {
    const blockHeader = frame[offset] | (frame[offset + 1] << 8) | (frame[offset + 2] << 16);
    const blockType = (blockHeader >>> 1) & 0x03;
    const blockSize = blockHeader >>> 3;
    offset += 3 + (blockType === 1 ? 1 : blockSize);
    run += blockType === 2 ? MAX_BLOCK_PLAINTEXT : blockSize;
    if ((blockHeader & 1) !== 0 || offset >= frame.length) break;
    if (run >= runPlaintext) {
      ends.push(offset);
      run = 0;
    }
  }
  ends.push(frame.length);
  return ends;
}
