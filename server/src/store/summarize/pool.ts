/**
 * A small pool of index workers (`worker_threads`) that summarize transcripts off the main
 * thread, so indexing uses every core and never delays answers. Tasks are plain data (a path,
 * an encoding, saved state); each worker reads the file itself. With size 0 (or when the worker
 * file is missing) the same function runs inline in the main thread.
 *
 * Workers start only when the work pays for them: a burst of tasks (tasks with gaps shorter
 * than the idle time between them) runs inline until it has asked for `inlineBytes` bytes, then
 * on workers; a single task larger than that goes to a worker at once.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { reapplyRuntimeV8Flags } from '../runtimeV8Flags';
import { FifoQueue } from '../concurrency';
import { nodeTranscriptFiles, type TranscriptFiles } from '../transcriptFiles';
import { lendReadMemoryCell, returnReadMemoryCell } from '../memoryBudget';
import type { SummarizeWorkerData, WorkerReply, WorkerRequest } from './protocol';
import { summarizeTranscriptFile, type SummarizeOutcome, type SummarizeTask } from './summarizeFile';

/** The worker entry's file name: next to this module in tsc's output and in the extension bundle's dist/. */
export const SUMMARIZE_WORKER_FILE = 'summarizeWorker.js';

/** Pool options; every field has a production default. */
export interface SummarizePoolOptions {
  /** Workers at most; 0 runs every task inline. Default: min(2, available cores). */
  size?: number;
  /** The worker entry (default: {@link SUMMARIZE_WORKER_FILE} beside this module). */
  workerFile?: string;
  /**
   * File access for inline runs. Workers read the real file system, so a pool given any other
   * file access (tests observing reads) runs inline.
   */
  files?: TranscriptFiles;
  /**
   * Bytes (on disk) a burst of tasks may summarize in the main thread before workers start
   * (see the module comment). Default 0: every task goes to a worker.
   */
  inlineBytes?: number;
  /** Tasks handed to one worker at once, so it never waits for the main thread between two. */
  tasksPerWorker?: number;
  /** A worker that has not answered its running task for this long is hung: it is replaced and the task fails. */
  taskTimeoutMs?: number;
  /**
   * A worker with nothing to do for this long ends (each is a V8 isolate holding tens of MB);
   * the next task starts a new one. Default {@link DEFAULT_IDLE_MS}.
   */
  idleMs?: number;
  log?: (message: string) => void;
}

/** The default pool size: two workers at most (the machines this serves have two cores). */
export function defaultIndexWorkers(): number {
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(0, Math.min(2, cores));
}

/** Workers that fail before they start this many times in a row: the pool runs inline from then on. */
const MAX_START_FAILURES = 3;

/**
 * How long one transcript may take. Summarizing is linear in the file (tens of MB/s even on a
 * loaded machine), so only a decoder stuck in a loop comes near this.
 */
const DEFAULT_TASK_TIMEOUT_MS = 300_000;

/** How long an idle worker is kept: long enough to bridge the gaps of an index, short after it. */
const DEFAULT_IDLE_MS = 2000;

/**
 * A worker's young generation at most (MB). V8 grows it to 32 MB per isolate under the
 * index's allocation rate; a small one costs a few more scavenges and saves ~25 MB per worker.
 * The old generation is deliberately not limited: a big log must never kill a worker.
 */
const WORKER_YOUNG_GENERATION_MB = 4;

interface Pending {
  request: WorkerRequest;
  resolve: (outcome: SummarizeOutcome) => void;
}

interface Slot {
  worker: Worker;
  /** Tasks sent, in the order the worker runs them: the first is the one running. */
  inFlight: Pending[];
  ready: boolean;
  /** The worker's uncaught error, reported with the task it interrupted. */
  failure?: string;
  /** Armed while a task runs: when it fires the worker is deemed hung. */
  watchdog?: ReturnType<typeof setTimeout>;
  /** Armed while the worker has nothing to do: when it fires the worker ends. */
  idle?: ReturnType<typeof setTimeout>;
  /** Set by {@link SummarizePool.retireIdle}: the worker ends once it has nothing left to do. */
  retireWhenDone?: boolean;
}

