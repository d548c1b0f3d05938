/**
 * A reader's draw on the process's read budget (../memoryBudget.ts): what a reader holds at once
 * (its pending line, its undecoded zstd bytes) is free up to {@link FREE_HOLDING_BYTES}; past
 * that it holds one grant of the record limit, waited for when the budget is spent, and given
 * back as soon as it holds less again. Only a reader driven asynchronously waits: a synchronous
 * one (tests, in-memory loads) never asks.
 */
import { acquireReadMemory, type ReleaseReadMemory } from '../memoryBudget';
import type { Step } from './readerSteps';

/** What a reader may hold without a grant: every ordinary dsh line and zstd frame fits. */
export const FREE_HOLDING_BYTES = 2 * 1024 * 1024;

export class HeldMemory {
  private release: ReleaseReadMemory | undefined;
  private signal: AbortSignal | undefined;
  private mayWait = false;

  /** `grantBytes`: what one grant is (the most a line may hold, the record limit). */
  constructor(private readonly grantBytes: number) {}

  /** Runs an asynchronous driver of the reader's steps: they may wait for a grant, until `signal` aborts. */
  async driving<T>(signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
    this.mayWait = true;
    this.signal = signal;
    try {
      return await run();
    } finally {
      this.mayWait = false;
      this.signal = undefined;
    }
  }

  /**
   * The step before the reader holds `held` bytes: a wait for a grant when that passes the free
   * allowance and none is held (in an asynchronous driver only); the grant goes back at once when
   * `held` is within the allowance.
   */
  *hold(held: number): Generator<Step, void, void> {
    if (held <= FREE_HOLDING_BYTES) {
      this.giveBack();
      return;
    }
    if (this.release !== undefined || !this.mayWait) return;
    const signal = this.signal;
    yield acquireReadMemory(this.grantBytes, signal).then(
      (release) => {
        // A grant that arrives after the driver was stopped is not kept.
        if (signal?.aborted === true || this.release !== undefined) release();
        else this.release = release;
      },
      () => undefined, // aborted: the driver sees its signal and stops
    );
  }

  /** Gives the grant back (the reader is done, or holds little again). */
  giveBack(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }
}
