/** Messages between the index's summarize pool and its workers (structured-clone safe). */
import type { SummarizeOutcome, SummarizeTask } from './summarizeFile';
import type { ReadMemoryShare } from '../memoryBudget';

/** Pool → worker: one task. */
export interface WorkerRequest {
  id: number;
  task: SummarizeTask;
}

/** Worker → pool: started and listening, or one task's outcome. */
export type WorkerReply = { ready: true } | { id: number; outcome: SummarizeOutcome };

/** What an index worker is started with (`workerData`). */
export interface SummarizeWorkerData {
  /** Its cell of the process's read budget (see memoryBudget.ts); absent, it keeps a budget of its own. */
  readMemory?: ReadMemoryShare;
}
