/**
 * Decoding single zstd frames into a stream of plaintext pieces, so a frame whose plaintext is
 * huge (a 7 KB frame can hold 200 MB) is never held whole. fzstd's streaming `Decompress` hands
 * over one block at a time (≤ 128 KiB) and the frame's checksum (low 32 bits of XXH64, seed 0) is
 * computed incrementally and verified at its end, because fzstd silently decodes corrupt input to
 * garbage (store doc §5.6). Where the runtime has `node:zlib` zstd (Node ≥ 22.15), it decodes, and
 * verifies, every frame whose plaintext is small enough to be one piece; its synchronous API has no
 * bounded streaming, so a larger frame goes the fzstd way. Both refuse a window libzstd refuses.
 *
 * xxhash-wasm initialises asynchronously: loaders `await initZstdSupport()` once, after which all
 * decoding is synchronous.
 */
import * as zlib from 'node:zlib';
import { Decompress } from 'fzstd';
import type { TornZstdFrame, ZstdFrame } from './zstdFrames';

/** A frame whose plaintext could exceed this is refused as too large rather than decoded. */
export const MAX_FRAME_PLAINTEXT_BYTES = 1024 * 1024 * 1024;

/** Most plaintext a decoder hands over in one piece. */
export const MAX_PLAINTEXT_PIECE_BYTES = 1024 * 1024;

/**
 * libzstd's default decoding limit (`ZSTD_WINDOWLOG_LIMIT_DEFAULT` 27, plus one): `node:zlib`
 * refuses a larger window ("Frame requires too much memory for decoding"), so fzstd does too.
 */
export const MAX_WINDOW_BYTES = 2 ** 27 + 1;

/** Receives decoded plaintext in order, a piece at a time; a piece is fresh (never reused by the decoder), so it may be kept. */
export type PlaintextSink = (piece: Uint8Array) => void;

/** Decodes single zstd frames, handing the plaintext over in pieces of at most {@link MAX_PLAINTEXT_PIECE_BYTES}. */
export interface ZstdFrameDecoder {
  readonly name: 'node:zlib' | 'fzstd';
  /**
   * Decodes one complete frame into `sink`, its checksum verified at the end; throws on any
   * failure (the pieces handed over before it are then not the frame's plaintext).
   */
  decodeFrame(frame: Uint8Array, info: ZstdFrame, sink: PlaintextSink): void;
  /** Decodes a torn frame's header plus whole blocks (`prefix` ends at a block boundary) into `sink`; throws on failure. */
  decodeBlocks(prefix: Uint8Array, info: TornZstdFrame, sink: PlaintextSink): void;
}

interface Xxh64 {
  create64(seed?: bigint): { update(input: Uint8Array): unknown; digest(): bigint };
}

interface NodeZstd {
  zstdDecompressSync(input: Uint8Array, options?: { finishFlush?: number; maxOutputLength?: number }): Buffer;
  constants: { ZSTD_e_flush: number };
}

let xxh64: Xxh64 | undefined;
let initializing: Promise<void> | undefined;

/** Loads what zstd decoding needs (the XXH64 wasm); await once before decoding zstd logs. */
export function initZstdSupport(): Promise<void> {
  initializing ??= import('xxhash-wasm')
    .then(async (module) => {
      xxh64 = await module.default();
    })
    .catch((error: unknown) => {
      initializing = undefined;
      throw error;
    });
  return initializing;
}

function initializedHasher(): Xxh64 {
  if (!xxh64) throw new Error('zstd support is not initialised: await initZstdSupport() first');
  return xxh64;
}

function nodeZstd(): NodeZstd | undefined {
  const candidate = zlib as unknown as Partial<NodeZstd>;
  return typeof candidate.zstdDecompressSync === 'function' ? (candidate as NodeZstd) : undefined;
}

function readUint32LE(bytes: Uint8Array, offset: number): number {
  return (bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16) | (bytes[offset + 3] << 24)) >>> 0;
}

