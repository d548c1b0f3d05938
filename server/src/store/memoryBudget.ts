/**
 * One memory budget for the large reads of the whole process, its worker threads included: a read
 * that is about to hold a lot at once (a long pending line, a big decoding step) first acquires
 * that much, waits while the budget is spent, and releases it when it no longer holds it. Small
 * holdings need nothing: a read acquires only past its own free allowance (the caller decides it).
 *
 * ```ts
 * const release = await acquireReadMemory(bytes, signal); // waits; rejects once `signal` aborts
 * try { ... hold up to `bytes` ... } finally { release(); } // idempotent
 * ```
 *
 * The budget is {@link READ_MEMORY_BUDGET_BYTES}; a request over it is cut to it, so it is granted
 * once nothing else is held. Grants are counted in a SharedArrayBuffer, one cell per thread: a
 * worker joins with {@link joinReadMemoryBudget} and what {@link lendReadMemoryCell} gave its
 * creator, and when the worker is gone its creator's {@link returnReadMemoryCell} frees whatever
 * it still held (a terminated worker releases nothing itself).
 */
import { MAX_RECORD_BYTES } from './log/lines';

/** The whole process's budget: one line at the record limit at a time. */
export const READ_MEMORY_BUDGET_BYTES = MAX_RECORD_BYTES;

/** Gives back what {@link acquireReadMemory} granted; calling it again does nothing. */
export type ReleaseReadMemory = () => void;

/** What a worker thread needs to draw on its creator's budget (pass it in `workerData`). */
export interface ReadMemoryShare {
  shared: SharedArrayBuffer;
  cell: number;
}

/** Cell 0 counts releases (waiters wait on it); cells 1… hold each thread's grants, in KiB. */
const CELLS = 33;
/** How long a waiter sleeps before it looks again on its own (an abort is seen then at the latest). */
const WAIT_SLICE_MS = 100;

interface Budget {
  cells: Int32Array;
  /** This thread's cell. */
  own: number;
  /** Cells the main thread has lent (the main thread's own among them). */
  lent: Set<number>;
}

let budget: Budget | undefined;

function currentBudget(): Budget {
  budget ??= { cells: new Int32Array(new SharedArrayBuffer(CELLS * 4)), own: 1, lent: new Set([1]) };
  return budget;
}

const capacityKib = Math.ceil(READ_MEMORY_BUDGET_BYTES / 1024);

function heldKib(cells: Int32Array): number {
  let total = 0;
  for (let cell = 1; cell < CELLS; cell++) total += Atomics.load(cells, cell);
  return total;
}

function wake(cells: Int32Array): void {
  Atomics.add(cells, 0, 1);
  Atomics.notify(cells, 0);
}

/** Takes `kib` when it fits (optimistically: added, then undone when the total went over). */
function tryTake({ cells, own }: Budget, kib: number): boolean {
  Atomics.add(cells, own, kib);
  if (heldKib(cells) <= capacityKib) return true;
  Atomics.sub(cells, own, kib);
  wake(cells); // another thread may have backed off because of this attempt
  return false;
}

function releaser({ cells, own }: Budget, kib: number): ReleaseReadMemory {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    Atomics.sub(cells, own, kib);
    wake(cells);
  };
}

type WaitAsync = (cells: Int32Array, index: number, value: number, timeout: number) => { async: boolean; value: Promise<unknown> | string };

/** Until a release anywhere (or a slice of time) after the release count was `seen`. */
async function releasedSince(cells: Int32Array, seen: number, signal: AbortSignal | undefined): Promise<void> {
  const slice = WAIT_SLICE_MS * (0.5 + Math.random()); // two threads backing off do not retry in step
  const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;
  const waited = waitAsync?.(cells, 0, seen, slice);
  if (waited && !waited.async) {
    // Released meanwhile: look again, after the event loop had a turn (never a synchronous spin).
    await new Promise<void>((resolve) => setImmediate(resolve));
    return;
  }
  let onAbort: (() => void) | undefined;
  await Promise.race([
    waited ? waited.value : new Promise((resolve) => setTimeout(resolve, slice)),
    new Promise<void>((resolve) => {
      onAbort = resolve;
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  if (onAbort) signal?.removeEventListener('abort', onAbort);
}

function aborted(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the read was cancelled');
}

/**
 * Memory for a large read: resolves with its release once `bytes` (cut to the budget) are free,
 * process-wide. Rejects, granting nothing, once `signal` aborts.
 */
export async function acquireReadMemory(bytes: number, signal?: AbortSignal): Promise<ReleaseReadMemory> {
  const kib = Math.min(capacityKib, Math.max(1, Math.ceil(bytes / 1024)));
  const current = currentBudget();
  for (;;) {
    if (signal?.aborted) throw aborted(signal);
    if (tryTake(current, kib)) return releaser(current, kib);
    // Counted after this attempt's own wake-up call: only a release from now on wakes it.
    await releasedSince(current.cells, Atomics.load(current.cells, 0), signal);
  }
}


/** A cell of this thread's budget for a worker it starts; undefined when all are lent (the worker then keeps its own budget). */
export function lendReadMemoryCell(): ReadMemoryShare | undefined {
  const current = currentBudget();
  for (let cell = 1; cell < CELLS; cell++) {
    if (current.lent.has(cell)) continue;
    current.lent.add(cell);
    return { shared: current.cells.buffer as SharedArrayBuffer, cell };
  }
  return undefined;
}

/** After the worker that had `share` exited: what it still held is freed, and the cell may be lent again. */
export function returnReadMemoryCell(share: ReadMemoryShare | undefined): void {
  const current = currentBudget();
  if (share === undefined || share.shared !== current.cells.buffer || !current.lent.has(share.cell)) return;
  Atomics.store(current.cells, share.cell, 0);
  current.lent.delete(share.cell);
  wake(current.cells);
}

/** In a worker thread, before its first read: draw on the budget its creator lent a cell of. */
export function joinReadMemoryBudget(share: ReadMemoryShare): void {
  budget = { cells: new Int32Array(share.shared), own: share.cell, lent: new Set() };
}
