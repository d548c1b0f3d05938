/**
 * The reader's plumbing (see sessionLogReader.ts): the queue of bytes not yet consumed, and
 * decodings run as steps, synchronously or yielding to the event loop.
 */
import type { PlaintextSink } from './zstdDecoder';

const EMPTY = new Uint8Array(0);

/** Appended bytes not yet consumed, without quadratic copying. */
export class ByteQueue {
  private buffer = EMPTY;
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  view(): Uint8Array {
    return this.buffer.subarray(this.start, this.end);
  }

  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.end + chunk.length > this.buffer.length) {
      const needed = this.length + chunk.length;
      const capacity = Math.max(needed, this.buffer.length * 2, 4096);
      const next = needed <= this.buffer.length ? this.buffer : new Uint8Array(capacity);
      next.set(this.buffer.subarray(this.start, this.end), 0);
      this.buffer = next;
      this.end -= this.start;
      this.start = 0;
    }
    this.buffer.set(chunk, this.end);
    this.end += chunk.length;
  }

  consume(count: number): void {
    this.start += count;
    if (this.start === this.end) {
      // Nothing pending: let the memory go (an index keeps many idle readers).
      this.buffer = EMPTY;
      this.start = this.end = 0;
    }
  }
}

/** Thrown by a sink once the log's plaintext passes its bound: the decoding stops there. */
export const PAST_BOUND = new Error('past the log plaintext bound');

/** How long a reader pushed with `pushAsync` decodes before it yields to the event loop. */
const SLICE_MS = 8;

/**
 * What a step yields: nothing, or a promise (that never rejects) the driver waits for before the
 * next step, such as memory from the read budget. Steps run synchronously never yield a promise.
 */
export type Step = void | Promise<void>;

/**
 * Drives `steps` to their end, giving the event loop a turn every {@link SLICE_MS} and waiting for
 * what a step asks; stops early (returning false, the steps abandoned) once `signal` is aborted.
 */
export async function runInSlices(steps: Generator<Step, void, void>, signal?: AbortSignal): Promise<boolean> {
  let sliceStart = performance.now();
  for (let step = steps.next(); step.done !== true; step = steps.next()) {
    if (step.value instanceof Promise) await step.value;
    else if (performance.now() - sliceStart < SLICE_MS) continue;
    else await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal?.aborted) {
      steps.return();
      return false;
    }
    sliceStart = performance.now();
  }
  return true;
}

/**
 * Runs a decoding into `sink`; returns why the decoding failed, if it did. An exception of the
 * sink itself is ours, not the file's: it is rethrown (the caller's catch reports it).
 */
export function* decodeInto(decode: (sink: PlaintextSink) => Generator<Step, void, void> | void, sink: PlaintextSink): Generator<Step, string | undefined, void> {
  let sinkError: { error: unknown } | undefined;
  try {
    const steps = decode((piece) => {
      try {
        sink(piece);
      } catch (error) {
        sinkError = { error };
        throw error; // stops the decoding
      }
    });
    if (steps) yield* steps;
  } catch (error) {
    if (sinkError) throw sinkError.error;
    return error instanceof Error ? error.message : String(error);
  }
  return undefined;
}

/** Runs steps that never yield (a synchronous decoding) to their result. */
export function resultOf<T>(steps: Generator<Step, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

