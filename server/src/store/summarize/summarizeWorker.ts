/**
 * The index worker's entry (run by `worker_threads`, see pool.ts): summarizes the transcripts it
 * is sent, one at a time in arrival order, and posts each outcome back with the task's id.
 */
import { lstatSync, statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { joinReadMemoryBudget } from '../memoryBudget';
import { openTranscriptSync, type TranscriptFiles } from '../transcriptFiles';
import { summarizeTranscriptFile, taskErrorOf, type SummarizeOutcome } from './summarizeFile';
import type { SummarizeWorkerData, WorkerReply, WorkerRequest } from './protocol';

/**
 * Synchronous reads: a worker has nothing else to do meanwhile, and a blocking read avoids a
 * round trip through libuv's small thread pool (which the main thread's file access shares).
 */
const blockingFiles: TranscriptFiles = {
  lstat: async (file) => lstatSync(file),
  stat: async (file) => statSync(file),
  open: async (file) => openTranscriptSync(file),
};

const port = parentPort;
if (!port) throw new Error('summarizeWorker.js runs only as a worker thread');

// Long lines draw on the budget of the whole process, not one of this thread's own.
const readMemory = (workerData as SummarizeWorkerData | undefined)?.readMemory;
if (readMemory !== undefined) joinReadMemoryBudget(readMemory);

// A worker's stdout is the process's, which in stdio mode carries the protocol: anything written
// there (a dependency's diagnostics) goes to stderr instead.
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

let previous: Promise<unknown> = Promise.resolve();

port.on('message', (request: WorkerRequest) => {
  // Tasks run strictly one after another, so the pool knows which one a crash interrupted.
  previous = previous.then(async () => {
    let outcome: SummarizeOutcome;
    try {
      outcome = await summarizeTranscriptFile(request.task, blockingFiles);
    } catch (error) {
      outcome = { kind: 'failed', error: taskErrorOf(error) };
    }
    port.postMessage({ id: request.id, outcome } satisfies WorkerReply);
  });
});
port.postMessage({ ready: true } satisfies WorkerReply);
