/**
 * libzstd's own one-shot frame decoder, compiled to WebAssembly: the `zstd.wasm` binary that the
 * npm package `@bokuweb/zstd-wasm` (pinned at 0.0.27) ships, driven here directly rather than
 * through the package's JavaScript, so that one decoding context and one input and one output
 * region are reused for every frame (the package allocates all three per call).
 *
 * libzstd verifies each frame's XXH64 checksum and declared content size itself. No compiler and
 * no platform package is involved; the bundled server finds the binary beside itself (the .vsix
 * build copies it there), the npm-installed one in the package. Loading never throws: without the
 * binary, or with one whose exports are not the ones expected, the caller falls back to fzstd.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { compileForThisThread } from './wasmCompile';

/** The little of the WebAssembly API used here (the compiler's ES2022 library does not type it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Memory: abstract new (...args: never[]) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** What the 0.0.27 build exports under its minified names (read from its Emscripten glue). */
interface ZstdWasmExports {
  /** `f`: the module's memory. */
  memory: WasmMemory;
  /** `g`: static constructors, run once before anything else. */
  ctors(): void;
  /** `h`: `ZSTD_isError(code)`. */
  isError(code: number): number;
  /** `n`: `ZSTD_createDCtx()`. */
  createDCtx(): number;
  /** `q`: `ZSTD_decompress_usingDict(dctx, dst, dstCapacity, src, srcSize, dict, dictSize)`. */
  decompressUsingDict(dctx: number, dst: number, capacity: number, src: number, srcSize: number, dict: number, dictSize: number): number;
  /** `s`: `malloc(size)`. */
  malloc(size: number): number;
  /** `t`: `free(pointer)`. */
  free(pointer: number): void;
}

/** libzstd's error codes (zstd_errors.h) that a frame decoding can give, for messages. */
const ZSTD_ERRORS: Record<number, string> = {
  1: 'generic error',
  10: 'unknown frame descriptor',
  12: 'unsupported version',
  14: 'unsupported frame parameter',
  16: 'frame requires too much memory for decoding',
  20: 'data corruption detected',
  22: 'checksum mismatch',
  24: 'literals header wrong',
  30: 'dictionary corrupted',
  32: 'dictionary mismatch',
  64: 'allocation failed',
  70: 'destination buffer too small',
  72: 'source size wrong',
};

/** A frame decoder in WebAssembly memory; one per process (it is synchronous and reuses its buffers). */
export interface WasmZstd {
  /**
   * Decodes one complete frame into at most `capacity` bytes; returns a view of the plaintext,
   * valid only until the next call. Throws when libzstd refuses the frame (bad checksum, content
   * size, corruption, a plaintext over `capacity`).
   */
  decodeFrame(frame: Uint8Array, capacity: number): Uint8Array;
}

const EXPORT_NAMES: Record<keyof ZstdWasmExports, string> = {
  memory: 'f',
  ctors: 'g',
  isError: 'h',
  createDCtx: 'n',
  decompressUsingDict: 'q',
  malloc: 's',
  free: 't',
};

function bindExports(instance: { exports: Record<string, unknown> }): ZstdWasmExports | undefined {
  const raw = instance.exports;
  const bound: Partial<Record<keyof ZstdWasmExports, unknown>> = {};
  for (const [ours, theirs] of Object.entries(EXPORT_NAMES) as [keyof ZstdWasmExports, string][]) {
    const value = raw[theirs];
    const expected = ours === 'memory' ? value instanceof WebAssembly.Memory : typeof value === 'function';
    if (!expected) return undefined;
    bound[ours] = value;
  }
  return bound as ZstdWasmExports;
}

/** The imports the build needs: none is called while decoding except the heap growth. */
function imports(memory: () => WasmMemory | undefined): Record<string, Record<string, unknown>> {
  const refuse = (what: string) => () => {
    throw new Error(`zstd wasm: ${what}`);
  };
  return {
    a: {
      a: refuse('exit'), // proc_exit
      b: () => undefined, // runtime keep-alive clear
      c: refuse('abort'), // abort
      d: () => 0, // setitimer (unused by decoding)
      e: (requested: number) => {
        // emscripten_resize_heap: grow to at least `requested` bytes, by whole 64 KiB pages.
        const mem = memory();
        if (!mem) return 0;
        const wanted = requested >>> 0;
        if (wanted > 2 ** 31) return 0;
        const pages = Math.ceil((wanted - mem.buffer.byteLength) / 65536);
        try {
          if (pages > 0) mem.grow(pages);
          return 1;
        } catch {
          return 0;
        }
      },
    },
  };
}

