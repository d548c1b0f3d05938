/**
 * V8 flags the server sets at run time (it is started without NODE_OPTIONS: the bin, and the VS
 * Code extension running the bundle with `node`). Starting a `worker_threads` Worker resets V8's
 * flags to their start-up values on Node 20 and 22 (a flag set before the worker is ready is
 * gone after; Node 24 keeps it), so whoever starts workers calls {@link reapplyRuntimeV8Flags} once each is ready.
 */
import v8 from 'node:v8';

/** Off only in the bench's variant build without run-time flags (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_RUNTIME_V8_FLAGS: boolean | undefined;
const FLAGS_ON = typeof DSH_DEVICE_RUNTIME_V8_FLAGS === 'undefined' || DSH_DEVICE_RUNTIME_V8_FLAGS;

/** Each flag set, with the value the process started with. */
const flags: { flag: string; startup: string }[] = [];

/**
 * Sets `flag` (e.g. `--heap-growing-percent=25`) now and after every worker start, in place of any
 * value set for it before. `startup`: the same flag at its start-up value (V8's default, e.g.
 * `--heap-growing-percent=0`).
 */
export function setRuntimeV8Flag(flag: string, startup: string): void {
  // The plain path: V8 keeps its start-up flags.
  if (!FLAGS_ON) return;
  const name = flagName(flag);
  const set = flags.find((each) => flagName(each.flag) === name);
  if (set) set.flag = flag;
  else flags.push({ flag, startup });
  v8.setFlagsFromString(flag);
}

/**
 * `--heap-growing-percent` of `--heap-growing-percent=25`, and `--flush-bytecode` of both
 * `--flush-bytecode` and `--no-flush-bytecode`: a flag set again replaces its value.
 */
function flagName(flag: string): string {
  const equals = flag.indexOf('=');
  const name = equals === -1 ? flag : flag.slice(0, equals);
  return name.startsWith('--no-') ? `--${name.slice('--no-'.length)}` : name;
}

/** Sets the flags again (a worker has started); nothing when none were set. */
export function reapplyRuntimeV8Flags(): void {
  for (const { flag } of flags) v8.setFlagsFromString(flag);
}

/**
 * Runs `run` with every flag back at its start-up value, then sets them again: V8 accepts a code
 * cache only in a process whose flags match those it was made under, and the next process starts
 * with the start-up values.
 */
export function withStartupV8Flags<T>(run: () => T): T {
  for (const { startup } of flags) v8.setFlagsFromString(startup);
  try {
    return run();
  } finally {
    reapplyRuntimeV8Flags();
  }
}
