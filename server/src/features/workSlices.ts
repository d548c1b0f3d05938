import { throwIfCancelled } from '../resolver';

/**
 * How long one slice of a long computation (a big document's mentions and diagnostics) may hold the
 * event loop before it gives it back: other documents' requests wait at most about this long per
 * document being worked on.
 */
export const WORK_SLICE_MS = 15;

/** How many steps go between two looks at the clock (a step is one mention: about a microsecond). */
const STEPS_PER_CLOCK_CHECK = 64;

/**
 * Long work cut into slices: the work calls {@link due} after each small step, and when it says so
 * awaits {@link pause}, which lets every pending I/O callback and timer run (a 0 ms timer) before
 * the work goes on, and throws when the work was cancelled meanwhile.
 */
export class WorkSlices {
  private sliceStart = performance.now();
  private steps = 0;

  constructor(
    private readonly signal?: AbortSignal,
    private readonly sliceMs = WORK_SLICE_MS,
  ) {}

  /** True when the current slice is spent (checked every few steps, so cheap enough for every step). */
  due(): boolean {
    if (++this.steps < STEPS_PER_CLOCK_CHECK) return false;
    this.steps = 0;
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Give the event loop back, then go on with a new slice (or throw if cancelled meanwhile). */
  async pause(): Promise<void> {
    // A timer, not setImmediate: the language service stays free of Node's API (features/tsconfig.json).
    // Either way the event loop goes round, reading and answering what came in meanwhile.
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    throwIfCancelled(this.signal);
    this.sliceStart = performance.now();
    this.steps = 0;
  }
}
