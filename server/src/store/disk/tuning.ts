/** The disk store's knobs, with production defaults; tests shorten, observe or replace them. */
import { foregroundRequests, type ForegroundWork } from '../concurrency';
import { nodeDirectoryFiles, type DirectoryFiles } from '../directoryFiles';
import { defaultIndexWorkers } from '../summarize/pool';
import { nodeTranscriptFiles, type TranscriptFiles } from '../transcriptFiles';
import { systemClock, type Clock } from './clock';

/** Knobs with production defaults; tests shorten or observe them. */
export interface DiskStoreTuning {
  /** Transcript access (injectable to observe reads). */
  files: TranscriptFiles;
  /** Directory access: the root, discovery and the directory watches. */
  directories: DirectoryFiles;
  /** Time: every timer of the store and every time it reads (fake in freshness tests). */
  clock: Clock;
  /** Transcripts read at once while indexing. */
  concurrency: number;
  /** Worker threads that read and fold transcripts (0: the main thread does). */
  indexWorkers: number;
  /** Bytes a burst of reads summarizes in the main thread before workers start (see SummarizePool). */
  inlineIndexBytes: number;
  /** Directory watches at most (root + project directories + most recent session directories). */
  maxWatches: number;
  /** Quiet time after a change before re-reading, and the longest a burst may postpone it… */
  debounceMs: number;
  maxDebounceMs: number;
  /**
   * …and at least this many times the last such look (not a full rescan) took, since it ended:
   * a large file written continuously, read again at each look, then costs at most
   * ~1/(1+factor) of a core. 0 (dsh's): the debounce alone.
   */
  refreshCostFactor: number;
  /**
   * The sweep re-stats the transcripts no watch covers (and retries failed reads): one pass
   * takes at least `sweepPeriodMs` (and `sweepCostFactor` × the time the pass's own batches took),
   * spread in batches at most every `sweepIntervalMs`.
   */
  sweepIntervalMs: number;
  sweepPeriodMs: number;
  /**
   * Default 1000: the batches' own time is about half of what a pass costs the process (the
   * garbage of each visit, the kernel's path lookups, the timer's wake-ups), so this keeps the
   * whole sweep near 0.2 % of a core. At 10,000 sessions (~6,000 transcripts unwatched) a pass
   * then takes ~50 s; at 100,000 (~96,000 unwatched, the least recently written) some 13 min, by
   * the same ~8 µs of batch time a visit. Tests set 0: on a loaded machine a batch of two lstats
   * can take a descheduled 25 ms, which ×1000 stalls the sweep past any test's deadline.
   */
  sweepCostFactor: number;
  /** Full rescans run at least this far apart… */
  rescanMinIntervalMs: number;
  /**
   * …and at least this many times their duration apart (default 200: a full rescan is a safety
   * net behind the watches and the sweep, so at most 1/200 of the time goes to it). Tests in fake
   * time set 0: there a duration is only how far the test moved the clock meanwhile.
   */
  rescanCostFactor: number;
  /**
   * …and at least this many times the process CPU time the last one took (default 1000: ≤ 0.1 %
   * of a core on average; at 10,000 sessions a rescan costs ~1.5 s of CPU, which at 200× its
   * duration alone was ~0.4 %). Tests set 0: their process CPU is mostly other work.
   */
  rescanCpuFactor: number;
  /** How often a missing root is looked for. */
  rootPollMs: number;
  /** Minimum spacing of `onStatus` / `onDidChange` notifications. */
  notifyThrottleMs: number;
  /** Delay before the persistent cache is rewritten after a change… */
  cacheSaveDelayMs: number;
  /** …and before it is first written after the first index (absent: `cacheSaveDelayMs`; in a quiet moment either way). */
  firstCacheSaveDelayMs?: number;
  /**
   * The catch-up rescan after the first index (the whole root again, for what changed while it
   * was built, before its directories were watched) starts `catchUpDelayMs` after it at the
   * earliest. It, and every cache write, waits until no request has been in progress and no
   * message written for `backgroundQuietMs` (`foreground`), or `backgroundMaxWaitMs` at most: the
   * answers that waited for the first index, and the typing right after it, do not share the
   * main thread with ~0.5 s of rescan at 10,000 sessions (~5 s at 100,000) or a 50 MB cache write.
   */
  catchUpDelayMs: number;
  backgroundQuietMs: number;
  backgroundMaxWaitMs: number;
  foreground: ForegroundWork;
}

/** Off only in the bench's variant build without the inline batch (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_INLINE_INDEX: boolean | undefined;

/**
 * Transcripts of up to this many bytes in all (on disk) are summarized in the main thread: below
 * it, starting index workers costs more wall time than they save (bench/ANALYSIS.md, "Start").
 * The plain path (0): always the workers.
 */
export const INLINE_INDEX_BYTES = typeof DSH_DEVICE_INLINE_INDEX === 'undefined' || DSH_DEVICE_INLINE_INDEX ? 1024 * 1024 : 0;

/** Production defaults. */
export const DEFAULT_TUNING: DiskStoreTuning = {
  files: nodeTranscriptFiles,
  directories: nodeDirectoryFiles,
  clock: systemClock,
  concurrency: 16,
  indexWorkers: defaultIndexWorkers(),
  inlineIndexBytes: INLINE_INDEX_BYTES,
  maxWatches: 4096,
  debounceMs: 30,
  maxDebounceMs: 200,
  refreshCostFactor: 0,
  sweepIntervalMs: 1000,
  sweepPeriodMs: 30_000,
  rescanMinIntervalMs: 300_000,
  rescanCostFactor: 200,
  rescanCpuFactor: 1000,
  sweepCostFactor: 1000,
  rootPollMs: 500,
  notifyThrottleMs: 100,
  cacheSaveDelayMs: 5000,
  catchUpDelayMs: 200,
  backgroundQuietMs: 500,
  backgroundMaxWaitMs: 30_000,
  foreground: foregroundRequests,
};
