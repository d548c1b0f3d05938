/**
 * One transcript's read + decode + fold for the index, as plain data both ways (a task in, an
 * outcome out, both structured-clone safe) so it runs the same inline or in an index worker.
 */
import { createHash, type Hash } from 'node:crypto';
import { SessionReadError } from '../../resolver/sessionStore';
import type { SessionHeaderFields } from '../binding';
import { initZstdSupport, SessionLogSummarizer, type SessionLogSummarizerJSON, type TranscriptEncoding } from '../log';
import { fileIdentity, isAppendOf, nodeTranscriptFiles, openTranscriptQuickly, type FileIdentity, type OpenTranscript, type TranscriptFiles } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';

/** Header-problem wording, once. */
export const HEADER_REASONS = {
  incomplete: 'no complete header line or frame',
  invalid: (message: string) => `invalid session header: ${message}`,
  unreadable: 'cannot read transcript',
} as const;

/** A read failure as plain data: `SessionReadError`-shaped, plus the errno code of a file-system failure. */
export interface TaskError {
  reason: SessionReadError['reason'];
  message: string;
  /** `ENOENT` etc. when the file system refused. */
  code?: string;
}

/** A decoder failure as a `SessionReadError`-shaped value. */
export function readErrorOf(error: unknown): { reason: SessionReadError['reason']; message: string } {
  if (error instanceof SessionReadError) return { reason: error.reason, message: error.message };
  return { reason: 'corrupt', message: error instanceof Error ? error.message : String(error) };
}

/** A file-system (or worker) failure as a {@link TaskError}. */
export function taskErrorOf(error: unknown): TaskError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const failure: TaskError = { reason: 'io', message: error instanceof Error ? error.message : String(error) };
  if (typeof code === 'string') failure.code = code;
  return failure;
}

/**
 * What an append resumes from: the summarizer's state and a digest of the bytes that state
 * covers (the file before its resume offset). A resumed read first checks those bytes: a file
 * rewritten in place (a restore, a sync tool, an editor) is read from byte 0 even when it grew.
 */
export interface ResumeState {
  summarizer: SessionLogSummarizerJSON;
  /** SHA-256 (hex) of the file's bytes before `summarizer`'s resume offset. */
  prefixSha256: string;
}

/** What to summarize. */
export interface SummarizeTask {
  /** Absolute path of the transcript. */
  file: string;
  encoding: TranscriptEncoding;
  /** The file version the previous summary describes. */
  previous?: FileIdentity;
  /**
   * Saved state of the previous summary, given only when that summary may be resumed
   * ({@link mayResume}): an append of `previous` whose earlier bytes are unchanged then
   * continues from it instead of from byte 0.
   */
  saved?: ResumeState;
  /**
   * Whether the outcome should carry the state to resume from (default true). The index asks
   * only for transcripts recent enough to keep it: at 100,000 sessions, 1–2 KB of state per
   * transcript made ~150 MB of garbage in the main thread.
   */
  keepState?: boolean;
}

/** What a summarization found. */
export type SummarizeOutcome =
  | {
      kind: 'summary';
      /** The opened file's identity (its size as stat'ed when opened). */
      opened: FileIdentity;
      /** Bytes read: less than `opened.size` when the file shrank while being read. */
      position: number;
      /** Whether `saved` was resumed (else the file was read from byte 0). */
      resumed: boolean;
      /** Why a saved state given was not resumed: not an append, unusable, or the bytes before its offset changed. */
      notResumed?: 'not-append' | 'unusable' | 'prefix-changed';
      /** Interpreted by the index's damage policy; the path binding is the caller's to check. */
      summary: TranscriptSummary;
      /** State to resume from after the next append, when the summary may be resumed. */
      saved?: ResumeState;
    }
  /** The file could not be opened or read. */
  | { kind: 'failed'; error: TaskError };

/**
 * Whether a summary may be continued by an append: damage is sticky (a damaged log is re-read
 * from scratch), and a header that is not yet complete may still complete.
 */
export function mayResume(summary: TranscriptSummary): boolean {
  if (summary.bodyError !== undefined) return false;
  return summary.header !== undefined || summary.headerProblem === HEADER_REASONS.incomplete;
}

/** Read granularity: small enough to keep each synchronous decoding slice short. */
const READ_CHUNK_BYTES = 256 * 1024;

/** Read buffers not in use: a thread reads every file into one of these, not into fresh memory per file. */
const spareReadBuffers: Uint8Array[] = [];

