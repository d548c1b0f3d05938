import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { reapplyRuntimeV8Flags, setRuntimeV8Flag } from './runtimeV8Flags';

/** The main isolate's new space after allocating ~100 MB of short-lived objects, some surviving a while (bytes). */
function newSpaceAfterChurn(): number {
  const kept: object[] = [];
  for (let i = 0; i < 2_000_000; i++) {
    const item = { i, text: `item ${i}` };
    if (i % 8 === 0) kept.push(item);
    if (kept.length > 50_000) kept.length = 0;
  }
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;
}

/** Starts a worker and waits until it has run (its start is what resets the flags). */
function startedWorker(): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker("require('node:worker_threads').parentPort.postMessage('ready')", { eval: true });
    worker.once('message', () => void worker.terminate().then(() => resolve(), reject));
    worker.once('error', reject);
  });
}

describe('runtime V8 flags', () => {
  afterAll(() => {
    v8.setFlagsFromString('--semi-space-growth-factor=2'); // V8's default, for whatever runs next in this process
  });

  it('are lost when a worker starts, and set again by reapplyRuntimeV8Flags', async () => {
    // With growth factor 1 the new space never grows past its size when the flag was set.
    setRuntimeV8Flag('--semi-space-growth-factor=1');
    const fixed = newSpaceAfterChurn();
    expect(newSpaceAfterChurn()).toBe(fixed);
    await startedWorker();
    // The worker's start reset the flag: the same churn grows the new space again.
    const afterWorker = newSpaceAfterChurn();
    expect(afterWorker).toBeGreaterThan(fixed);
    reapplyRuntimeV8Flags();
    expect(newSpaceAfterChurn()).toBe(afterWorker);
  });
});
