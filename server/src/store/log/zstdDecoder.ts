/**
 * Decoding single zstd frames into a stream of plaintext pieces. The store's decoder is libzstd
 * compiled to WebAssembly (`zstdWasm.ts`) wherever its binary loads: one call per frame into a
 * reused buffer, libzstd verifying the checksum. What follows is the fallback and the way of the
 * frames it does not take (a bound past the one-call limit, a torn frame's whole blocks).
 *
 * Decoding single zstd frames into a stream of plaintext pieces, so a frame whose plaintext is
 * huge (a 7 KB frame can hold 200 MB) is never held whole. fzstd's streaming `Decompress` hands
 * over one block at a time (≤ 128 KiB) and the frame's checksum (low 32 bits of XXH64, seed 0) is
 * computed incrementally and verified at its end, because fzstd silently decodes corrupt input to
 * garbage (store doc §5.6). It refuses a window libzstd refuses.
 *
 * fzstd's streaming decoder allocates the frame's whole declared window (dsh declares 2 MiB) and
 * shifts it after every block, which for dsh's many ~1 KB frames costs far more than decoding. So a
 * frame with a checksum and a modest plaintext bound is first decoded in one call straight into one
 * buffer of its bound (see {@link decodeFrameAtOnce}); whenever that cannot be verified, the frame
 * goes the streaming way, which alone decides a failing frame's fate.
 *
 * Both ways give every valid frame's plaintext. A frame that breaks the format (a reference before
 * its start, literals reaching past their block) decodes in fzstd to garbage that libzstd would
 * refuse; only a checksum forged for that garbage passes it, and then the two ways may differ in
 * which garbage they accept. Neither is dsh's answer there, which is to refuse the frame.
 *
 * xxhash-wasm initialises asynchronously: loaders `await initZstdSupport()` once, after which all
 * decoding is synchronous.
 */
import { Decompress, decompress } from 'fzstd';
import { blockRunEnds, type TornZstdFrame, type ZstdFrame } from './zstdFrames';
import { loadWasmZstd, type WasmZstd } from './zstdWasm';

/** A frame whose plaintext could exceed this is refused as too large rather than decoded. */
export const MAX_FRAME_PLAINTEXT_BYTES = 1024 * 1024 * 1024;

/**
 * The most plaintext a whole zstd transcript is read as, over all its frames (the torn last one
 * included): past it the log does not load ('too-large'), as one frame past
 * {@link MAX_FRAME_PLAINTEXT_BYTES} does. A few KB of RLE blocks declare a GiB.
 */
export const MAX_LOG_PLAINTEXT_BYTES = MAX_FRAME_PLAINTEXT_BYTES;

/**
 * Plaintext (bound) decoded between two chances to yield when a frame is decoded in steps (see
 * {@link decodeFrameInSteps}).
 */
const STEP_PLAINTEXT_BYTES = 4 * 1024 * 1024;

/** Most plaintext a decoder hands over in one piece. */
export const MAX_PLAINTEXT_PIECE_BYTES = 1024 * 1024;

/**
 * libzstd's default decoding limit (`ZSTD_WINDOWLOG_LIMIT_DEFAULT` 27, plus one): libzstd refuses
 * a larger window ("Frame requires too much memory for decoding"), so fzstd does too.
 */
export const MAX_WINDOW_BYTES = 2 ** 27 + 1;

/**
 * Receives decoded plaintext in order, a piece at a time. A piece is valid only during the call
 * (a decoder may reuse its memory for the next frame): a sink copies what it keeps.
 */
export type PlaintextSink = (piece: Uint8Array) => void;

/** The decoders there are, fastest first (see {@link defaultZstdDecoder}). */
export type ZstdDecoderName = 'zstd-wasm' | 'fzstd';

