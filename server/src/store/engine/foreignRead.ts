/**
 * One foreign session file read for its listing row: the bytes folded by the agent's line fold
 * (`lineFold.ts`), and for a plain JSONL file that grew, only the appended bytes, as the dsh index does:
 * the fold's state after the last complete line and a SHA-256 of the bytes before it are kept, and
 * an append of the same file (same inode and device, larger) whose bytes before that point are
 * unchanged continues from there; any other change (a rewrite in place that grows, shrinks or keeps
 * the size) is read from byte 0. A `.jsonl.zst` rollout is decoded and folded whole. Every byte
 * goes through bounded lines (`foreignLines.ts`): memory never follows the file or a line past the limit.
 */
import { createHash, type Hash } from 'node:crypto';
import { close, constants, open, read } from 'node:fs';
import type { StoredSessionSummary } from '../../resolver/sessionStore';
import { isAppendOf, type FileIdentity } from '../transcriptFiles';
import { MAX_FOREIGN_FILE_BYTES, type FormatAdapter } from '../formats/adapter';
import { decodeZstdPieces } from '../formats/compressed';
import type { LineFold } from '../formats/lineFold';
import { BigBufferGrant, BoundedLines, LINE_PIECE_BYTES, takeLineBuffer } from './foreignLines';

/** An open session file: positioned reads. */
export interface ForeignFileHandle {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  close(): Promise<void>;
}

/** How session files are opened (injectable: tests observe reads). */
export interface ForeignFiles {
  open(file: string): Promise<ForeignFileHandle>;
}

const NEWLINE = 0x0a;

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

/** Up to `length` bytes from `position` (fewer when the file is shorter now), in one buffer: a compressed file only. */
export async function readRange(handle: ForeignFileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = takeLineBuffer(length);
  let got = 0;
  while (got < length) {
    const bytesRead = await handle.read(buffer, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === length ? buffer : buffer.subarray(0, got);
}

/**
 * Hands `length` bytes from `position` (fewer when the file is shorter now) to `onPiece`, at most
 * {@link LINE_PIECE_BYTES} at a time through one buffer (a piece is valid only during the call).
 */
export async function streamRange(handle: ForeignFileHandle, position: number, length: number, onPiece: (piece: Buffer) => void | Promise<void>): Promise<void> {
  if (length <= 0) return;
  const buffer = takeLineBuffer(Math.min(length, LINE_PIECE_BYTES));
  let done = 0;
  while (done < length) {
    const bytesRead = await handle.read(buffer, 0, Math.min(buffer.length, length - done), position + done);
    if (bytesRead === 0) return;
    await onPiece(buffer.subarray(0, bytesRead));
    done += bytesRead;
  }
}

/** A SHA-256 of the bytes streamed through it up to the last newline (the open line's bytes wait in a copy). */
class CommittedHash {
  private open: Hash | undefined;

  constructor(private committed: Hash) {}

  update(piece: Buffer): void {
    const last = piece.lastIndexOf(NEWLINE);
    if (last < 0) {
      (this.open ??= this.committed.copy()).update(piece);
      return;
    }
    this.committed = (this.open ?? this.committed).update(piece.subarray(0, last + 1));
    this.open = last + 1 < piece.length ? this.committed.copy().update(piece.subarray(last + 1)) : undefined;
  }

  digest(): string {
    return this.committed.digest('hex');
  }
}

/** Whether the file's first `length` bytes still hash to `sha256`; the running hash when they do. */
async function samePrefix(handle: ForeignFileHandle, length: number, sha256: string): Promise<Hash | undefined> {
  const hash = createHash('sha256');
  let got = 0;
  await streamRange(handle, 0, length, (piece) => {
    hash.update(piece);
    got += piece.length;
  });
  return got === length && hash.copy().digest('hex') === sha256 ? hash : undefined;
}

/**
 * A compressed file's listing facts: decoded (at most the read limit of plaintext, in pieces, with
 * a big-buffer grant), then split into bounded lines.
 */
async function readCompressed(format: FormatAdapter, file: string, handle: ForeignFileHandle, identity: FileIdentity, grant: BigBufferGrant): Promise<ForeignRead> {
  await grant.hold(true);
  const plain = await decodeZstdPieces(await readRange(handle, 0, identity.size), MAX_FOREIGN_FILE_BYTES);
  const fold = format.newFold(file);
  const lines = new BoundedLines({ lines: (bytes, start, end) => fold.fold(bytes, start, end) });
  for (const piece of plain) lines.push(piece);
  lines.end();
  return { summary: format.finish(fold, file, identity.mtimeMs), resumed: false };
}

/** Pushes `piece` into `lines`, holding a big-buffer grant while a line longer than a piece is put together. */
export async function pushWithGrant(lines: BoundedLines, piece: Buffer, grant: BigBufferGrant): Promise<void> {
  lines.push(piece);
  await grant.hold(lines.long);
}

/**
 * Reads `file` (of `identity`, as stat'ed: at most that many bytes are read) for its listing row,
 * streamed in bounded lines (`foreignLines.ts`: a line too big to hold is skipped, as damage).
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
  const grant = new BigBufferGrant();
  try {
    if (file.endsWith('.zst')) return await readCompressed(format, file, handle, identity, grant);
    let fold: LineFold | undefined;
    let from = 0;
    let hash: Hash | undefined;
    let notResumed: ForeignRead['notResumed'];
    const saved = previous?.resume;
    if (saved !== undefined && previous !== undefined) {
      if (!isAppendOf(previous.identity, identity) || saved.offset > identity.size) {
        notResumed = 'not-append';
      } else {
        hash = await samePrefix(handle, saved.offset, saved.prefixSha256);
        if (hash === undefined) notResumed = 'prefix-changed';
        else {
          fold = saved.fold.clone();
          from = saved.offset;
        }
      }
    }
    let target = fold ?? format.newFold(file);
    const committedFold = target;
    const lines = new BoundedLines({ lines: (bytes, start, end) => target.fold(bytes, start, end) });
    const committedHash = options.keepState ? new CommittedHash(hash ?? createHash('sha256')) : undefined;
    await streamRange(handle, from, identity.size - from, (piece) => {
      committedHash?.update(piece);
      return pushWithGrant(lines, piece, grant);
    });
    const resume = committedHash === undefined ? undefined : { fold: committedFold.clone(), offset: from + lines.committed, prefixSha256: committedHash.digest() };
    // A torn (or not yet terminated) last line counts for this summary, not for what resumes.
    if (lines.committed < lines.pushed) {
      target = committedFold.clone();
      lines.end();
    }
    return {
      summary: format.finish(target, file, identity.mtimeMs),
      ...(resume === undefined ? {} : { resume }),
      resumed: from > 0 || (saved !== undefined && notResumed === undefined),
      ...(notResumed === undefined ? {} : { notResumed }),
    };
  } finally {
    grant.release();
    await handle.close().catch(() => undefined);
  }
}