class Decoder implements WasmZstd {
  private readonly dctx: number;
  private input = 0;
  private inputSize = 0;
  private output = 0;
  private outputSize = 0;
  private heap: Uint8Array;

  constructor(private readonly wasm: ZstdWasmExports) {
    this.dctx = wasm.createDCtx();
    if (this.dctx === 0) throw new Error('zstd wasm: no decoding context');
    this.heap = new Uint8Array(wasm.memory.buffer);
  }

  /** A region of at least `size` bytes, replacing `pointer` (of `current` bytes) when too small. */
  private region(pointer: number, current: number, size: number): [number, number] {
    if (size <= current && pointer !== 0) return [pointer, current];
    if (pointer !== 0) this.wasm.free(pointer);
    const grown = Math.max(size, current * 2, 64 * 1024);
    const fresh = this.wasm.malloc(grown);
    if (fresh === 0) throw new Error(`zstd wasm: cannot allocate ${grown} bytes`);
    return [fresh, grown];
  }

  decodeFrame(frame: Uint8Array, capacity: number): Uint8Array {
    if (frame.length > this.inputSize) [this.input, this.inputSize] = this.region(this.input, this.inputSize, frame.length);
    if (capacity > this.outputSize) [this.output, this.outputSize] = this.region(this.output, this.outputSize, capacity);
    // A growth of the memory detaches the old view.
    if (this.heap.buffer !== this.wasm.memory.buffer) this.heap = new Uint8Array(this.wasm.memory.buffer);
    this.heap.set(frame, this.input);
    const result = this.wasm.decompressUsingDict(this.dctx, this.output, capacity, this.input, frame.length, 0, 0);
    if (this.wasm.isError(result)) {
      // size_t error codes are (size_t)-code, which a wasm32 i32 result shows as -code.
      const code = -(result | 0);
      throw new Error(`zstd frame refused: ${ZSTD_ERRORS[code] ?? `libzstd error ${code}`}`);
    }
    if (this.heap.buffer !== this.wasm.memory.buffer) this.heap = new Uint8Array(this.wasm.memory.buffer);
    return this.heap.subarray(this.output, this.output + (result >>> 0));
  }
}

/**
 * A frame dsh writes (checksum, 2 MiB window, no content size) holding `{"ok":1}\n` six times in
 * one compressed block, made with the zstd CLI 1.5.4: decoding it at load proves the exports are what this module takes them for.
 */
const PROBE_FRAME = Uint8Array.from([
  0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58, 0x7d, 0x00, 0x00, 0x48, 0x7b, 0x22, 0x6f, 0x6b, 0x22, 0x3a, 0x31, 0x7d, 0x0a, 0x01,
  0x00, 0xd2, 0x2c, 0x47, 0xb3, 0x7c, 0xe0, 0x68,
]);
const PROBE_PLAINTEXT = '{"ok":1}\n'.repeat(6);

/** Where the binary may be: beside this file (the bundle), then in the installed package. */
function candidatePaths(): string[] {
  const found = [path.join(__dirname, 'zstd.wasm')];
  try {
    found.push(path.join(path.dirname(require.resolve('@bokuweb/zstd-wasm')), 'zstd.wasm'));
  } catch {
    // Not installed (the bundled server): only the copy beside it.
  }
  return found;
}

/** Instantiates the decoder from `bytes`; undefined when they are not the expected build. */
export async function instantiateWasmZstd(bytes: Uint8Array): Promise<WasmZstd | undefined> {
  try {
    let memory: WasmMemory | undefined;
    const instance = compileForThisThread(() => new WebAssembly.Instance(new WebAssembly.Module(bytes), imports(() => memory)));
    const wasm = bindExports(instance);
    if (!wasm) return undefined;
    memory = wasm.memory;
    wasm.ctors();
    const decoder = new Decoder(wasm);
    const probe = Buffer.from(decoder.decodeFrame(PROBE_FRAME, 64)).toString('utf8');
    return probe === PROBE_PLAINTEXT ? decoder : undefined;
  } catch {
    return undefined;
  }
}

/** Loads the decoder from the first binary found; undefined when none loads (never throws). */
export async function loadWasmZstd(paths: readonly string[] = candidatePaths()): Promise<WasmZstd | undefined> {
  for (const candidate of paths) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(candidate);
    } catch {
      continue;
    }
    const decoder = await instantiateWasmZstd(bytes);
    if (decoder) return decoder;
  }
  return undefined;
}