/** Decodes single zstd frames, handing the plaintext over in pieces of at most {@link MAX_PLAINTEXT_PIECE_BYTES}. */
export interface ZstdFrameDecoder {
  readonly name: ZstdDecoderName;
  /**
   * Decodes one complete frame into `sink`, its checksum verified at the end; throws on any
   * failure (the pieces handed over before it are then not the frame's plaintext).
   */
  decodeFrame(frame: Uint8Array, info: ZstdFrame, sink: PlaintextSink): void;
  /**
   * {@link decodeFrame} in steps, for a frame whose plaintext bound passes
   * {@link MAX_ONE_CALL_FRAME_BYTES}: each `next()` decodes about {@link STEP_PLAINTEXT_BYTES}, so
   * the caller may yield to the event loop, or stop, between them. Without it a reader decodes
   * such a frame with `decodeFrame` (tests wrap decoders that way).
   */
  decodeFrameInSteps?(frame: Uint8Array, info: ZstdFrame, sink: PlaintextSink): Generator<void, void, void>;
  /** Decodes a torn frame's header plus whole blocks (`prefix` ends at a block boundary) into `sink`; throws on failure. */
  decodeBlocks(prefix: Uint8Array, info: TornZstdFrame, sink: PlaintextSink): void;
  /** {@link decodeBlocks} in steps, as {@link decodeFrameInSteps} (fzstd's streaming decoder in every decoder). */
  decodeBlocksInSteps?(prefix: Uint8Array, info: TornZstdFrame, sink: PlaintextSink): Generator<void, void, void>;
}

/**
 * A frame whose plaintext bound is at most this is decoded in one call into one buffer of that
 * bound (memory: this much per frame being decoded), a larger one block by block.
 */
export const MAX_ONE_CALL_FRAME_BYTES = 8 * 1024 * 1024;

/** One-call decodings of frames up to this bound share one buffer rather than allocate their own. */
const SHARED_OUTPUT_BYTES = 1024 * 1024;

interface Xxh64 {
  create64(seed?: bigint): { update(input: Uint8Array): unknown; digest(): bigint };
  h64Raw(input: Uint8Array, seed?: bigint): bigint;
}

/** Off only in the bench's variant build without libzstd's wasm (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_ZSTD_WASM: boolean | undefined;
const ZSTD_WASM_ON = typeof DSH_DEVICE_ZSTD_WASM === 'undefined' || DSH_DEVICE_ZSTD_WASM;

let xxh64: Xxh64 | undefined;
let wasmZstd: WasmZstd | undefined;
let initializing: Promise<void> | undefined;

/**
 * Loads what zstd decoding needs: the XXH64 wasm, and libzstd's wasm decoder when its binary is
 * found (without it the store decodes with fzstd); await once before decoding zstd logs.
 */
