/**
 * A first-in-first-out queue with O(1) push and shift: `Array#shift` moves every element, which
 * makes draining 100,000 queued refreshes quadratic.
 */
export class FifoQueue<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  /** Items waiting. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Appends an item. */
  push(item: T): void {
    this.items.push(item);
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Compact once the consumed prefix dominates, so memory follows what is still queued.
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Empties the queue, returning what it held in order. */
  drain(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return rest;
  }
}

/** Runs at most `limit` async tasks at once, the rest queued in arrival order. */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting = new FifoQueue<() => void>();

  constructor(private readonly limit: number) {}

  /** Runs `task` when a slot is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so the count never overshoots.
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * Calls `work` for every item with at most `workers` calls in flight: a fixed set of workers
 * pulls from the iterator, so a long list never becomes a long list of pending promises.
 * Resolves when every call settled; a rejected call is reported to `onError` and skipped.
 */
export async function forEachConcurrently<T>(
  items: Iterable<T>,
  workers: number,
  work: (item: T) => Promise<unknown>,
  onError: (error: unknown) => void = () => undefined,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  const worker = async (): Promise<void> => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      try {
        await work(next.value);
      } catch (error) {
        onError(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, workers) }, worker));
}

/** Rejects with the signal's reason when it is aborted (checked between awaits). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new Error('aborted');
}

/** `end` made callable any number of times, running once: the end of something counted. */
function once(end: () => void): () => void {
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    end();
  };
}

/** What the process is doing for its clients, as far as background store work cares. */
export interface ForegroundWork {
  /** How long no request has been in progress or arrived (ms); 0 while one is. */
  quietForMs(): number;
}

/** How {@link TimeSlices} give way to the process's clients between slices. */
export interface GiveWay {
  /** Whose requests come first. */
  foreground: ForegroundWork;
  /** A slice starts once the foreground has been quiet this long… */
  quietMs: number;
  /** …or once it has waited this long, so background work still moves under a steady stream of requests. */
  maxWaitMs: number;
}

/**
 * Time slices of the main thread's long loops (scans, discovery, cache writes): work that settles
 * in microtasks (a synchronous `lstat` then a resolved promise) never lets the event loop turn on
 * its own, so a rescan of 10,000 transcripts ran ~0.5 s straight and an answer waited for all of
 * it. {@link pause} gives the loop a turn once a slice's time has passed without one; every
 * caller waits for the same turn, so concurrent loops pause together.
 *
 * With `giveWay`, the next slice also waits until the foreground is quiet: a turn alone let a
 * request in, but each of its own turns (dispatch, handler, write) then waited for a whole slice,
 * and a 100,000-session rescan made every answer ~17 ms. Not while {@link urgent} work is under
 * way (a first index, which requests wait for: making it wait for them would stall both).
 */
export class TimeSlices {
  /** Start of the current slice; a real clock, as it times work. */
  private started = performance.now();
  private turn: Promise<void> | undefined;
  private urgentWork = 0;

  constructor(
    private readonly sliceMs: number,
    private readonly giveWay?: GiveWay,
  ) {}

  /** Resolves at once within a slice; once the slice is over, after a turn of the event loop (and the foreground). */
  async pause(): Promise<void> {
    if (this.turn === undefined && performance.now() - this.started >= this.sliceMs) {
      this.turn = this.between().then(() => {
        this.turn = undefined;
        this.started = performance.now();
      });
    }
    if (this.turn !== undefined) await this.turn;
  }

  /**
   * Whether a pause now would wait: the slice is over, or its turn is pending. Concurrent loops
   * check this right before their synchronous work (`while (slices.due) await slices.pause()`): a
   * pause that resolved at once resumes its caller a microtask later, after its siblings' work.
   */
  get due(): boolean {
    return this.turn !== undefined || performance.now() - this.started >= this.sliceMs;
  }

  /** Whether a pause now would wait for the foreground (false without `giveWay` or during urgent work). */
  get givesWay(): boolean {
    return this.giveWay !== undefined && this.urgentWork === 0;
  }

  /**
   * Work someone waits for has begun (a first index): until the returned function is called, a
   * pause is a turn of the loop only, never a wait for the foreground.
   */
  urgent(): () => void {
    this.urgentWork++;
    return once(() => this.urgentWork--);
  }

  private async between(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const giveWay = this.giveWay;
    if (giveWay === undefined) return;
    const deadline = performance.now() + giveWay.maxWaitMs;
    for (;;) {
      if (!this.givesWay) return;
      const wanted = giveWay.quietMs - giveWay.foreground.quietForMs();
      const left = deadline - performance.now();
      if (wanted <= 0 || left <= 0) return;
      await new Promise<void>((resolve) => setTimeout(resolve, Math.ceil(Math.min(wanted, left))));
    }
  }
}

/**
 * The requests in progress, the messages being written and the last message read (the language
 * server counts them in `wiring/params.ts`, `wiring/jsonEncoder.ts` and `wiring/lifecycle.ts`),
 * so store work that can wait (the catch-up rescan after the first index, cache writes, the
 * slices of every scan after it) waits for a quiet moment rather than stall answers someone is
 * waiting for. A real clock: it measures the requests' time.
 */
export class ForegroundRequests implements ForegroundWork {
  private inProgress = 0;
  private lastEnded = -Infinity;

  /** A request begins; call the returned function once, when it has been answered. */
  begin(): () => void {
    this.inProgress++;
    return once(() => {
      this.inProgress--;
      this.lastEnded = performance.now();
    });
  }

  /**
   * A message was read. Its handler runs a turn later (vscode-jsonrpc dispatches from a queue):
   * quiet restarts now, so a slice due in that turn waits for it.
   */
  noteInput(): void {
    this.lastEnded = Math.max(this.lastEnded, performance.now());
  }

  quietForMs(): number {
    return this.inProgress > 0 ? 0 : performance.now() - this.lastEnded;
  }
}

/** This process's requests (none in the CLI, whose store never waits for quiet). */
export const foregroundRequests = new ForegroundRequests();

/**
 * The slices of this process's main-thread store work: 5 ms (an answer that arrives during one
 * waits at most about that long), then, outside a first index, until no message has been read or
 * request been in progress for 20 ms, 100 ms at most.
 */
export const storeWorkSlices = new TimeSlices(5, { foreground: foregroundRequests, quietMs: 20, maxWaitMs: 100 });
