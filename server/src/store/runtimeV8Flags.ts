/**
 * V8 flags the server sets at run time (it is started without NODE_OPTIONS: the bin, and the VS
 * Code extension running the bundle with `node`). Starting a `worker_threads` Worker resets V8's
 * flags to their start-up values on Node 20 and 22 (a flag set before the worker is ready is
 * gone after; Node 24 keeps it), so whoever starts workers calls {@link reapplyRuntimeV8Flags} once each is ready.
 */
import v8 from 'node:v8';

const flags: string[] = [];

/** Sets `flag` (e.g. `--heap-growing-percent=25`) now and after every worker start. */
export function setRuntimeV8Flag(flag: string): void {
  if (!flags.includes(flag)) flags.push(flag);
  v8.setFlagsFromString(flag);
}

/** Sets the flags again (a worker has started); nothing when none were set. */
export function reapplyRuntimeV8Flags(): void {
  for (const flag of flags) v8.setFlagsFromString(flag);
}
