/**
 * How this process compiles its WebAssembly (libzstd's decoder, the line skim).
 *
 * V8 compiles wasm with its baseline compiler (Liftoff) and later recompiles the hot functions
 * with TurboFan on a background thread. In a worker, which decodes and skims hundreds of
 * megabytes, that pays. On the main thread it does not: the main thread only handles a start's
 * small batch and one-off loads. There a TurboFan job in flight delays the answer, and at exit
 * the process waits for the job to finish. Measured on the CLI: about 40 ms of its ~250 ms start
 * (bench/ANALYSIS.md, "Start").
 *
 * So a module compiled on the main thread gets the largest tier-up budget V8 takes (2^31 - 1, some
 * 1,200 times V8 11's default and 165 times V8 12's): a start's batch never reaches it (100 times
 * the default did not last through 20 sessions), and a long-lived server's main thread still tiers
 * up the functions it runs hot for long. Liftoff decodes libzstd's small frames ~25 % slower than
 * TurboFan, which a main-thread decode (a prepare) pays. V8 copies the budget into the instance,
 * so the flag is raised only for the compile. It must come back to its
 * exact start-up value: V8 takes a code cache (codeCache.ts) only under the flags it was made
 * with. V8 offers no way to read a flag, so the defaults are those of the V8 versions we run; on
 * another V8 the flag is left alone. (`--liftoff-only` is no substitute: on Node 20 clearing it
 * leaves the flags it implied changed, and the next start rejected the code cache.)
 */
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

/** `--wasm-tiering-budget`'s default by V8 major version (`node --v8-options`; a test checks it on the Node it runs). */
export const WASM_TIERING_BUDGET_DEFAULTS: Readonly<Record<string, number>> = {
  '11': 1_800_000, // Node 20
  '12': 13_000_000, // Node 22
  '13': 13_000_000, // Node 24
};

/** The budget a main-thread module gets: the flag is a signed 32-bit int, and this its maximum. */
const MAIN_THREAD_TIERING_BUDGET = 2 ** 31 - 1;

/** The flag's default on this V8, or undefined when unknown. */
export function defaultWasmTieringBudget(v8Version = process.versions.v8): number | undefined {
  return WASM_TIERING_BUDGET_DEFAULTS[v8Version.split('.')[0]!];
}

/**
 * Runs `compile`, a synchronous `new WebAssembly.Module(…)` and its instantiation. On the main
 * thread of a known V8 it runs with the largest tier-up budget, set back at once, even when
 * `compile` throws.
 */
export function compileForThisThread<T>(compile: () => T, mainThread = isMainThread, v8Version = process.versions.v8): T {
  const budget = defaultWasmTieringBudget(v8Version);
  if (!mainThread || budget === undefined) return compile();
  v8.setFlagsFromString(`--wasm-tiering-budget=${MAIN_THREAD_TIERING_BUDGET}`);
  try {
    return compile();
  } finally {
    v8.setFlagsFromString(`--wasm-tiering-budget=${budget}`);
  }
}
