import { describe, expect, it, vi } from 'vitest';
import { ConcurrencyLimit, FifoQueue, ForegroundRequests, TimeSlices, forEachConcurrently } from './concurrency';

/** A promise settled from outside. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('FifoQueue', () => {
  it('keeps arrival order across compactions, interleaving pushes and shifts', () => {
    const queue = new FifoQueue<number>();
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 100; i++) queue.push(next++);
      for (let i = 0; i < 70; i++) out.push(queue.shift() as number);
    }
    expect(queue.length).toBe(50 * 30);
    while (queue.length > 0) out.push(queue.shift() as number);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(queue.shift()).toBeUndefined();
    queue.push(-1);
    expect(queue.shift()).toBe(-1);
  });
});

describe('FifoQueue.drain', () => {
  it('returns what is still queued, in order, and leaves the queue empty and usable', () => {
    const queue = new FifoQueue<number>();
    for (let i = 0; i < 3000; i++) queue.push(i);
    for (let i = 0; i < 2000; i++) queue.shift();
    expect(queue.drain()).toEqual(Array.from({ length: 1000 }, (_, i) => 2000 + i));
    expect(queue.length).toBe(0);
    expect(queue.shift()).toBeUndefined();
    queue.push(7);
    expect(queue.drain()).toEqual([7]);
  });
});

describe('ConcurrencyLimit', () => {
  it('runs thousands of waiters in arrival order, never more than the limit at once', async () => {
    const limit = new ConcurrencyLimit(3);
    const started: number[] = [];
    let active = 0;
    let maxActive = 0;
    const gates = Array.from({ length: 5000 }, deferred);
    const runs = gates.map((gate, i) =>
      limit.run(async () => {
        started.push(i);
        active++;
        maxActive = Math.max(maxActive, active);
        await gate.promise;
        active--;
        return i;
      }),
    );
    await Promise.resolve();
    // Three run; the rest wait.
    expect(started).toEqual([0, 1, 2]);
    // Each release hands its slot to the oldest waiter.
    for (let i = 0; i < gates.length; i++) {
      gates[i].resolve();
      await runs[i];
    }
    expect(await Promise.all(runs)).toEqual(gates.map((_, i) => i));
    expect(started).toEqual(gates.map((_, i) => i));
    expect(maxActive).toBe(3);
  });

  it('frees the slot of a task that throws', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit.run(async () => 'after')).resolves.toBe('after');
  });
});

describe('forEachConcurrently', () => {
  it('visits every item once with at most `workers` calls in flight, reporting failures', async () => {
    const seen: number[] = [];
    const errors: unknown[] = [];
    let active = 0;
    let maxActive = 0;
    await forEachConcurrently(
      Array.from({ length: 1000 }, (_, i) => i),
      4,
      async (item) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setImmediate(r));
        active--;
        if (item % 250 === 0) throw new Error(`item ${item}`);
        seen.push(item);
      },
      (error) => errors.push(error),
    );
    expect(maxActive).toBe(4);
    expect(seen.length + errors.length).toBe(1000);
    expect(new Set(seen).size).toBe(996);
    expect(errors.map((e) => (e as Error).message).sort()).toEqual(['item 0', 'item 250', 'item 500', 'item 750']);
  });

  it('pulls items lazily, so nothing is taken before a worker is free', async () => {
    let taken = 0;
    function* items(): Generator<number> {
      for (let i = 0; i < 10; i++) {
        taken++;
        yield i;
      }
    }
    const gate = deferred();
    const done = forEachConcurrently(items(), 2, () => gate.promise);
    await Promise.resolve();
    expect(taken).toBe(2);
    gate.resolve();
    await done;
    expect(taken).toBe(10);
  });
});

describe('TimeSlices', () => {
  it('resolves within a slice without giving the event loop a turn', async () => {
    const slices = new TimeSlices(60_000);
    let turned = false;
    setImmediate(() => (turned = true));
    await slices.pause();
    await slices.pause();
    expect(turned).toBe(false);
  });

  it('once the slice is over, every caller waits for the same turn of the event loop', async () => {
    const slices = new TimeSlices(0);
    let turned = false;
    setImmediate(() => (turned = true));
    const order: string[] = [];
    await Promise.all([slices.pause().then(() => order.push(`a:${turned}`)), slices.pause().then(() => order.push(`b:${turned}`))]);
    expect(order).toEqual(['a:true', 'b:true']);
  });
});

describe('TimeSlices.due', () => {
  it('is false within a slice and true once it is over, until its turn has passed', async () => {
    const within = new TimeSlices(60_000);
    expect(within.due).toBe(false);
    const over = new TimeSlices(0);
    expect(over.due).toBe(true);
    const paused = over.pause();
    expect(over.due).toBe(true);
    await paused;
  });
});

describe('TimeSlices giving way to the foreground', () => {
  /** A foreground that is busy until `quiet` is set, then quiet since that moment. */
  const foreground = () => {
    let quietSince: number | undefined;
    return {
      quietForMs: () => (quietSince === undefined ? 0 : performance.now() - quietSince),
      quiet: () => (quietSince = performance.now()),
    };
  };
  const settled = (promise: Promise<void>) => {
    let done = false;
    void promise.then(() => (done = true));
    return () => done;
  };
  const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('starts the next slice only once the foreground has been quiet for quietMs', async () => {
    const busy = foreground();
    const slices = new TimeSlices(0, { foreground: busy, quietMs: 15, maxWaitMs: 60_000 });
    const paused = settled(slices.pause());
    await after(40);
    expect(paused()).toBe(false);
    busy.quiet();
    const quietAt = performance.now();
    await vi.waitFor(() => expect(paused()).toBe(true), { timeout: 10_000 });
    expect(performance.now() - quietAt).toBeGreaterThanOrEqual(14);
  });

  it('waits maxWaitMs at most under a foreground that never rests', async () => {
    const slices = new TimeSlices(0, { foreground: foreground(), quietMs: 15, maxWaitMs: 30 });
    const started = performance.now();
    await slices.pause();
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
  });

  it('takes only a turn of the loop while urgent work is under way, and gives way again after it', async () => {
    const slices = new TimeSlices(0, { foreground: foreground(), quietMs: 15, maxWaitMs: 60_000 });
    const done = slices.urgent();
    expect(slices.givesWay).toBe(false);
    await slices.pause();
    done();
    done(); // twice is once
    expect(slices.givesWay).toBe(true);
    const paused = settled(slices.pause());
    await after(40);
    expect(paused()).toBe(false);
  });

  it('is a plain turn without giveWay', async () => {
    const slices = new TimeSlices(0);
    expect(slices.givesWay).toBe(false);
    await slices.pause();
  });
});

describe('ForegroundRequests', () => {
  it('restarts quiet when a message is read, before its handler begins', async () => {
    const requests = new ForegroundRequests();
    requests.begin()();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const before = requests.quietForMs();
    expect(before).toBeGreaterThanOrEqual(25);
    requests.noteInput();
    expect(requests.quietForMs()).toBeLessThan(before);
  });

  it('is never quiet while a request is in progress, and counts quiet time from the last one', async () => {
    const requests = new ForegroundRequests();
    expect(requests.quietForMs()).toBe(Infinity);
    const endA = requests.begin();
    const endB = requests.begin();
    endA();
    endA(); // twice is once
    expect(requests.quietForMs()).toBe(0);
    endB();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(requests.quietForMs()).toBeGreaterThan(0);
    expect(requests.quietForMs()).toBeLessThan(Infinity);
  });
});
