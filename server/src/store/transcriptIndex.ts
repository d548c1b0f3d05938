/**
 * The title/summary index: one summary per transcript, keyed by file identity. An unchanged
 * file costs one lstat; an appended one is summarized from where the last read stopped; a
 * shrunk or replaced one from scratch.
 */
import { SessionReadError } from '../resolver/sessionStore';
import { pathBindingProblem, type SessionHeaderFields } from './binding';
import { ConcurrencyLimit } from './concurrency';
import { keyPath, type TranscriptLocation } from './discovery';
import type { TranscriptEncoding } from './layout';
import { initZstdSupport, SessionLogSummarizer, type SessionLogSummarizerJSON } from './log';
import { SummarizePool } from './summarize/pool';
import { HEADER_REASONS, mayResume } from './summarize/summarizeFile';
import { fileIdentity, sameIdentity, type FileIdentity, type TranscriptFiles } from './transcriptFiles';

export { HEADER_REASONS, readErrorOf } from './summarize/summarizeFile';

/** What the listing needs to know about one transcript. */
export interface TranscriptSummary {
  /** Present when the header line/frame is complete and valid. */
  header?: SessionHeaderFields;
  /** Header-level damage (the entry is skipped and reported): incomplete, invalid or unbound header. */
  headerProblem?: string;
  /** Latest title; undefined when there is none or the title read failed. */
  title?: string;
  /** Body-level damage: still listed (label = id), `readSurface` rejects. */
  bodyError?: { reason: SessionReadError['reason']; message: string };
  capturedThroughSeq: number | null;
  /** The decoder's surface counts, opaque to the store. */
  surfaceCounts?: unknown;
  eventCount: number;
}

/** One indexed transcript. */
export interface IndexedTranscript {
  location: TranscriptLocation;
  /** The file version `summary` describes. */
  identity?: FileIdentity;
  summary?: TranscriptSummary;
}

/** What a refresh found. */
export type RefreshOutcome = 'unchanged' | 'changed' | 'gone';

interface IndexEntry extends IndexedTranscript {
  /** Live summarizer state for incremental re-reads. */
  summarizer?: SessionLogSummarizer;
  /** Saved summarizer state from the persistent cache, restored when the file is next read. */
  saved?: SessionLogSummarizerJSON;
  running?: Promise<RefreshOutcome>;
  queued?: Promise<RefreshOutcome>;
}

let zstdReady: Promise<void> | undefined;

/** Loads the zstd decoder once per process (needed on Node 20). */
export function ensureZstdSupport(): Promise<void> {
  return (zstdReady ??= initZstdSupport());
}

/** Uncommitted bytes (a torn tail) a live summarizer may hold; beyond this only its saved state is kept. */
const MAX_LIVE_PENDING_BYTES = 1024 * 1024;

/**
 * Keeps what the next append needs: nothing after damage (it is re-read from scratch), the
 * live summarizer normally, or its compact saved state when it holds a large torn tail, so an
 * idle half-written record never pins memory.
 */
function keepForResume(entry: IndexEntry, summarizer: SessionLogSummarizer): void {
  entry.summarizer = entry.saved = undefined;
  const summary = entry.summary;
  if (!summary || summary.bodyError !== undefined) return;
  if (summary.header === undefined && summary.headerProblem !== HEADER_REASONS.incomplete) return;
  if (summarizer.consumedBytes - summarizer.resumeOffset <= MAX_LIVE_PENDING_BYTES) entry.summarizer = summarizer;
  else entry.saved = summarizer.toJSON();
}

/** The summaries of every known transcript of one root. */
export class TranscriptIndex {
  private readonly entries = new Map<string, IndexEntry>();
  private readonly limit: ConcurrencyLimit;
  /** Entries with a summary (status reports it often, so it is kept rather than counted). */
  private summarizedCount = 0;

  constructor(
    private readonly root: string,
    private readonly files: TranscriptFiles,
    concurrency: number,
    /** Where transcripts are read and folded (the store owns it); inline by default. */
    private readonly pool: SummarizePool = new SummarizePool({ size: 0, files }),
  ) {
    this.limit = new ConcurrencyLimit(concurrency);
  }

  /** Every indexed transcript. */
  all(): IterableIterator<IndexedTranscript> {
    return this.entries.values();
  }

  /** How many transcripts are known. */
  get size(): number {
    return this.entries.size;
  }

  /** How many transcripts have a summary (the rest are still being read). */
  get summarized(): number {
    return this.summarizedCount;
  }

  private setSummary(entry: IndexEntry, summary: TranscriptSummary): void {
    if (entry.summary === undefined) this.summarizedCount++;
    entry.summary = summary;
  }

  /** The entry for a root-relative key. */
  get(key: string): IndexedTranscript | undefined {
    return this.entries.get(key);
  }

