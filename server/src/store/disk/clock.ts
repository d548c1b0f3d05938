/** The store's sense of time, injectable so freshness can be tested in fake time. */

/** An opaque pending timer. */
export type TimerHandle = unknown;

/** What the store asks of time: reading it, measuring work, and waiting. */
export interface Clock {
  /** Wall time in ms (Date.now): when notifications, reads and sweep passes happened. */
  now(): number;
  /** A high-resolution ms counter (performance.now) for measuring how long work took. */
  monotonic(): number;
  /** Process CPU time (user + system, every thread) in ms. */
  cpuMs(): number;
  /** Calls back after `ms`; a pending timer never keeps the process alive. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Real time. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  cpuMs() {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  },
  setTimeout(callback, ms) {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** One named timer of the store: at most one pending at a time. */
export class TimerSlot {
  private handle?: TimerHandle;
  private pending = false;

  constructor(private readonly clock: Clock) {}

  /** Whether a callback is pending. */
  get active(): boolean {
    return this.pending;
  }

  /** Replaces any pending callback with `callback` after `ms`. */
  set(callback: () => void, ms: number): void {
    this.clear();
    this.pending = true;
    this.handle = this.clock.setTimeout(() => {
      this.pending = false;
      this.handle = undefined;
      callback();
    }, ms);
  }

  /** Drops the pending callback, if any. */
  clear(): void {
    if (this.pending) this.clock.clearTimeout(this.handle);
    this.pending = false;
    this.handle = undefined;
  }
}
