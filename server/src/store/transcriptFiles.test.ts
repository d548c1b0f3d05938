import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeTranscriptFiles, openTranscriptQuickly, type OpenTranscript } from './transcriptFiles';

const dir = mkdtempSync(path.join(os.tmpdir(), 'dsh-transcript-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function contents(handle: OpenTranscript): Promise<{ size: number; chunks: string[]; whole: string }> {
  const size = (await handle.stat()).size;
  const chunks: string[] = [];
  const buffer = new Uint8Array(5);
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, bytesRead)).toString('utf8'));
    position += bytesRead;
  }
  const whole = Buffer.from(await handle.readFile()).toString('utf8');
  return { size, chunks, whole };
}

describe('openTranscriptQuickly', () => {
  it('reads what open reads: stat, positioned reads to the end, the whole file', async () => {
    const file = path.join(dir, 'log.jsonl');
    writeFileSync(file, '{"type":"session"}\n{"seq":0}\n');
    const quick = openTranscriptQuickly(file);
    expect(quick).toBeDefined();
    const viaPromises = await nodeTranscriptFiles.open(file);
    expect(await contents(quick!)).toEqual(await contents(viaPromises));
    expect((await contents(viaPromises)).chunks.join('')).toBe('{"type":"session"}\n{"seq":0}\n');
    await viaPromises.close();
    await quick!.close();
    await expect(quick!.close()).resolves.toBeUndefined(); // a second close is harmless
  });

  it('refuses what open refuses: a missing file, a link in the last component', async () => {
    const target = path.join(dir, 'target.jsonl');
    writeFileSync(target, '{}\n');
    const link = path.join(dir, 'link.jsonl');
    symlinkSync(target, link);
    for (const file of [path.join(dir, 'missing.jsonl'), link]) {
      let quickCode: unknown;
      try {
        openTranscriptQuickly(file);
      } catch (error) {
        quickCode = (error as NodeJS.ErrnoException).code;
      }
      const promiseCode = await nodeTranscriptFiles.open(file).then(
        () => 'opened',
        (error: NodeJS.ErrnoException) => error.code,
      );
      expect(quickCode, file).toBe(promiseCode);
      expect(quickCode).toMatch(/^E/);
    }
  });
});

describe('a FIFO where a transcript was (put there after its lookup)', () => {
  it('opens without waiting for a writer, and reading it fails instead of hanging', async () => {
    const fifo = path.join(dir, 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    for (const open of [() => nodeTranscriptFiles.open(fifo), async () => openTranscriptQuickly(fifo)!]) {
      const handle = await open();
      await expect(handle.read(new Uint8Array(16), 0, 16, 0)).rejects.toMatchObject({ code: 'ESPIPE' });
      await handle.close();
    }
  });
});
