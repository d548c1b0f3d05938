/**
 * Decoding single zstd frames. Where the runtime has `node:zlib` zstd (Node ≥ 22.15) it is used:
 * it verifies checksums itself. Otherwise (Node 20) `fzstd` decodes and the frame's checksum (low
 * 32 bits of XXH64, seed 0) is verified here, because fzstd silently decodes corrupt input to
 * garbage (store doc §5.6). Both decode a torn frame's whole blocks the same way.
 *
 * xxhash-wasm initialises asynchronously: loaders `await initZstdSupport()` once, after which all
 * decoding is synchronous.
 */
import * as zlib from 'node:zlib';
import { Decompress, decompress } from 'fzstd';
import type { ZstdFrame } from './zstdFrames';

/** A frame whose plaintext could exceed this is refused as too large rather than decoded. */
export const MAX_FRAME_PLAINTEXT_BYTES = 1024 * 1024 * 1024;

/** Decodes single zstd frames. */
export interface ZstdFrameDecoder {
  readonly name: 'node:zlib' | 'fzstd';
  /** The plaintext of one complete frame, checksum verified; throws on any failure. */
  decodeFrame(frame: Uint8Array, info: ZstdFrame): Uint8Array;
  /** The plaintext of a torn frame's header plus whole blocks (`prefix` ends at a block boundary); throws on failure. */
  decodeBlocks(prefix: Uint8Array): Uint8Array;
}

interface Xxh64 {
  h64Raw(input: Uint8Array, seed?: bigint): bigint;
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

function nodeZstd(): NodeZstd | undefined {
  const candidate = zlib as unknown as Partial<NodeZstd>;
  return typeof candidate.zstdDecompressSync === 'function' ? (candidate as NodeZstd) : undefined;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function readUint32LE(bytes: Uint8Array, offset: number): number {
  return (bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16) | (bytes[offset + 3] << 24)) >>> 0;
}

/** `node:zlib`'s decoder, when this runtime has one. */
export function nodeZlibZstdDecoder(): ZstdFrameDecoder | undefined {
  const z = nodeZstd();
  if (!z) return undefined;
  return {
    name: 'node:zlib',
    decodeFrame: (frame) => z.zstdDecompressSync(frame, { maxOutputLength: MAX_FRAME_PLAINTEXT_BYTES }),
    // Flush mode: no end-of-frame or checksum expected.
    decodeBlocks: (prefix) =>
      z.zstdDecompressSync(prefix, { finishFlush: z.constants.ZSTD_e_flush, maxOutputLength: MAX_FRAME_PLAINTEXT_BYTES }),
  };
}

/** The pure-JS decoder with our own checksum verification (requires {@link initZstdSupport}). */
export function fzstdDecoder(): ZstdFrameDecoder {
  const hasher = xxh64;
  if (!hasher) throw new Error('zstd support is not initialised: await initZstdSupport() first');
  return {
    name: 'fzstd',
    decodeFrame(frame, info) {
      const plaintext = decompress(frame);
      if (info.contentSize !== undefined && plaintext.length !== info.contentSize) {
        throw new Error(`zstd frame content size mismatch (declared ${info.contentSize}, got ${plaintext.length})`);
      }
      if (info.checksum) {
        const expected = readUint32LE(frame, frame.length - 4);
        const actual = Number(hasher.h64Raw(plaintext, 0n) & 0xffffffffn);
        if (actual !== expected) throw new Error('zstd frame checksum mismatch');
      }
      return plaintext;
    },
    decodeBlocks(prefix) {
      const parts: Uint8Array[] = [];
      // Streaming mode emits each whole block; copy because the chunk may be a view of a reused buffer.
      new Decompress((chunk) => parts.push(chunk.slice())).push(prefix, false);
      return concat(parts);
    },
  };
}

/** Every decoder this runtime can use (tests compare them). */
export function availableZstdDecoders(): ZstdFrameDecoder[] {
  const native = nodeZlibZstdDecoder();
  return native ? [native, fzstdDecoder()] : [fzstdDecoder()];
}

/** The decoder loaders use: `node:zlib` when present, else fzstd. Requires {@link initZstdSupport}. */
export function defaultZstdDecoder(): ZstdFrameDecoder {
  if (!xxh64) throw new Error('zstd support is not initialised: await initZstdSupport() first');
  return nodeZlibZstdDecoder() ?? fzstdDecoder();
}
