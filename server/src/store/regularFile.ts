/**
 * Reading a file the server did not make and only reads (an index or code cache, a session file, an
 * agent's own index) when something may have put a FIFO, a socket or a device where it was: a plain
 * open of a FIFO waits for a writer forever (holding one of libuv's few threads, or the main thread
 * when synchronous), and a device such as /dev/urandom never ends. These open without blocking, then
 * check the descriptor: anything but a regular file is refused with {@link NotRegularFileError},
 * which callers take as they take a file that is not there.
 */
import { closeSync, constants, fstatSync, openSync, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Read-only and non-blocking (no effect on a regular file's reads); O_NONBLOCK is undefined on Windows. */
export const READ_NONBLOCKING = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** The path is there, but is no regular file. */
export class NotRegularFileError extends Error {
  override readonly name = 'NotRegularFileError' as const;
  constructor(readonly file: string) {
    super(`not a regular file: ${file}`);
  }
}

/** Opens `file` for reading when it is a regular file. */
export async function openRegularFile(file: string): Promise<FileHandle> {
  const handle = await fsp.open(file, READ_NONBLOCKING);
  try {
    if (!(await handle.stat()).isFile()) throw new NotRegularFileError(file);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** {@link openRegularFile}, synchronously: a descriptor the caller closes. */
export function openRegularFileSync(file: string): number {
  const fd = openSync(file, READ_NONBLOCKING);
  try {
    if (!fstatSync(fd).isFile()) throw new NotRegularFileError(file);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The whole of a regular file (as UTF-8 text with `encoding`); aborted between reads by `signal`. */
export async function readRegularFile(file: string, options: { encoding: 'utf8'; signal?: AbortSignal }): Promise<string>;
export async function readRegularFile(file: string, options?: { signal?: AbortSignal }): Promise<Buffer>;
export async function readRegularFile(file: string, options: { encoding?: 'utf8'; signal?: AbortSignal } = {}): Promise<string | Buffer> {
  const handle = await openRegularFile(file);
  try {
    const bytes = await handle.readFile(options.signal === undefined ? {} : { signal: options.signal });
    return options.encoding === 'utf8' ? bytes.toString('utf8') : bytes;
  } finally {
    await handle.close();
  }
}
