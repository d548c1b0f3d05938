/** The few file operations the store performs, read-only, injectable so tests can observe reads. */
import { closeSync, constants, fstatSync, lstatSync, openSync, promises as fsp, readFileSync, readSync, type Stats } from 'node:fs';
import { quickSync } from './quickSync';
import { READ_NONBLOCKING } from './regularFile';

/** An open transcript: metadata of the opened file and positioned reads. */
export interface OpenTranscript {
  stat(): Promise<Stats>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  readFile(): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Read-only file access used by the index and by `readSurface`. */
export interface TranscriptFiles {
  lstat(file: string): Promise<Stats>;
  /**
   * The same, synchronously: the idle sweep checks thousands of files this way (a few µs each,
   * against ~20 µs of CPU for a promise through the thread pool). Optional: without it the
   * sweep uses `lstat`.
   */
  lstatSync?(file: string): Stats;
  stat(file: string): Promise<Stats>;
  /** Opens for reading without following a symbolic link in the last component. */
  open(file: string): Promise<OpenTranscript>;
}

// O_NOFOLLOW is undefined on Windows, where links are rare and lstat already filtered them.
/**
 * How transcripts are opened: read-only, never following a link in the last component, and never
 * waiting (a FIFO put where a transcript was after its lookup opens at once and fails its reads).
 */
export const OPEN_FLAGS = READ_NONBLOCKING | (constants.O_NOFOLLOW ?? 0);

/** The real file system. */
export const nodeTranscriptFiles: TranscriptFiles = {
  lstat: (file) => fsp.lstat(file),
  lstatSync: (file) => lstatSync(file),
  stat: (file) => fsp.stat(file),
  async open(file) {
    const handle = await fsp.open(file, OPEN_FLAGS);
    return {
      stat: () => handle.stat(),
      read: (buffer, offset, length, position) => handle.read(buffer, offset, length, position),
      readFile: () => handle.readFile(),
      close: () => handle.close(),
    };
  },
};

/**
 * `nodeTranscriptFiles.open` with synchronous calls, for a reader that does nothing else meanwhile
 * (an index worker; the small batch a start summarizes in the main thread): a page-cached read of
 * a session log takes microseconds that way, against a thread-pool round trip per call (open,
 * stat, each read, close) through promises. Each call runs through `call` (the main thread times
 * them, see quickSync.ts). Throws what `open` rejects with.
 */
export function openTranscriptSync(file: string, call: <T>(sync: () => T) => T = (sync) => sync()): OpenTranscript {
  const fd = call(() => openSync(file, OPEN_FLAGS));
  let closed = false;
  const run = <T>(sync: () => T): Promise<T> => {
    try {
      return Promise.resolve(call(sync));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    stat: () => run(() => fstatSync(fd)),
    read: (buffer, offset, length, position) => run(() => ({ bytesRead: readSync(fd, buffer, offset, length, position) })),
    readFile: () => run(() => readFileSync(fd)),
    close: () =>
      run(() => {
        if (closed) return;
        closed = true;
        closeSync(fd);
      }),
  };
}

/** {@link openTranscriptSync} in the main thread, timed by quickSync: undefined when synchronous calls are not quick now. */
export function openTranscriptQuickly(file: string): OpenTranscript | undefined {
  return quickSync.quick ? openTranscriptSync(file, (sync) => quickSync.call(sync)) : undefined;
}

/**
 * What identifies one version of an append-only transcript: unchanged identity means unchanged
 * bytes. The change time is part of it because no program can set it: a rewrite that restores
 * the size and the modification time (`touch -r`, `rsync --inplace -t`) still changes it.
 */
export interface FileIdentity {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  dev: number;
}

/** The identity of a file from its stats. */
export function fileIdentity(stats: Stats): FileIdentity {
  return { size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino, dev: stats.dev };
}

/** Whether two identities name the same file version. */
export function sameIdentity(a: FileIdentity | undefined, b: FileIdentity): boolean {
  return a !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino && a.dev === b.dev;
}

/**
 * Whether `next` may be `previous` with bytes appended: the same file, longer. Only a guess: a
 * file rewritten in place and grown looks the same, so a resumed read also checks the bytes it
 * skips (see `summarizeFile.ts`).
 */
export function isAppendOf(previous: FileIdentity, next: FileIdentity): boolean {
  return previous.ino === next.ino && previous.dev === next.dev && next.size > previous.size;
}

/**
 * How recently a file must have been written to be taken for one being appended to: only such a
 * file keeps what an append resumes from. A file written longer ago (or after a pause) is read
 * from byte 0 at its next change, once, and is recent from then on.
 */
export const RECENT_WRITE_MS = 10 * 60_000;

/** Whether a file at `identity` was written within {@link RECENT_WRITE_MS} of `now` (a modification time ahead of `now` counts as recent). */
export function writtenRecently(identity: FileIdentity, now: number): boolean {
  return now - identity.mtimeMs < RECENT_WRITE_MS;
}