/** Spare buffers kept at most (tasks run one at a time in a worker; inline, a few overlap). */
const MAX_SPARE_READ_BUFFERS = 4;

/**
 * Runs `read` with a buffer of {@link READ_CHUNK_BYTES} that no other read uses meanwhile, then
 * keeps it for the next: a fresh buffer per file cost a first index its pages' faults on every
 * read. A plain Uint8Array, whose `slice` copies (a Buffer's would be a view the next read overwrites).
 */
export async function withReadBuffer<T>(read: (buffer: Uint8Array) => Promise<T>): Promise<T> {
  const buffer = spareReadBuffers.pop() ?? new Uint8Array(READ_CHUNK_BYTES);
  try {
    return await read(buffer);
  } finally {
    if (spareReadBuffers.length < MAX_SPARE_READ_BUFFERS) spareReadBuffers.push(buffer);
  }
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

/** The most uncommitted bytes a PrefixDigest copies while it waits for them to be committed. */
const MAX_HELD_BYTES = 4 * 1024 * 1024;

/**
 * The SHA-256 of a file's bytes from 0 up to its summarizer's committed offset, fed as the
 * bytes are pushed: what lies past the committed offset (a torn line, an incomplete zstd frame)
 * is held back (copied) until it is committed, as it may still change.
 */
class PrefixDigest {
  private readonly hash: Hash = createHash('sha256');
  /** Bytes hashed: the file's [0, hashed). */
  private hashed = 0;
  /** Copies of the bytes after `hashed`, in file order. */
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  /** Set once more than MAX_HELD_BYTES waited: no digest (so no resume state) for this read. */
  private abandoned = false;

  /** Adds the next bytes of the file and hashes everything before `committed`. */
  add(bytes: Uint8Array, committed: number): void {
    if (this.abandoned) return;
    let take = committed - this.hashed;
    while (take > 0 && this.held.length > 0) {
      const first = this.held[0];
      const used = Math.min(first.length, take);
      this.hash.update(first.subarray(0, used));
      if (used === first.length) this.held.shift();
      else this.held[0] = first.subarray(used);
      this.hashed += used;
      this.heldBytes -= used;
      take -= used;
    }
    const used = Math.max(0, Math.min(bytes.length, take));
    if (used > 0) this.hash.update(bytes.subarray(0, used));
    this.hashed += used;
    if (used < bytes.length) {
      this.heldBytes += bytes.length - used;
      // A huge uncommitted tail (a line near the record limit) is not copied a second time: the log
      // simply gets no resume state, and its next change is read from byte 0.
      if (this.heldBytes > MAX_HELD_BYTES) {
        this.abandoned = true;
        this.held = [];
        this.heldBytes = 0;
        return;
      }
      this.held.push(bytes.slice(used));
    }
  }

  /** The digest of [0, offset), when exactly that much is hashed. */
  digestAt(offset: number): string | undefined {
    return !this.abandoned && offset === this.hashed ? this.hash.copy().digest('hex') : undefined;
  }
}

/** Hashes the file's bytes [0, end) into `digest` (the check before a resumed read). */
async function hashPrefix(handle: OpenTranscript, digest: PrefixDigest, end: number): Promise<boolean> {
  return withReadBuffer(async (buffer) => {
    let position = 0;
    while (position < end) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - position), position);
      if (bytesRead === 0) return false;
      position += bytesRead;
      digest.add(buffer.subarray(0, bytesRead), position);
    }
    return true;
  });
}

type Resumed = { summarizer: SessionLogSummarizer; digest: PrefixDigest } | { refused: NonNullable<Extract<SummarizeOutcome, { kind: 'summary' }>['notResumed']> };

/**
 * A summarizer (and the digest of the bytes it covers) to continue from `task.saved`, when the
 * opened file is an append of `task.previous` whose bytes before the resume offset are unchanged.
 */
async function resume(task: SummarizeTask, handle: OpenTranscript, opened: FileIdentity, options: SummarizeOptions): Promise<Resumed | undefined> {
  if (task.saved === undefined) return undefined;
  if (task.previous === undefined || !isAppendOf(task.previous, opened)) return { refused: 'not-append' };
  let summarizer: SessionLogSummarizer;
  try {
    if (typeof task.saved.prefixSha256 !== 'string') throw new TypeError('no prefix digest');
    summarizer = SessionLogSummarizer.fromJSON(task.saved.summarizer, options);
  } catch {
    return { refused: 'unusable' }; // an unusable saved state only costs a full read
  }
  const offset = summarizer.resumeOffset;
  if (offset > opened.size) return { refused: 'unusable' };
  const digest = new PrefixDigest();
  const complete = await hashPrefix(handle, digest, offset);
  if (!complete || digest.digestAt(offset) !== task.saved.prefixSha256) return { refused: 'prefix-changed' };
  return { summarizer, digest };
}