/** Logged once per process: the worker entry was not found. */
let missingWorkerLogged = false;

const failed = (message: string): SummarizeOutcome => ({ kind: 'failed', error: { reason: 'io', message } });

/** Summarizes transcripts on up to `size` worker threads; see the module comment. */
export class SummarizePool {
  private readonly size: number;
  private readonly workerFile: string;
  private readonly files: TranscriptFiles;
  private readonly tasksPerWorker: number;
  private readonly taskTimeoutMs: number;
  private readonly idleMs: number;
  private readonly log: (message: string) => void;
  private readonly slots: Slot[] = [];
  private readonly queue = new FifoQueue<Pending>();
  /** Tasks a stopped worker had been sent but not started: they go before the queue. */
  private retries: Pending[] = [];
  private nextId = 1;
  private startFailures = 0;
  private startedCount = 0;
  private readonly inlineBytes: number;
  /** Bytes the current burst has run inline. */
  private burstBytes = 0;
  /** Tasks running inline because they fit the burst's budget. */
  private smallRunning = 0;
  /** When the last task ended (performance.now()). */
  private lastDoneAt = -Infinity;
  private inline: boolean;
  private disposed = false;
  /** Aborted by {@link dispose}: stops the tasks running in the main thread at their next slice. */
  private readonly closing = new AbortController();

  constructor(options: SummarizePoolOptions = {}) {
    this.size = Math.max(0, Math.floor(options.size ?? defaultIndexWorkers()));
    this.workerFile = options.workerFile ?? path.join(__dirname, SUMMARIZE_WORKER_FILE);
    this.files = options.files ?? nodeTranscriptFiles;
    this.tasksPerWorker = Math.max(1, options.tasksPerWorker ?? 8);
    this.taskTimeoutMs = options.taskTimeoutMs ?? DEFAULT_TASK_TIMEOUT_MS;
    this.idleMs = Math.max(0, options.idleMs ?? DEFAULT_IDLE_MS);
    this.inlineBytes = Math.max(0, options.inlineBytes ?? 0);
    this.log = options.log ?? (() => undefined);
    this.inline = this.size === 0 || this.files !== nodeTranscriptFiles;
    if (!this.inline && !existsSync(this.workerFile)) {
      this.inline = true;
      if (!missingWorkerLogged) {
        missingWorkerLogged = true;
        this.log(`index workers: ${this.workerFile} not found; transcripts are summarized in the main thread`);
      }
    }
  }

  /**
   * What tests observe of the workers: whether tasks run in the main thread, the live workers
   * (started, not yet exited or ended for idleness), and the workers started so far (an idle
   * worker that ended and came back counts twice). @forTests
   */
  probe(): { runsInline: boolean; workers: number; workersStarted: number } {
    return { runsInline: this.inline, workers: this.slots.length, workersStarted: this.startedCount };
  }

  /**
   * Summarizes one transcript; never rejects (a worker that stops mid-task fails that task).
   * `bytes`: what the task will read (its file's size), for the rule on starting workers.
   */
  run(task: SummarizeTask, bytes = 0): Promise<SummarizeOutcome> {
    const request = { id: this.nextId++, task };
    if (!this.inline && !this.disposed && this.fitsInline(bytes)) {
      this.smallRunning++;
      // A small batch in the main thread.
      return this.runInline(request).finally(() => {
        this.smallRunning--;
        this.lastDoneAt = performance.now();
      });
    }
    return this.submit(request);
  }