function refuseLargeWindow(windowSize: number | undefined): void {
  if (windowSize !== undefined && windowSize > MAX_WINDOW_BYTES) {
    throw new Error(`frame requires too much memory for decoding (window of ${windowSize} bytes)`);
  }
}

/**
 * Streams `input` (a frame, or a torn frame's whole blocks) through fzstd block by block;
 * returns the plaintext length. `onPiece` sees every piece before `sink` does.
 */
function streamFzstd(input: Uint8Array, complete: boolean, sink: PlaintextSink, onPiece?: (piece: Uint8Array) => void): number {
  let total = 0;
  const stream = new Decompress((piece) => {
    if (piece.length === 0) return;
    total += piece.length;
    onPiece?.(piece);
    sink(piece);
  });
  stream.push(input, complete);
  return total;
}

/** fzstd on one complete frame, with the content size and checksum checks fzstd leaves out. */
function decodeFrameWithFzstd(hasher: Xxh64, frame: Uint8Array, info: ZstdFrame, sink: PlaintextSink): void {
  refuseLargeWindow(info.windowSize);
  const hash = info.checksum ? hasher.create64(0n) : undefined;
  const total = streamFzstd(frame, true, sink, hash && ((piece) => hash.update(piece)));
  if (info.contentSize !== undefined && total !== info.contentSize) {
    throw new Error(`zstd frame content size mismatch (declared ${info.contentSize}, got ${total})`);
  }
  if (hash && Number(hash.digest() & 0xffffffffn) !== readUint32LE(frame, frame.length - 4)) {
    throw new Error('zstd frame checksum mismatch');
  }
}

function decodeBlocksWithFzstd(prefix: Uint8Array, info: TornZstdFrame, sink: PlaintextSink): void {
  refuseLargeWindow(info.windowSize);
  streamFzstd(prefix, false, sink);
}

/** `node:zlib`'s decoder (fzstd for frames too large for one piece), when this runtime has one; requires {@link initZstdSupport}. */
export function nodeZlibZstdDecoder(): ZstdFrameDecoder | undefined {
  const z = nodeZstd();
  if (!z) return undefined;
  const hasher = initializedHasher();
  const maxOutputLength = MAX_PLAINTEXT_PIECE_BYTES;
  const handOver = (plaintext: Uint8Array, sink: PlaintextSink) => {
    if (plaintext.length > 0) sink(plaintext);
  };
  return {
    name: 'node:zlib',
    decodeFrame(frame, info, sink) {
      if (info.plaintextBound > MAX_PLAINTEXT_PIECE_BYTES) decodeFrameWithFzstd(hasher, frame, info, sink);
      else handOver(z.zstdDecompressSync(frame, { maxOutputLength }), sink);
    },
    decodeBlocks(prefix, info, sink) {
      if (info.plaintextBound > MAX_PLAINTEXT_PIECE_BYTES) decodeBlocksWithFzstd(prefix, info, sink);
      // Flush mode: no end-of-frame or checksum expected.
      else handOver(z.zstdDecompressSync(prefix, { finishFlush: z.constants.ZSTD_e_flush, maxOutputLength }), sink);
    },
  };
}

/** The pure-JS decoder with our own checksum verification (requires {@link initZstdSupport}). */
export function fzstdDecoder(): ZstdFrameDecoder {
  const hasher = initializedHasher();
  return {
    name: 'fzstd',
    decodeFrame: (frame, info, sink) => decodeFrameWithFzstd(hasher, frame, info, sink),
    decodeBlocks: decodeBlocksWithFzstd,
  };
}

/** Every decoder this runtime can use (tests compare them). */
export function availableZstdDecoders(): ZstdFrameDecoder[] {
  const native = nodeZlibZstdDecoder();
  return native ? [native, fzstdDecoder()] : [fzstdDecoder()];
}

/** The decoder loaders use: `node:zlib` when present, else fzstd. Requires {@link initZstdSupport}. */
export function defaultZstdDecoder(): ZstdFrameDecoder {
  return nodeZlibZstdDecoder() ?? fzstdDecoder();
}
