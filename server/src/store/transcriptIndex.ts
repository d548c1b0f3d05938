/**
 * The title/summary index: one summary per transcript, keyed by file identity. An unchanged
 * file costs one lstat; an appended one is summarized from where the last read stopped (a
 * recently written one; an older one from scratch, see RESUMABLE_TRANSCRIPTS); a shrunk or
 * replaced one from scratch.
 */
import { ConcurrencyLimit } from './concurrency';
import { keyPath, type TranscriptLocation } from './discovery';
import { baseDepthOf, type DiscoveryScope } from './layoutScopes';
import { quickSync } from './quickSync';
import { ScopedKeys } from './scopedKeys';
import { SummarizePool } from './summarize/pool';
import { HEADER_REASONS } from './summarize/summarizeFile';
import type { IndexFormat } from './formats/adapter';
import { dshFormat } from './formats/dsh';
import type { IndexedTranscript } from './listing';
import { fileIdentity, sameIdentity, writtenRecently, type FileIdentity, type TranscriptFiles } from './transcriptFiles';
import type { TranscriptSummary } from './transcriptSummary';

export { HEADER_REASONS, readErrorOf } from './summarize/summarizeFile';
export type { IndexedTranscript } from './listing';

/** What a refresh found. */
export type RefreshOutcome = 'unchanged' | 'changed' | 'gone';

interface IndexEntry extends IndexedTranscript {
  /**
   * What an append resumes from (the compact saved state; no live summarizer is kept), for the
   * most recently written transcripts only (see {@link RESUMABLE_TRANSCRIPTS}).
   */
  saved?: unknown;
  running?: Promise<RefreshOutcome>;
  queued?: Promise<RefreshOutcome>;
}

/**
 * How many transcripts, the most recently modified, keep a saved state to resume an append
 * from (up to twice as many between prunings); only those written recently ask for one
 * (`writtenRecently`). A saved state is about 1–2 KB (header, open
 * turn, surface seqs), so keeping one per transcript would cost 100–200 MB at 100,000
 * sessions; dsh appends only to the sessions in use, which are the recently written ones. An
 * older transcript that grows is read once from byte 0 (the logs are small; the pool reads
 * it off the main thread) and then is among the recent ones.
 */
export const RESUMABLE_TRANSCRIPTS = 512;

/** The summaries of every known transcript of one root. */
export class TranscriptIndex {
  private readonly entries = new Map<string, IndexEntry>();
  private readonly limit: ConcurrencyLimit;
  /** Entries with a summary (status reports it often, so it is kept rather than counted). */
  private summarizedCount = 0;
  /** Keys whose last read failed (retried by every refresh; the store's sweep visits them). */
  private readonly failed = new Set<string>();
  /** Entries holding a saved state, pruned to the most recently modified. */
  private readonly resumable = new Set<IndexEntry>();
  /**
   * The oldest modification time kept at the last pruning: a transcript older than this would
   * be pruned again, so its state is not even asked for.
   */
  private resumeThreshold = -Infinity;
  /** One copy of each project directory name seen (bounded by the project directories). */
  private readonly projectDirs = new Map<string, string>();
  /** One copy of each cwd seen (bounded by the distinct cwds, a few per project directory). */
  private readonly cwds = new Map<string, string>();
  /** The same keys as `entries`, listable by discovery scope. */
  private readonly scoped: ScopedKeys;

  constructor(
    private readonly root: string,
    private readonly files: TranscriptFiles,
    concurrency: number,
    /** How transcripts are read and folded (dsh's format through the store's pool, or a home's); dsh's inline by default. */
    private readonly format: IndexFormat<TranscriptSummary, unknown> = dshFormat(new SummarizePool({ size: 0, files }), files),
  ) {
    this.limit = new ConcurrencyLimit(concurrency);
    this.scoped = new ScopedKeys(baseDepthOf(format.layout));
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
    const { header } = summary;
    if (header) {
      // Many sessions share a cwd; each arrives as its own copy (from a worker or the cache).
      const cwd = header.cwd;
      if (cwd !== undefined) {
        const shared = this.cwds.get(cwd);
        if (shared === undefined) this.cwds.set(cwd, cwd);
        else header.cwd = shared;
      }
      // The id is the session directory's name (when the header derives its path): one string for both.
      if (header.id === entry.location.sessionDir) header.id = entry.location.sessionDir;
    }
    entry.summary = summary;
  }

