import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readForeignRecords } from './engine/foreignRecords';
import { NotRegularFileError, openRegularFile, openRegularFileSync, readRegularFile } from './regularFile';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dsh-regular-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A FIFO nobody writes to: a blocking open of it would wait forever. */
function makeFifo(file: string): string {
  execFileSync('mkfifo', [file]);
  return file;
}

describe('regular files only', () => {
  const fifo = makeFifo(path.join(dir, 'pipe.jsonl'));
  const folder = path.join(dir, 'folder');
  mkdirSync(folder);
  const file = path.join(dir, 'file.jsonl');
  writeFileSync(file, '{"é":1}\n');

  it('refuses a FIFO at once, where a plain open would wait for a writer', async () => {
    await expect(openRegularFile(fifo)).rejects.toBeInstanceOf(NotRegularFileError);
    await expect(readRegularFile(fifo)).rejects.toBeInstanceOf(NotRegularFileError);
    expect(() => openRegularFileSync(fifo)).toThrow(NotRegularFileError);
    // Another agent's session file put there: a read failure, not a hang.
    await expect(readForeignRecords(fifo)).rejects.toBeInstanceOf(NotRegularFileError);
  });

  it('refuses a directory and passes on a missing file as the open failed', async () => {
    await expect(readRegularFile(folder)).rejects.toBeInstanceOf(NotRegularFileError);
    await expect(readRegularFile(path.join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads a regular file whole, as bytes or UTF-8, and opens it with a descriptor to close', async () => {
    expect(await readRegularFile(file, { encoding: 'utf8' })).toBe('{"é":1}\n');
    expect((await readRegularFile(file)).equals(readFileSync(file))).toBe(true);
    const fd = openRegularFileSync(file);
    expect(readFileSync(fd, 'utf8')).toBe('{"é":1}\n');
    closeSync(fd);
    await (await openRegularFile(file)).close();
  });
});
