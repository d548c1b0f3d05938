/**
 * Readers and the process's read budget: past its free allowance a reader holds one grant of the
 * record limit, so a second long line waits for the first; a line that ends, a reader that is
 * done, an abort, give it back; a reader pushed synchronously never asks.
 */
import { describe, expect, it } from 'vitest';
import { headerLine } from '../../testing/testLogs';
import { readMemoryInUse } from '../../testing/readMemoryInUse';
import { FREE_HOLDING_BYTES } from './heldMemory';
import { MAX_RECORD_BYTES } from './lines';
import { SessionLogSummarizer } from './summarizer';

const longTail = (id: string) => Buffer.from(`${headerLine(id)}\n{"type":"user/message","text":"${'x'.repeat(FREE_HOLDING_BYTES + 1024)}`);

async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('readers draw on the read budget', () => {
  it('a second long line waits until the first reader gives its grant back', async () => {
    const first = new SessionLogSummarizer('raw');
    const second = new SessionLogSummarizer('raw');
    expect(await first.pushAsync(longTail('first'))).toBe(true);
    expect(await readMemoryInUse()).toBe(MAX_RECORD_BYTES);
    const pushing = second.pushAsync(longTail('second'));
    expect(await settled(pushing)).toBe(false);
    first.releaseMemory();
    expect(await pushing).toBe(true);
    expect(await readMemoryInUse()).toBe(MAX_RECORD_BYTES);
    // The line ends: the reader holds little again, and the grant goes back with that push.
    expect(await second.pushAsync(Buffer.from('"}\n'))).toBe(true);
    expect(await readMemoryInUse()).toBe(0);
  });

  it('an abort stops a waiting reader; a synchronous push never asks', async () => {
    const holder = new SessionLogSummarizer('raw');
    await holder.pushAsync(longTail('holder'));
    const controller = new AbortController();
    const pushing = new SessionLogSummarizer('raw').pushAsync(longTail('waiting'), controller.signal);
    expect(await settled(pushing)).toBe(false);
    controller.abort();
    expect(await pushing).toBe(false);
    holder.releaseMemory();
    expect(await readMemoryInUse()).toBe(0);
    new SessionLogSummarizer('raw').push(longTail('sync'));
    expect(await readMemoryInUse()).toBe(0);
  });
});
