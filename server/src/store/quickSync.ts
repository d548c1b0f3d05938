/**
 * When to make a file-system call synchronously. On cached metadata an `lstat` or a `readdir`
 * of a session directory takes a few µs synchronously against ~20 µs of CPU for a promise
 * through libuv's thread pool, so scans call them synchronously; but a call that has to wait for
 * the disk (a first start after boot) would then block the event loop and lose the pool's
 * parallel reads. So a synchronous call that took long switches the callers to the thread pool
 * for a while.
 */

/** A synchronous call that took longer than this (ms) waited for the disk (or for the CPU). */
const SLOW_CALL_MS = 2;
/** How long the thread pool is used after a slow synchronous call (ms). */
const ASYNC_FOR_MS = 1000;

/** Tracks whether synchronous calls are quick; see the module comment. */
export class QuickSync {
  private asyncUntil = -Infinity;

  constructor(
    /** Elapsed time (ms): a real clock even under a test's fake timers, since it times the calls. */
    private readonly now: () => number = () => performance.now(),
    private readonly slowCallMs = SLOW_CALL_MS,
    private readonly asyncForMs = ASYNC_FOR_MS,
  ) {}

  /** Whether to make the next call synchronously. */
  get quick(): boolean {
    return this.asyncUntil === -Infinity || this.now() >= this.asyncUntil;
  }

  /** Makes a synchronous call, noting whether it was slow (a throwing call too). */
  call<T>(sync: () => T): T {
    const started = this.now();
    try {
      return sync();
    } finally {
      const ended = this.now();
      if (ended - started > this.slowCallMs) this.asyncUntil = ended + this.asyncForMs;
    }
  }
}

/** The process's one tracker: every scan reads the same disks. */
export const quickSync = new QuickSync();
