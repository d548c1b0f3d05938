/**
 * A test double of the index worker (store/summarize/summarizeWorker.ts), for the pool's tests of
 * workers that crash or hang: it speaks the same protocol and summarizes as the worker does, except
 * that, when its turn comes, a task whose file name ends in `.exit-N` exits the thread with code N
 * and one ending in `.hang` never answers. The pool runs it when given it as its `workerFile`.
 */
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import type { WorkerReply, WorkerRequest } from '../store/summarize/protocol';
import { summarizeTranscriptFile } from '../store/summarize/summarizeFile';

const port = parentPort;
if (!port) throw new Error('misbehavingWorker.js runs only as a worker thread');

let previous: Promise<unknown> = Promise.resolve();

port.on('message', (request: WorkerRequest) => {
  // One task after another, as the real worker runs them, so a crash interrupts the task it names.
  previous = previous.then(async () => {
    const name = path.basename(request.task.file);
    const exit = /\.exit-(\d+)$/.exec(name);
    if (exit) process.exit(Number(exit[1]));
    if (name.endsWith('.hang')) for (;;);
    port.postMessage({ id: request.id, outcome: await summarizeTranscriptFile(request.task) } satisfies WorkerReply);
  });
});
port.postMessage({ ready: true } satisfies WorkerReply);
