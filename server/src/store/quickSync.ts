/**
 * When to make a file-system call synchronously. On cached metadata an `lstat` or a `readdir`
 * of a session directory takes a few µs synchronously against ~20 µs of CPU for a promise
 * through libuv's thread pool, so scans call them synchronously; but a call that has to wait for
 * the disk (a first start after boot) would then block the event loop and lose the pool's
 * parallel reads. So synchronous calls that take long switch the callers to the thread pool for
 * a while: several of the last few, since on a loaded machine a single call is now and then
 * descheduled for milliseconds too, while on a cold disk nearly every call waits.
 */

/** A synchronous call that took longer than this (ms) waited for the disk (or for the CPU). */
const SLOW_CALL_MS = 2;
/** How long the thread pool is used after slow synchronous calls (ms). */
const ASYNC_FOR_MS = 1000;
/** Each call keeps this share of the slowness score; slow calls add 1. */
const SCORE_DECAY = 0.9;
/** The score at which the thread pool is used: ~3 slow calls in a row, or 1 slow call in 2 for long. */
const SLOW_SCORE = 2.5;

/** Tracks whether synchronous calls are quick; see the module comment. */
export class QuickSync {
  private asyncUntil = -Infinity;
  /** Recent slow calls, decaying (see SCORE_DECAY). */
  private slowScore = 0;

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
      this.slowScore = this.slowScore * SCORE_DECAY + (ended - started > this.slowCallMs ? 1 : 0);
      if (this.slowScore >= SLOW_SCORE) {
        this.asyncUntil = ended + this.asyncForMs;
        this.slowScore = 0;
      }
    }
  }
}

/** Off only in the bench's variant build without synchronous calls (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_QUICK_SYNC: boolean | undefined;
const QUICK_SYNC_ON = typeof DSH_DEVICE_QUICK_SYNC === 'undefined' || DSH_DEVICE_QUICK_SYNC;

/** The process's one tracker: every scan reads the same disks. The plain path: never quick, every call through the thread pool. */
export const quickSync: Pick<QuickSync, 'quick' | 'call'> = QUICK_SYNC_ON ? new QuickSync() : { quick: false, call: (sync) => sync() };
