/** Messages between the index's summarize pool and its workers (structured-clone safe). */
import type { SummarizeOutcome, SummarizeTask } from './summarizeFile';

/** Pool → worker: one task. */
export interface WorkerRequest {
  id: number;
  task: SummarizeTask;
}

/** Worker → pool: started and listening, or one task's outcome. */
export type WorkerReply = { ready: true } | { id: number; outcome: SummarizeOutcome };