export function initZstdSupport(): Promise<void> {
  initializing ??= Promise.all([import('xxhash-wasm'), ZSTD_WASM_ON ? loadWasmZstd() : undefined])
    .then(async ([module, wasm]) => {
      xxh64 = await module.default();
      wasmZstd = wasm;
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

/**
 * The buffer fzstd's one-call `decompress(frame, out)` writes into. fzstd copies a raw block with
 * `out.set(block, at)`, so the empty raw block {@link withEndMarker} appends reports where the
 * plaintext ends (`plaintextEnd`), which fzstd does not return. fzstd also compares the buffer it is
 * given with `== 1`, which would turn a plain array into one huge string; this one converts to NaN.
 * Its views are plain Uint8Arrays, so fzstd's inner loops see the arrays they always see.
 */
class OneCallOutput extends Uint8Array {
  static get [Symbol.species](): Uint8ArrayConstructor {
    return Uint8Array;
  }

  /** End of the last raw-block copy; -1 until one happens. */
  plaintextEnd = -1;

  override set(source: ArrayLike<number>, offset = 0): void {
    super.set(source, offset);
    this.plaintextEnd = offset + source.length;
  }

  [Symbol.toPrimitive](): number {
    return Number.NaN;
  }
}

let sharedOutput: OneCallOutput | undefined;
let sharedMarked = new Uint8Array(0);

/**
 * A buffer of at least `bound` bytes for one decoding. What an earlier decoding left in it does
 * not matter: a valid frame reads only bytes it has written itself.
 */
function oneCallOutput(bound: number): OneCallOutput {
  if (bound > SHARED_OUTPUT_BYTES) return new OneCallOutput(bound);
  sharedOutput ??= new OneCallOutput(SHARED_OUTPUT_BYTES);
  sharedOutput.plaintextEnd = -1;
  return sharedOutput;
}

/**
 * The frame with its last block no longer last and an empty raw block appended as the last one
 * (before the checksum): it decodes to the same plaintext, and fzstd's copy of that empty block
 * marks the plaintext's end. Written into one reused buffer (fzstd keeps nothing of its input).
 */
function withEndMarker(frame: Uint8Array, info: ZstdFrame): Uint8Array {
  const blocksEnd = frame.length - 4;
  if (sharedMarked.length < frame.length + 3) sharedMarked = new Uint8Array(Math.max(frame.length + 3, 64 * 1024));
  const marked = sharedMarked.subarray(0, frame.length + 3);
  marked.set(frame.subarray(0, blocksEnd));
  marked[info.lastBlockOffset] &= 0xfe; // Last_Block cleared
  // The appended block's header: Last_Block set, Block_Type raw, Block_Size 0.
  marked[blocksEnd] = 0x01;
  marked[blocksEnd + 1] = 0x00;
  marked[blocksEnd + 2] = 0x00;
  marked.set(frame.subarray(blocksEnd), blocksEnd + 3);
  return marked;
}

/**
 * One complete frame decoded in one fzstd call into a buffer of its plaintext bound: no window is
 * allocated or shifted. Returns the plaintext (valid until the next decoding: the buffer of a
 * frame up to {@link SHARED_OUTPUT_BYTES} is reused) only when it is verified as the frame's own:
 * the frame has a checksum, which matches; the content size, when declared, matches; and the
 * plaintext fits the window (a back-reference never needs more than the streaming decoder's
 * window holds). Anything else (an exception included) returns undefined, and the frame is
 * decoded the streaming way, whose answer is then the frame's answer.
 */
function decodeFrameAtOnce(hasher: Xxh64, frame: Uint8Array, info: ZstdFrame): Uint8Array | undefined {
  if (!info.checksum || info.plaintextBound > MAX_ONE_CALL_FRAME_BYTES) return undefined;
  const out = oneCallOutput(info.plaintextBound);
  try {
    if (decompress(withEndMarker(frame, info), out) !== out) return undefined;
  } catch {
    return undefined;
  }
  const length = out.plaintextEnd;
  if (length < 0 || length > info.plaintextBound || length > info.windowSize) return undefined;
  if (info.contentSize !== undefined && length !== info.contentSize) return undefined;
  // A plain view (no species lookup through the subclass).
  const plaintext = new Uint8Array(out.buffer, out.byteOffset, length);
  if (Number(hasher.h64Raw(plaintext) & 0xffffffffn) !== readUint32LE(frame, frame.length - 4)) return undefined;
  return plaintext;
}

/** Hands a decoded plaintext to `sink` in pieces of at most {@link MAX_PLAINTEXT_PIECE_BYTES}. */
function handOverInPieces(plaintext: Uint8Array, sink: PlaintextSink): void {
  for (let at = 0; at < plaintext.length; at += MAX_PLAINTEXT_PIECE_BYTES) {
    sink(plaintext.subarray(at, at + MAX_PLAINTEXT_PIECE_BYTES));
  }
}

/**
 * A complete frame's plaintext decoded in one call (see {@link decodeFrameAtOnce}; valid until the
 * next decoding), or undefined when that does not apply or cannot be verified. Requires
 * {@link initZstdSupport}.
 * @forTests
 */
export function decodeZstdFrameInOneCall(frame: Uint8Array, info: ZstdFrame): Uint8Array | undefined {
  return decodeFrameAtOnce(initializedHasher(), frame, info);
}

/** fzstd on one complete frame, with the content size and checksum checks fzstd leaves out. */
function decodeFrameWithFzstd(hasher: Xxh64, frame: Uint8Array, info: ZstdFrame, sink: PlaintextSink, oneCall = true): void {
  refuseLargeWindow(info.windowSize);
  const plaintext = oneCall ? decodeFrameAtOnce(hasher, frame, info) : undefined;
  if (plaintext !== undefined) {
    handOverInPieces(plaintext, sink);
    return;
  }
  for (const _ of streamFrameInSteps(hasher, frame, info, sink));
}

/**
 * fzstd's streaming decoding of one complete frame, a run of whole blocks (about
 * {@link STEP_PLAINTEXT_BYTES} of plaintext) at a time, yielding between runs; the content size
 * and checksum are checked at the end.
 */
function* streamFrameInSteps(hasher: Xxh64, frame: Uint8Array, info: ZstdFrame, sink: PlaintextSink): Generator<void, void, void> {
  const hash = info.checksum ? hasher.create64(0n) : undefined;
  let total = 0;
  const stream = new Decompress((piece) => {
    if (piece.length === 0) return;
    total += piece.length;
    hash?.update(piece);
    sink(piece);
  });
  let from = 0;
  for (const end of blockRunEnds(frame, STEP_PLAINTEXT_BYTES)) {
    stream.push(frame.subarray(from, end), end === frame.length);
    from = end;
    if (end !== frame.length) yield;
  }
  if (info.contentSize !== undefined && total !== info.contentSize) {
    throw new Error(`zstd frame content size mismatch (declared ${info.contentSize}, got ${total})`);
  }
  if (hash && Number(hash.digest() & 0xffffffffn) !== readUint32LE(frame, frame.length - 4)) {
    throw new Error('zstd frame checksum mismatch');
  }
}

/**
 * Every decoder's `decodeFrameInSteps`: a frame whose bound passes {@link MAX_ONE_CALL_FRAME_BYTES}
 * streams through fzstd in each of them (fzstd's streaming decoder is the one that can stop between blocks).
 */
function decodeFrameInSteps(frame: Uint8Array, info: ZstdFrame, sink: PlaintextSink): Generator<void, void, void> {
  refuseLargeWindow(info.windowSize);
  return streamFrameInSteps(initializedHasher(), frame, info, sink);
}

/** A torn frame's whole blocks through fzstd's streaming decoder, a run of blocks at a time. */
function* decodeBlocksInSteps(prefix: Uint8Array, info: TornZstdFrame, sink: PlaintextSink): Generator<void, void, void> {
  refuseLargeWindow(info.windowSize);
  const stream = new Decompress((piece) => {
    if (piece.length > 0) sink(piece);
  });
  let from = 0;
  for (const end of blockRunEnds(prefix, STEP_PLAINTEXT_BYTES)) {
    stream.push(prefix.subarray(from, end), false);
    from = end;
    if (end !== prefix.length) yield;
  }
}

function decodeBlocksWithFzstd(prefix: Uint8Array, info: TornZstdFrame, sink: PlaintextSink): void {
  refuseLargeWindow(info.windowSize);
  streamFzstd(prefix, false, sink);
}

/**
 * The pure-JS decoder with our own checksum verification (requires {@link initZstdSupport});
 * `oneCall: false` streams every frame (tests compare the two ways).
 */
export function fzstdDecoder(options: { oneCall?: boolean } = {}): ZstdFrameDecoder {
  const hasher = initializedHasher();
  const oneCall = options.oneCall ?? true;
  return {
    name: 'fzstd',
    decodeFrame: (frame, info, sink) => decodeFrameWithFzstd(hasher, frame, info, sink, oneCall),
    decodeFrameInSteps,
    decodeBlocks: decodeBlocksWithFzstd,
    decodeBlocksInSteps,
  };
}

/**
 * libzstd compiled to WebAssembly, one call per frame into a reused buffer, libzstd verifying the
 * checksum and content size; a frame whose bound passes {@link MAX_ONE_CALL_FRAME_BYTES}, and a
 * torn frame's whole blocks (at most one per file), go the fzstd way. Undefined when the binary
 * did not load. Requires {@link initZstdSupport}.
 */
export function wasmZstdDecoder(): ZstdFrameDecoder | undefined {
  const hasher = initializedHasher();
  const wasm = wasmZstd;
  if (!wasm) return undefined;
  return {
    name: 'zstd-wasm',
    decodeFrameInSteps,
    decodeBlocksInSteps,
    decodeFrame(frame, info, sink) {
      refuseLargeWindow(info.windowSize);
      if (info.plaintextBound > MAX_ONE_CALL_FRAME_BYTES) decodeFrameWithFzstd(hasher, frame, info, sink, false);
      else handOverInPieces(wasm.decodeFrame(frame, info.plaintextBound), sink);
    },
    decodeBlocks: decodeBlocksWithFzstd,
  };
}

let defaultDecoder: ZstdFrameDecoder | undefined;

/**
 * The decoder loaders use, one per process (an index makes a reader per transcript): libzstd in
 * wasm, else fzstd (bench/ANALYSIS.md, "Speed devices"). Requires {@link initZstdSupport}.
 */
export function defaultZstdDecoder(): ZstdFrameDecoder {
  defaultDecoder ??= wasmZstdDecoder() ?? fzstdDecoder();
  return defaultDecoder;
}