  /** The entry for a root-relative key. */
  get(key: string): IndexedTranscript | undefined {
    return this.entries.get(key);
  }

  /** Makes a discovered transcript known (not yet summarized); returns false if it already was. */
  add(location: TranscriptLocation): boolean {
    if (this.entries.has(location.key)) return false;
    // Discovery splits each key into fresh strings: the project directory's name is kept once.
    const projectDir = this.projectDirs.get(location.projectDir);
    if (projectDir === undefined) this.projectDirs.set(location.projectDir, location.projectDir);
    else location.projectDir = projectDir;
    // Every field from the start: fields added later would go to a separate property array.
    this.entries.set(location.key, { location, identity: undefined, summary: undefined, readFailed: undefined, saved: undefined, running: undefined, queued: undefined });
    this.scoped.add(location.key);
    return true;
  }

  /** Keeps (or drops) what the next append resumes from, within the bound on saved states. */
  private keepForResume(entry: IndexEntry, saved: unknown): void {
    entry.saved = saved;
    if (saved === undefined) {
      this.resumable.delete(entry);
      return;
    }
    this.resumable.add(entry);
    if (this.resumable.size <= 2 * RESUMABLE_TRANSCRIPTS) return;
    // Pruning to half the allowance at a time keeps the sorting amortized O(log n) per entry.
    const byRecency = [...this.resumable].sort((a, b) => (b.identity?.mtimeMs ?? 0) - (a.identity?.mtimeMs ?? 0));
    this.resumeThreshold = byRecency[RESUMABLE_TRANSCRIPTS - 1]?.identity?.mtimeMs ?? -Infinity;
    for (const dropped of byRecency.slice(RESUMABLE_TRANSCRIPTS)) {
      dropped.saved = undefined;
      this.resumable.delete(dropped);
    }
  }

  /** Adopts a summary from the persistent cache; it is trusted only while the file keeps this identity. */
  adopt(key: string, identity: FileIdentity, summary: TranscriptSummary, saved?: unknown): void {
    const entry = this.entries.get(key);
    if (entry && entry.identity === undefined) {
      this.setSummary(entry, summary);
      entry.identity = identity;
      this.keepForResume(entry, saved);
    }
  }

  /** The fold state worth persisting for a transcript (so an append after a restart resumes): the format's own value. */
  savedState(key: string): unknown {
    return this.entries.get(key)?.saved;
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
    const entry = this.entries.get(key);
    if (!entry) return false;
    if (entry.summary !== undefined) this.summarizedCount--;
    this.failed.delete(key);
    this.resumable.delete(entry);
    this.scoped.delete(key);
    return this.entries.delete(key);
  }

  /** The keys whose last read failed (a copy): they are read again at every refresh. */
  failedKeys(): string[] {
    return [...this.failed];
  }

  /** The keys of every known transcript (a copy). */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  /** The keys of the known transcripts inside a discovery scope (a copy), without visiting the others. */
  keysIn(scope: DiscoveryScope): string[] {
    return this.scoped.inScope(scope);
  }

  /** The project folders (one level below the layout's base) holding known transcripts. */
  projects(): string[] {
    return this.scoped.projects();
  }

