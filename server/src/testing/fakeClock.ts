/**
 * Fake time for the disk store (its `tuning.clock`): it moves only when a test advances it, so
 * debounce, sweep, rescan, root-poll, notification and cache-save timers run without any real wait.
 */
import type { Clock } from '../store/disk/clock';

interface FakeTimer {
  due: number;
  callback: () => void;
}

export class FakeClock implements Clock {
  private time: number;
  private lastId = 0;
  private readonly timers = new Map<number, FakeTimer>();
  /** The process CPU time the store reads (ms); tests raise it to make work look costly. */
  cpu = 0;

  constructor(start = 1_767_225_600_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  monotonic(): number {
    return this.time;
  }

  cpuMs(): number {
    return this.cpu;
  }

  setTimeout(callback: () => void, ms: number): number {
    const id = ++this.lastId;
    this.timers.set(id, { due: this.time + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Time passing inside synchronous work: the clock moves on, and timers due meanwhile fire at the next advance. */
  elapse(ms: number): void {
    this.time += ms;
  }

  /** Timers set and neither fired nor cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /**
   * Moves time `ms` forward, calling every timer that falls due on the way (those they set too)
   * at its own time, earliest first (in the order they were set on a tie).
   */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      let next: [number, FakeTimer] | undefined;
      for (const entry of this.timers) if (entry[1].due <= until && (!next || entry[1].due < next[1].due)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      // A timer that fell due during synchronous work (elapse) fires now, late, as a real one would.
      this.time = Math.max(this.time, next[1].due);
      next[1].callback();
    }
    this.time = until;
  }
}

/** Lets promise callbacks and ready I/O callbacks run (no waiting for time). */
export async function yieldTurns(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}