  /** Makes a discovered transcript known (not yet summarized); returns false if it already was. */
  add(location: TranscriptLocation): boolean {
    if (this.entries.has(location.key)) return false;
    this.entries.set(location.key, { location });
    return true;
  }

  /** Adopts a summary from the persistent cache; it is trusted only while the file keeps this identity. */
  adopt(key: string, identity: FileIdentity, summary: TranscriptSummary, saved?: SessionLogSummarizerJSON): void {
    const entry = this.entries.get(key);
    if (entry && entry.identity === undefined) {
      this.setSummary(entry, summary);
      Object.assign(entry, { identity, saved });
    }
  }

  /** The summarizer state worth persisting for a transcript (so an append after a restart resumes). */
  savedState(key: string): SessionLogSummarizerJSON | undefined {
    const entry = this.entries.get(key);
    if (!entry?.summarizer || entry.summary?.bodyError !== undefined) return entry?.saved;
    return entry.summarizer.toJSON();
  }

  /** The body-level failure summarized for a transcript at exactly this identity, if any. */
  knownFailure(key: string, identity: FileIdentity): TranscriptSummary['bodyError'] {
    const entry = this.entries.get(key);
    const summary = entry?.summary;
    // Only for a header that derives its path: then the header's id is the id being looked up.
    if (!summary?.header || summary.headerProblem !== undefined || !sameIdentity(entry?.identity, identity)) return undefined;
    return summary.bodyError;
  }

  /** Forgets a transcript. */
  delete(key: string): boolean {
    if (this.entries.get(key)?.summary !== undefined) this.summarizedCount--;
    return this.entries.delete(key);
  }

  /** The keys of every known transcript. */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Brings one transcript's summary up to date. Refreshes of one key never overlap: a refresh
   * requested while one runs is queued once and shared by every caller that asks meanwhile.
   */
  refresh(key: string): Promise<RefreshOutcome> {
    const entry = this.entries.get(key);
    if (!entry) return Promise.resolve('gone');
    if (entry.queued) return entry.queued;
    const start = (): Promise<RefreshOutcome> => {
      entry.queued = undefined;
      entry.running = this.limit.run(() => this.revalidate(entry)).finally(() => {
        entry.running = undefined;
      });
      return entry.running;
    };
    if (entry.running) {
      entry.queued = entry.running.then(start, start);
      return entry.queued;
    }
    return start();
  }

  /**
   * A vanished file is 'gone' (discovery decides what happens next); any other failure makes
   * the entry header-level damage until the file changes, so it is not retried in a loop.
   */
  private unreadable(entry: IndexEntry, error: unknown, identity?: FileIdentity): RefreshOutcome {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || identity === undefined) return 'gone';
    if (this.entries.get(entry.location.key) !== entry) return 'gone';
    entry.identity = identity;
    entry.summarizer = entry.saved = undefined;
    this.setSummary(entry, {
      headerProblem: `${HEADER_REASONS.unreadable}: ${(error as Error).message}`,
      capturedThroughSeq: null,
      eventCount: 0,
    });
    return 'changed';
  }

  private async revalidate(entry: IndexEntry): Promise<RefreshOutcome> {
    const { key, encoding } = entry.location;
    const file = keyPath(this.root, key);
    let current: FileIdentity;
    try {
      const stats = await this.files.lstat(file);
      if (!stats.isFile()) return 'gone';
      current = fileIdentity(stats);
    } catch (error) {
      return this.unreadable(entry, error);
    }
    if (sameIdentity(entry.identity, current)) return 'unchanged';
    const previous = entry.summary;
    // Only a summary an append may continue hands over its state: damage is sticky.
    const saved = previous !== undefined && mayResume(previous) ? (entry.saved ?? entry.summarizer?.toJSON()) : undefined;
    const outcome = await this.pool.run({ file, encoding, previous: entry.identity, saved });
    if (outcome.kind === 'failed') return this.unreadable(entry, outcome.error, current);
    if (this.entries.get(key) !== entry) return 'gone';
    let summary = outcome.summary;
    const identity = { ...outcome.opened, size: outcome.position };
    if (summary.header) {
      try {
        // The header never changes in an append; neither does whether it derives this path.
        const problem =
          outcome.resumed && previous?.header !== undefined
            ? previous.headerProblem
            : await pathBindingProblem(this.root, key, encoding, summary.header, identity, this.files);
        if (problem !== undefined) summary = { ...summary, headerProblem: problem };
      } catch (error) {
        return this.unreadable(entry, error, current);
      }
      if (this.entries.get(key) !== entry) return 'gone';
    }
    entry.identity = identity;
    this.setSummary(entry, summary);
    // What the next append resumes from: the compact saved state (the worker kept no live summarizer).
    entry.summarizer = undefined;
    entry.saved = outcome.saved;
    return 'changed';
  }
}
