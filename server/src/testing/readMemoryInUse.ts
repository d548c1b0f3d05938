/**
 * How much of the process-wide read memory budget is granted and not yet released, found through
 * the budget's public API only: the largest request that is granted at once (a request is tried
 * synchronously before it would wait) tells what is free. Tests only.
 */
import { acquireReadMemory, READ_MEMORY_BUDGET_BYTES } from '../store/memoryBudget';

/** Whether `bytes` are granted without waiting (and gives them straight back). */
async function grantedAtOnce(bytes: number): Promise<boolean> {
  const controller = new AbortController();
  const grant = acquireReadMemory(bytes, controller.signal);
  controller.abort(new Error('probe'));
  try {
    (await grant)();
    return true;
  } catch {
    return false;
  }
}

/** Bytes of the budget in use, to the KiB the budget counts in. */
export async function readMemoryInUse(): Promise<number> {
  const capacity = Math.ceil(READ_MEMORY_BUDGET_BYTES / 1024);
  if (await grantedAtOnce(capacity * 1024)) return 0;
  // The largest free KiB count: granted at `low`, refused at `high`.
  let low = 0;
  let high = capacity;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (await grantedAtOnce(middle * 1024)) low = middle;
    else high = middle;
  }
  return (capacity - low) * 1024;
}