  /**
   * Whether a refresh of `key` would find nothing to do: what a restart meets for nearly every
   * transcript, as the lookup just now (`seen`) saw the file its summary describes.
   */
  unchanged(key: string, seen: FileIdentity | undefined): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.running === undefined && entry.queued === undefined && seen !== undefined && !entry.readFailed && sameIdentity(entry.identity, seen);
  }

  /**
   * Brings one transcript's summary up to date. Refreshes of one key never overlap: a refresh
   * requested while one runs is queued once and shared by every caller that asks meanwhile.
   * `seen`: the file's identity as a lookup just now saw it (discovery's), used instead of another
   * `lstat` when the refresh starts at once (a queued one looks again: it starts later).
   */
  refresh(key: string, seen?: FileIdentity): Promise<RefreshOutcome> {
    const entry = this.entries.get(key);
    if (!entry) return Promise.resolve('gone');
    if (entry.queued) return entry.queued;
    const start = (seenNow?: FileIdentity): Promise<RefreshOutcome> => {
      entry.queued = undefined;
      entry.running = this.limit.run(() => this.revalidate(entry, seenNow)).finally(() => {
        entry.running = undefined;
      });
      return entry.running;
    };
    if (entry.running) {
      entry.queued = entry.running.then(
        () => start(),
        () => start(),
      );
      return entry.queued;
    }
    return start(seen);
  }

  /**
   * A vanished file is 'gone' (discovery decides what happens next); any other failure makes
   * the entry header-level damage (skipped and reported) for now. It is not the file's state:
   * the entry is marked `readFailed`, never cached, and the next refresh reads it again (a
   * permission fixed without touching the file changes nothing else a refresh could see).
   */
  private unreadable(entry: IndexEntry, error: unknown, identity?: FileIdentity): RefreshOutcome {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || identity === undefined) return 'gone';
    const key = entry.location.key;
    if (this.entries.get(key) !== entry) return 'gone';
    const headerProblem = `${HEADER_REASONS.unreadable}: ${(error as Error).message}`;
    // The same failure again: nothing to tell (a retry of a still unreadable file is quiet).
    const same = entry.readFailed === true && entry.summary?.headerProblem === headerProblem && sameIdentity(entry.identity, identity);
    entry.identity = identity;
    entry.readFailed = true;
    this.failed.add(key);
    this.keepForResume(entry, undefined);
    if (same) return 'unchanged';
    this.setSummary(entry, { headerProblem, capturedThroughSeq: null, eventCount: 0 });
    return 'changed';
  }

  /** The identity of the regular file at `file` now; undefined when it is something else. Throws what `lstat` threw. */
  private async lookUp(file: string): Promise<FileIdentity | undefined> {
    // Synchronous while that is quick (see quickSync.ts): a first index stats every transcript.
    const files = this.files;
    const stats = files.lstatSync !== undefined && quickSync.quick ? quickSync.call(() => files.lstatSync!(file)) : await files.lstat(file);
    return stats.isFile() ? fileIdentity(stats) : undefined;
  }

  private async revalidate(entry: IndexEntry, seen: FileIdentity | undefined): Promise<RefreshOutcome> {
    const { key } = entry.location;
    const file = keyPath(this.root, key);
    let current: FileIdentity | undefined;
    try {
      current = seen ?? (await this.lookUp(file));
    } catch (error) {
      return this.unreadable(entry, error);
    }
    if (current === undefined) return 'gone';
    if (sameIdentity(entry.identity, current)) {
      if (!entry.readFailed) return 'unchanged';
      // A retry of a file that failed: opening it here first keeps a still-unreadable file from
      // costing an index worker at every sweep.
      try {
        await (await this.files.open(file)).close();
      } catch (error) {
        return this.unreadable(entry, error, current);
      }
    }
    const previous = entry.summary;
    // Only a summary an append may continue hands over its state: damage is sticky.
    const saved = previous !== undefined && this.format.mayResume(previous) ? entry.saved : undefined;
    // A first index of 10,000 old transcripts would otherwise hash, serialize and hand over
    // thousands of states (until the pruning's threshold rose) that no append ever uses.
    const keepState = writtenRecently(current, Date.now()) && current.mtimeMs >= this.resumeThreshold;
    // What the task reads: the whole file, or what was appended when it resumes.
    const bytes = Math.max(0, current.size - (saved !== undefined ? (entry.identity?.size ?? 0) : 0));
    const outcome = await this.format.readFacts({ root: this.root, key, file, identity: current, previous: entry.identity, resume: saved, keepState, bytes }, previous);
    if (outcome.kind === 'failed') return this.unreadable(entry, outcome.error, current);
    if (this.entries.get(key) !== entry) return 'gone';
    const { identity, facts: summary } = outcome;
    entry.identity = identity;
    entry.readFailed = undefined;
    this.failed.delete(key);
    this.setSummary(entry, summary);
    // What the next append resumes from: the compact saved state (the worker kept no live summarizer).
    this.keepForResume(entry, outcome.resume);
    return 'changed';
  }
}
