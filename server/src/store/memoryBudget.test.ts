/**
 * The process's read budget: grants up to it, waits past it, cancels on abort, and counts the
 * grants of worker threads with the main thread's, freeing what a worker held when it is gone.
 */
import path from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { acquireReadMemory, lendReadMemoryCell, READ_MEMORY_BUDGET_BYTES, returnReadMemoryCell } from './memoryBudget';
import { readMemoryInUse } from '../testing/readMemoryInUse';

const MiB = 1024 * 1024;
const BUILT = path.resolve(__dirname, '../../dist/store/memoryBudget.js');

/** Whether `promise` settled within a few turns of the event loop. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('the read memory budget', () => {
  it('grants up to the budget; a request past it waits for a release', async () => {
    expect(await readMemoryInUse()).toBe(0);
    const first = await acquireReadMemory(READ_MEMORY_BUDGET_BYTES - 8 * MiB);
    const small = await acquireReadMemory(8 * MiB);
    expect(await readMemoryInUse()).toBe(READ_MEMORY_BUDGET_BYTES);
    const waiting = acquireReadMemory(MiB);
    expect(await settled(waiting)).toBe(false);
    small();
    small(); // a second call gives back nothing more
    const third = await waiting;
    expect(await readMemoryInUse()).toBe(READ_MEMORY_BUDGET_BYTES - 7 * MiB);
    first();
    third();
    expect(await readMemoryInUse()).toBe(0);
  });

  it('a request over the budget is cut to it, granted once nothing else is held', async () => {
    const other = await acquireReadMemory(MiB);
    const huge = acquireReadMemory(10 * READ_MEMORY_BUDGET_BYTES);
    expect(await settled(huge)).toBe(false);
    other();
    const release = await huge;
    expect(await readMemoryInUse()).toBe(READ_MEMORY_BUDGET_BYTES);
    release();
  });

  it('an abort while waiting rejects and grants nothing', async () => {
    const all = await acquireReadMemory(READ_MEMORY_BUDGET_BYTES);
    const controller = new AbortController();
    const waiting = acquireReadMemory(MiB, controller.signal);
    expect(await settled(waiting)).toBe(false);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    all();
    expect(await readMemoryInUse()).toBe(0);
    await expect(acquireReadMemory(MiB, controller.signal)).rejects.toThrow('cancelled');
  });

  it("counts a worker's grants with this thread's, and frees them when the worker is gone", async () => {
    const share = lendReadMemoryCell()!;
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const budget = require(workerData.built);
       budget.joinReadMemoryBudget(workerData.share);
       budget.acquireReadMemory(workerData.bytes).then(() => parentPort.postMessage('held'));`,
      { eval: true, workerData: { built: BUILT, share, bytes: READ_MEMORY_BUDGET_BYTES - MiB } },
    );
    try {
      expect(await once(worker, 'message')).toEqual(['held']);
      expect(await readMemoryInUse()).toBe(READ_MEMORY_BUDGET_BYTES - MiB);
      const waiting = acquireReadMemory(2 * MiB);
      expect(await settled(waiting)).toBe(false);
      // The worker ends without releasing anything: its creator gives its cell back.
      await worker.terminate();
      returnReadMemoryCell(share);
      const release = await waiting;
      expect(await readMemoryInUse()).toBe(2 * MiB);
      release();
    } finally {
      await worker.terminate();
      returnReadMemoryCell(share);
    }
  });
});
