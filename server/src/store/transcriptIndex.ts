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
import { fileIdentity, isAppendOf, sameIdentity, type FileIdentity, type OpenTranscript, type TranscriptFiles } from './transcriptFiles';

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

/** Read granularity: small enough to keep each synchronous decoding slice short. */
const READ_CHUNK_BYTES = 256 * 1024;

/** Header-problem wording, once. */
export const HEADER_REASONS = {
  incomplete: 'no complete header line or frame',
  invalid: (message: string) => `invalid session header: ${message}`,
  unreadable: 'cannot read transcript',
} as const;

let zstdReady: Promise<void> | undefined;

/** Loads the zstd decoder once per process (needed on Node 20). */
export function ensureZstdSupport(): Promise<void> {
  return (zstdReady ??= initZstdSupport());
}

/** A decoder failure as a `SessionReadError`-shaped value. */
export function readErrorOf(error: unknown): { reason: SessionReadError['reason']; message: string } {
  if (error instanceof SessionReadError) return { reason: error.reason, message: error.message };
  return { reason: 'corrupt', message: error instanceof Error ? error.message : String(error) };
}

type RawSummary = ReturnType<SessionLogSummarizer['summary']>;

function headerFields(header: NonNullable<RawSummary['header']>): SessionHeaderFields {
  const fields: SessionHeaderFields = { id: header.id, createdAt: header.createdAt };
  if (header.cwd !== undefined) fields.cwd = header.cwd;
  return fields;
}

/** The summarizer's answer, with a decoding failure it threw (rather than recorded) folded in. */
function summaryOf(summarizer: SessionLogSummarizer, thrown: unknown): RawSummary | { error: unknown } {
  try {
    const raw = summarizer.summary();
    return thrown !== undefined && raw.error === undefined ? { ...raw, error: thrown } : raw;
  } catch (error) {
    return { error: thrown ?? error };
  }
}

/** Interprets the summarizer's answer by our damage policy. */
function interpret(raw: RawSummary | { error: unknown }): TranscriptSummary {
  const base = { capturedThroughSeq: null, eventCount: 0 };
  if (!('header' in raw) || raw.header === undefined) {
    // Without a header, an error is header-level damage; no error means the header is still incomplete.
    return raw.error === undefined
      ? { ...base, headerProblem: HEADER_REASONS.incomplete }
      : { ...base, headerProblem: HEADER_REASONS.invalid(readErrorOf(raw.error).message) };
  }
  const summary: TranscriptSummary = {
    header: headerFields(raw.header),
    capturedThroughSeq: raw.capturedThroughSeq,
    surfaceCounts: raw.surfaceCounts,
    eventCount: raw.eventCount,
  };
  if (raw.error !== undefined) summary.bodyError = readErrorOf(raw.error);
  else if (raw.title !== undefined) summary.title = raw.title;
  return summary;
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
    if (encoding === 'zstd') await ensureZstdSupport();
    if (entry.saved) {
      try {
        entry.summarizer = SessionLogSummarizer.fromJSON(entry.saved);
      } catch {
        entry.summarizer = undefined; // an unusable saved state only costs a full read
      }
      entry.saved = undefined;
    }
    let handle: OpenTranscript;
    try {
      handle = await this.files.open(file);
    } catch (error) {
      return this.unreadable(entry, error, current);
    }
    try {
      const opened = fileIdentity(await handle.stat());
      const previous = entry.summary;
      // Append-only logs: a longer file with the same identity only gained bytes at the end.
      // Damage is sticky, so a damaged summary is rebuilt from scratch rather than resumed.
      const resumable =
        entry.summarizer !== undefined &&
        entry.identity !== undefined &&
        previous !== undefined &&
        isAppendOf(entry.identity, opened) &&
        previous.bodyError === undefined &&
        (previous.header !== undefined || previous.headerProblem === HEADER_REASONS.incomplete);
      const summarizer = resumable && entry.summarizer ? entry.summarizer : new SessionLogSummarizer(encoding);
      // A restored summarizer continues from its last committed offset, a live one from its last push.
      let position = resumable ? summarizer.consumedBytes : 0;
      let decodeError: unknown;
      // One buffer per read: the summarizer copies whatever it keeps of a push.
      const buffer = new Uint8Array(Math.min(READ_CHUNK_BYTES, Math.max(0, opened.size - position)));
      while (position < opened.size && decodeError === undefined) {
        const length = Math.min(buffer.length, opened.size - position);
        const { bytesRead } = await handle.read(buffer, 0, length, position);
        if (bytesRead === 0) break; // the file shrank while being read; the next refresh starts over
        try {
          summarizer.push(buffer.subarray(0, bytesRead));
        } catch (error) {
          decodeError = error;
        }
        position += bytesRead;
      }
      const raw = summaryOf(summarizer, decodeError);
      if (this.entries.get(key) !== entry) return 'gone';
      let summary = interpret(raw);
      const identity = { ...opened, size: position };
      if (summary.header) {
        // The header never changes in an append; neither does whether it derives this path.
        const problem =
          resumable && previous?.header !== undefined
            ? previous.headerProblem
            : await pathBindingProblem(this.root, key, encoding, summary.header, identity, this.files);
        if (problem !== undefined) summary = { ...summary, headerProblem: problem };
      }
      entry.identity = identity;
      this.setSummary(entry, summary);
      keepForResume(entry, summarizer);
      return 'changed';
    } catch (error) {
      return this.unreadable(entry, error, current);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}
