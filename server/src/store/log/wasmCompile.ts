/**
 * How this process compiles its WebAssembly (libzstd's decoder, the line skim).
 *
 * V8 compiles wasm with its baseline compiler (Liftoff) and later recompiles the hot functions
 * with TurboFan on a background thread. In a worker, which decodes and skims hundreds of
 * megabytes, that pays. On the main thread it does not: the main thread only handles a start's
 * small batch and one-off loads. There a TurboFan job in flight delays the answer, and at exit
 * the process waits for the job to finish. Measured on the CLI: about 40 ms of its ~250 ms start
 * (bench/ANALYSIS.md, "Session 9"). So modules compiled on the main thread stay on Liftoff.
 * V8 fixes the tier when a module is compiled, so the flag is set only for the compile.
 */
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

/**
 * Runs `compile`, a synchronous `new WebAssembly.Module(…)` and its instantiation. On the main
 * thread it runs with `--liftoff-only`, and the flag is set back to its default (off) at once,
 * even when `compile` throws.
 */
export function compileForThisThread<T>(compile: () => T, mainThread = isMainThread): T {
  if (!mainThread) return compile();
  v8.setFlagsFromString('--liftoff-only');
  try {
    return compile();
  } finally {
    v8.setFlagsFromString('--no-liftoff-only');
  }
}
