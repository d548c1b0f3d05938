/**
 * One foreign session file read for its listing row: the bytes folded by the agent's skimming fold
 * (`lineFold.ts`), and for a plain JSONL file that grew, only the appended bytes, as the dsh index does:
 * the fold's state after the last complete line and a SHA-256 of the bytes before it are kept, and
 * an append of the same file (same inode and device, larger) whose bytes before that point are
 * unchanged continues from there; any other change (a rewrite in place that grows, shrinks or keeps
 * the size) is read from byte 0. A `.jsonl.zst` rollout is decoded and folded whole.
 */
import { createHash, type Hash } from 'node:crypto';
import { close, constants, open, read } from 'node:fs';
import type { StoredSessionSummary } from '../../resolver/sessionStore';
import { isAppendOf, type FileIdentity } from '../transcriptFiles';
import { MAX_FOREIGN_FILE_BYTES, type FormatAdapter } from '../formats/adapter';
import { decodeZstdBytes } from '../formats/compressed';
import { committedEnd, type LineFold } from '../formats/lineFold';

/** An open session file: positioned reads. */
export interface ForeignFileHandle {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  close(): Promise<void>;
}

/** How session files are opened (injectable: tests observe reads). */
export interface ForeignFiles {
  open(file: string): Promise<ForeignFileHandle>;
}

// Non-blocking: a FIFO put where a session file was (after its stat) cannot hang the open or a read.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The file system, through the thread pool (a read that misses the page cache never blocks the
 * event loop), with plain descriptors: a `FileHandle` costs more CPU per operation than the
 * operation itself on a small page-cached file, and a cold walk makes thousands.
 */
export const nodeForeignFiles: ForeignFiles = {
  open: (file) =>
    new Promise((resolve, reject) =>
      open(file, OPEN_FLAGS, (error, fd) => {
        if (error) return reject(error);
        resolve({
          read: (buffer, offset, length, position) =>
            new Promise((done, fail) => read(fd, buffer, offset, length, position, (readError, bytesRead) => (readError ? fail(readError) : done(bytesRead)))),
          close: () => new Promise((done, fail) => close(fd, (closeError) => (closeError ? fail(closeError) : done()))),
        });
      }),
    ),
};

/** What an append resumes from. */
export interface ForeignResume {
  /** The fold after the last complete line before `offset` (never folded further: clone it). */
  readonly fold: LineFold;
  readonly offset: number;
  /** SHA-256 (hex) of the file's bytes [0, offset). */
  readonly prefixSha256: string;
}

/** What a read found. */
export interface ForeignRead {
  summary: Omit<StoredSessionSummary, 'agent'> | undefined;
  /** Given when asked for (`keepState`) on a plain JSONL file. */
  resume?: ForeignResume;
  /** Whether the previous state was continued (only the appended bytes were folded). */
  resumed: boolean;
  /** Why a previous state given was not continued. */
  notResumed?: 'not-append' | 'prefix-changed';
}

/** Up to `length` bytes from `position` (fewer when the file is shorter now). */
async function readRange(handle: ForeignFileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const bytesRead = await handle.read(buffer, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === length ? buffer : buffer.subarray(0, got);
}

/**
 * Reads `file` (of `identity`, as stat'ed: at most that many bytes are read) for its listing row.
 * `previous`: the identity and resume state of the last read of the same file. Throws what the
 * file system throws (and `PlaintextTooLarge` for a `.zst` past the limit); damage is never thrown.
 */
export async function readForeignFile(
  format: FormatAdapter,
  file: string,
  identity: FileIdentity,
  previous: { identity: FileIdentity; resume?: ForeignResume } | undefined,
  options: { keepState: boolean; files?: ForeignFiles },
): Promise<ForeignRead> {
  const handle = await (options.files ?? nodeForeignFiles).open(file);
  try {
    if (file.endsWith('.zst')) {
      const plain = await decodeZstdBytes(await readRange(handle, 0, identity.size), MAX_FOREIGN_FILE_BYTES);
      const fold = format.newFold(file);
      fold.fold(plain, 0, plain.length);
      return { summary: format.finish(fold, file, identity.mtimeMs), resumed: false };
    }
    let fold: LineFold | undefined;
    let from = 0;
    let hash: Hash | undefined;
    let notResumed: ForeignRead['notResumed'];
    const saved = previous?.resume;
    if (saved !== undefined && previous !== undefined) {
      if (!isAppendOf(previous.identity, identity) || saved.offset > identity.size) {
        notResumed = 'not-append';
      } else {
        const prefix = await readRange(handle, 0, saved.offset);
        const prefixHash = createHash('sha256').update(prefix);
        if (prefix.length === saved.offset && prefixHash.copy().digest('hex') === saved.prefixSha256) {
          fold = saved.fold.clone();
          from = saved.offset;
          hash = prefixHash;
        } else {
          notResumed = 'prefix-changed';
        }
      }
    }
    fold ??= format.newFold(file);
    const bytes = await readRange(handle, from, identity.size - from);
    const committed = committedEnd(bytes, 0, bytes.length);
    fold.fold(bytes, 0, committed);
    let resume: ForeignResume | undefined;
    if (options.keepState) {
      hash ??= createHash('sha256');
      hash.update(bytes.subarray(0, committed));
      resume = { fold: fold.clone(), offset: from + committed, prefixSha256: hash.digest('hex') };
    }
    // A torn (or not yet terminated) last line counts for this summary, not for what resumes.
    const summaryFold = committed < bytes.length ? fold.clone() : fold;
    if (committed < bytes.length) summaryFold.fold(bytes, committed, bytes.length);
    return {
      summary: format.finish(summaryFold, file, identity.mtimeMs),
      ...(resume === undefined ? {} : { resume }),
      resumed: from > 0 || (saved !== undefined && notResumed === undefined),
      ...(notResumed === undefined ? {} : { notResumed }),
    };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