  /** Stops every worker and fails unfinished tasks; resolves with the workers' exit codes once they have all exited. */
  dispose(): Promise<number[]> {
    if (this.disposed) return Promise.resolve([]);
    this.disposed = true;
    this.closing.abort();
    const unfinished = [...this.retries, ...this.queue.drain(), ...this.slots.flatMap((slot) => slot.inFlight)];
    this.retries = [];
    const exits = this.slots.splice(0).map((slot) => {
      slot.inFlight = [];
      clearTimeout(slot.watchdog);
      clearTimeout(slot.idle);
      return slot.worker.terminate().catch(() => -1);
    });
    for (const pending of unfinished) pending.resolve(failed('the session index was closed'));
    return Promise.all(exits);
  }

  /** Whether a task of `bytes` runs inline: no worker is live and the burst's budget has room for it. */
  private fitsInline(bytes: number): boolean {
    if (this.inlineBytes === 0 || this.slots.length > 0) return false;
    const idle = this.smallRunning === 0 && this.queue.length + this.retries.length === 0;
    if (idle && performance.now() - this.lastDoneAt >= this.idleMs) this.burstBytes = 0;
    if (this.burstBytes + bytes > this.inlineBytes) return false;
    this.burstBytes += bytes;
    return true;
  }

  private submit(request: WorkerRequest): Promise<SummarizeOutcome> {
    if (this.disposed) return Promise.resolve(failed('the session index was closed'));
    if (this.inline) return this.runInline(request);
    return new Promise((resolve) => {
      this.queue.push({ request, resolve });
      this.pump();
    });
  }

  private runInline(request: WorkerRequest): Promise<SummarizeOutcome> {
    return summarizeTranscriptFile(request.task, this.files, { signal: this.closing.signal });
  }

  private nextPending(): Pending | undefined {
    return this.retries.shift() ?? this.queue.shift();
  }

  /** Hands queued tasks to workers with room, starting workers up to `size`. */
  private pump(): void {
    while (!this.disposed && !this.inline && this.retries.length + this.queue.length > 0) {
      const slot = this.slotWithRoom();
      if (!slot) {
        if (this.slots.length === 0) continue; // none could start: try again (or, after repeated failures, go inline)
        return;
      }
      const pending = this.nextPending()!;
      if (slot.inFlight.push(pending) === 1) {
        slot.worker.ref(); // busy: keep the process alive for the answer
        this.watch(slot);
        clearTimeout(slot.idle);
        slot.idle = undefined;
      }
      slot.worker.postMessage(pending.request);
    }
    if (this.inline) this.drainInline();
  }

  private slotWithRoom(): Slot | undefined {
    let best: Slot | undefined;
    for (const slot of this.slots) if (slot.inFlight.length < this.tasksPerWorker && (!best || slot.inFlight.length < best.inFlight.length)) best = slot;
    if (best && best.inFlight.length === 0) return best;
    if (this.slots.length < this.size) return this.start() ?? best;
    return best;
  }