/** Reads `file` from where `summarizer` stopped to the opened size; a decoding failure ends the read. */
async function readInto(
  handle: OpenTranscript,
  summarizer: SessionLogSummarizer,
  size: number,
  digest: PrefixDigest | undefined,
  signal?: AbortSignal,
): Promise<{ position: number; decodeError: unknown }> {
  let position = summarizer.consumedBytes;
  let decodeError: unknown;
  // The summarizer copies whatever it keeps of a push (so does the digest), so the buffer is reused.
  await withReadBuffer(async (buffer) => {
    while (position < size && decodeError === undefined) {
      const length = Math.min(buffer.length, size - position);
      const { bytesRead } = await handle.read(buffer, 0, length, position);
      if (bytesRead === 0) break; // the file shrank while being read; the next refresh starts over
      const bytes = buffer.subarray(0, bytesRead);
      try {
        // A few KB of zstd may decode to a GiB: the decoding yields, and stops when the index closes.
        if (!(await summarizer.pushAsync(bytes, signal))) throw new Error('the session index was closed');
      } catch (error) {
        if (signal?.aborted) throw error;
        decodeError = error;
      }
      digest?.add(bytes, summarizer.resumeOffset);
      position += bytesRead;
    }
  });
  return { position, decodeError };
}

/** How a summarization runs (not part of the task: the same task gives the same outcome either way). */
export interface SummarizeOptions {
  /**
   * Whether lines no summary depends on are checked by the byte skim instead of parsed (default
   * true; false folds every line, as the tests' oracle does).
   */
  skimLines?: boolean;
  /** Stops the read (the outcome is then `failed`): the index is being closed. */
  signal?: AbortSignal;
}

/**
 * Summarizes one transcript: opens it (never following a link), reads it from byte 0 or, for an
 * append whose earlier bytes are unchanged, from the saved state, and folds it. Never throws: a
 * failure to open or read is a `failed` outcome, damage in the bytes is part of the summary.
 */
export async function summarizeTranscriptFile(
  task: SummarizeTask,
  files: TranscriptFiles = nodeTranscriptFiles,
  options: SummarizeOptions = {},
): Promise<SummarizeOutcome> {
  let handle: OpenTranscript;
  try {
    if (task.encoding === 'zstd') await initZstdSupport();
    // Injected file access (tests observing reads) is used as given.
    handle = (files === nodeTranscriptFiles ? openTranscriptQuickly(task.file) : undefined) ?? (await files.open(task.file));
  } catch (error) {
    return { kind: 'failed', error: taskErrorOf(error) };
  }
  let reading: SessionLogSummarizer | undefined;
  try {
    const opened = fileIdentity(await handle.stat());
    const resumed = await resume(task, handle, opened, options);
    const continued = resumed !== undefined && 'summarizer' in resumed ? resumed : undefined;
    const keepState = task.keepState !== false;
    const summarizer = continued?.summarizer ?? new SessionLogSummarizer(task.encoding, options);
    reading = summarizer;
    // The digest is only worth computing when the state it guards is kept.
    const digest = continued?.digest ?? (keepState ? new PrefixDigest() : undefined);
    const { position, decodeError } = await readInto(handle, summarizer, opened.size, digest, options.signal);
    if (decodeError === undefined && !(await summarizer.prepareSummary(options.signal))) throw new Error('the session index was closed');
    const summary = interpret(summaryOf(summarizer, decodeError));
    const outcome: SummarizeOutcome = { kind: 'summary', opened, position, resumed: continued !== undefined, summary };
    if (resumed !== undefined && 'refused' in resumed) outcome.notResumed = resumed.refused;
    const prefixSha256 = digest?.digestAt(summarizer.resumeOffset);
    if (keepState && mayResume(summary) && prefixSha256 !== undefined) outcome.saved = { summarizer: summarizer.toJSON(), prefixSha256 };
    return outcome;
  } catch (error) {
    return { kind: 'failed', error: taskErrorOf(error) };
  } finally {
    reading?.releaseMemory();
    await handle.close().catch(() => undefined);
  }
}