  private start(): Slot | undefined {
    let worker: Worker;
    // The worker's long lines draw on the process's read budget; what it held is freed when it exits.
    const readMemory = lendReadMemoryCell();
    try {
      const workerData: SummarizeWorkerData = { readMemory };
      worker = new Worker(this.workerFile, { workerData, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    } catch (error) {
      returnReadMemoryCell(readMemory);
      this.startFailed(`cannot start an index worker: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
    worker.once('exit', () => returnReadMemoryCell(readMemory));
    worker.unref(); // an idle worker never keeps the process alive
    const slot: Slot = { worker, inFlight: [], ready: false };
    worker.on('message', (reply: WorkerReply) => this.received(slot, reply));
    worker.on('error', (error: Error) => {
      slot.failure = error.message;
    });
    worker.on('messageerror', (error: Error) => {
      slot.failure = `unreadable message: ${error.message}`;
      void worker.terminate().catch(() => undefined);
    });
    worker.on('exit', (code: number) => this.exited(slot, code));
    this.slots.push(slot);
    this.startedCount++;
    return slot;
  }

  private received(slot: Slot, reply: WorkerReply): void {
    if (!('id' in reply)) {
      slot.ready = true;
      // The worker's start reset the process's V8 flags (the main heap's limits among them).
      reapplyRuntimeV8Flags();
      this.startFailures = 0;
      this.watch(slot); // the running task's time starts now, not while the worker loaded
      return;
    }
    const index = slot.inFlight.findIndex((pending) => pending.request.id === reply.id);
    if (index < 0) return;
    const [pending] = slot.inFlight.splice(index, 1);
    this.lastDoneAt = performance.now();
    if (slot.inFlight.length === 0) slot.worker.unref();
    this.watch(slot);
    pending.resolve(reply.outcome);
    this.pump();
    if (slot.inFlight.length === 0) this.retireWhenIdle(slot);
  }

  /**
   * Ends the workers that have nothing to do now, without waiting for `idleMs`, and makes the
   * busy ones end as soon as they are done: for when the caller knows no burst follows (the
   * first index is built). Each worker's isolate and malloc arena are ~18 MB that would
   * otherwise stay while the store answers its first, largest requests.
   */
  retireIdle(): void {
    for (const slot of [...this.slots]) {
      if (slot.inFlight.length === 0) this.retire(slot);
      else slot.retireWhenDone = true;
    }
  }

  /** Ends `slot`'s worker if it is still idle after `idleMs`; the next task starts a new one. */
  private retireWhenIdle(slot: Slot): void {
    clearTimeout(slot.idle);
    if (slot.retireWhenDone === true && this.queue.length + this.retries.length === 0) {
      this.retire(slot);
      return;
    }
    slot.idle = setTimeout(() => {
      slot.idle = undefined;
      if (slot.inFlight.length === 0) this.retire(slot);
    }, this.idleMs);
    slot.idle.unref();
  }

  /** Ends an idle worker (out of the pool first, so its exit is not taken for a failure). */
  private retire(slot: Slot): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    clearTimeout(slot.watchdog);
    clearTimeout(slot.idle);
    slot.idle = undefined;
    void slot.worker.terminate().catch(() => undefined);
  }

  /** A worker stopped: the task it was running fails, the ones it had not started are retried. */
  private exited(slot: Slot, code: number): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return; // disposed
    this.slots.splice(at, 1);
    clearTimeout(slot.watchdog);
    clearTimeout(slot.idle);
    const [running, ...notStarted] = slot.inFlight;
    slot.inFlight = [];
    if (!slot.ready) {
      // It never started, so it ran none of them.
      this.retries = [...(running ? [running] : []), ...notStarted, ...this.retries];
      this.startFailed(`an index worker stopped before starting (exit code ${code}${slot.failure ? `: ${slot.failure}` : ''})`);
    } else {
      this.retries = [...notStarted, ...this.retries];
      if (running) {
        const why = slot.failure ?? `exit code ${code}`;
        running.resolve(failed(`the index worker stopped while reading ${running.request.task.file} (${why})`));
      }
    }
    this.pump();
  }

  /** (Re)arms the slot's watchdog for the task it now runs, if any (a worker that never starts is caught too). */
  private watch(slot: Slot): void {
    clearTimeout(slot.watchdog);
    slot.watchdog = undefined;
    if (slot.inFlight.length === 0) return;
    slot.watchdog = setTimeout(() => {
      slot.failure = `no answer after ${this.taskTimeoutMs} ms`;
      void slot.worker.terminate().catch(() => undefined);
    }, this.taskTimeoutMs);
    slot.watchdog.unref();
  }

  private startFailed(message: string): void {
    if (++this.startFailures < MAX_START_FAILURES || this.inline) return;
    this.inline = true;
    this.log(`${message}; transcripts are summarized in the main thread from now on`);
  }

  /** After switching to inline: runs what was waiting for a worker. */
  private drainInline(): void {
    const waiting = [...this.retries, ...this.queue.drain()];
    this.retries = [];
    for (const pending of waiting) void this.runInline(pending.request).then(pending.resolve);
  }
}
