import { appendFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { relativeLogPath } from './layout';
import { ev, headerLine, rawTranscript } from './log/testLogs';
import { nodeTranscriptFiles } from './transcriptFiles';
import { SummarizePool } from './summarize/pool';
import type { SummarizeTask } from './summarize/summarizeFile';
import { recordingFiles } from './testFiles';
import { RESUMABLE_TRANSCRIPTS, TranscriptIndex } from './transcriptIndex';

let base: string;
beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'dsh-index-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('TranscriptIndex resume states', () => {
  it('keeps them for the most recently written transcripts only; an older one that grows is re-read whole, a recent one resumed', async () => {
    const root = path.join(base, 'sessions');
    const count = 2 * RESUMABLE_TRANSCRIPTS + 2;
    const keys: string[] = [];
    const files: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = `s-${String(i).padStart(5, '0')}`;
      const key = relativeLogPath('/home/alice/proj', id, 'raw').split(path.sep).join('/');
      const file = path.join(root, ...key.split('/'));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, rawTranscript([headerLine(id), ev.turnStart(0), ev.user(1, `prompt ${i}`), ev.title(2, `title ${i}`), ev.turnEnd(3)]));
      // Distinct modification times: s-00000 is the oldest.
      utimesSync(file, 1_700_000_000 + i, 1_700_000_000 + i);
      keys.push(key);
      files.push(file);
    }
    const recorder = recordingFiles();
    const index = new TranscriptIndex(root, recorder.files, 4);
    for (const key of keys) {
      const [projectDir, sessionDir] = key.split('/');
      index.add({ key, projectDir, sessionDir, encoding: 'raw' });
    }
    // One at a time, oldest first, so the pruning order is known.
    for (const key of keys) expect(await index.refresh(key)).toBe('changed');
    const kept = keys.filter((key) => index.savedState(key) !== undefined);
    expect(kept.length).toBeGreaterThanOrEqual(RESUMABLE_TRANSCRIPTS);
    expect(kept.length).toBeLessThanOrEqual(2 * RESUMABLE_TRANSCRIPTS);
    const [oldest, newest] = [0, count - 1];
    expect(index.savedState(keys[oldest])).toBeUndefined();
    expect(index.savedState(keys[newest])).toBeDefined();
    expect(index.get(keys[oldest])?.summary).toMatchObject({ title: `title ${oldest}` });

    for (const i of [oldest, newest]) {
      const sizeBefore = (await nodeTranscriptFiles.lstat(files[i])).size;
      appendFileSync(files[i], rawTranscript([ev.turnStart(4, 2), ev.user(5, 'more'), ev.title(6, `renamed ${i}`), ev.turnEnd(7, 2)]));
      recorder.reads.length = 0;
      expect(await index.refresh(keys[i])).toBe('changed');
      expect(index.get(keys[i])?.summary).toMatchObject({ title: `renamed ${i}`, capturedThroughSeq: 7, eventCount: 8 });
      const firstRead = Math.min(...recorder.reads.map((r) => r.position));
      expect(firstRead).toBe(i === oldest ? 0 : sizeBefore);
      // Just read: now it is resumable whatever its age.
      expect(index.savedState(keys[i])).toBeDefined();
    }
  });

  it('once states were pruned, does not ask for the state of a transcript older than those kept; a newer one still gets it', async () => {
    const root = path.join(base, 'sessions');
    const tasks: SummarizeTask[] = [];
    class RecordingPool extends SummarizePool {
      override run(task: SummarizeTask) {
        tasks.push(task);
        return super.run(task);
      }
    }
    const index = new TranscriptIndex(root, nodeTranscriptFiles, 4, new RecordingPool({ size: 0 }));
    const write = (i: number, mtime: number): string => {
      const id = `t-${String(i).padStart(5, '0')}`;
      const key = relativeLogPath('/home/alice/proj', id, 'raw').split(path.sep).join('/');
      const file = path.join(root, ...key.split('/'));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, rawTranscript([headerLine(id), ev.turnStart(0), ev.user(1, `prompt ${i}`), ev.title(2, `title ${i}`), ev.turnEnd(3)]));
      utimesSync(file, mtime, mtime);
      const [projectDir, sessionDir] = key.split('/');
      index.add({ key, projectDir, sessionDir, encoding: 'raw' });
      return key;
    };
    for (let i = 0; i <= 2 * RESUMABLE_TRANSCRIPTS; i++) await index.refresh(write(i, 1_700_000_000 + i));
    expect(tasks.every((task) => task.keepState !== false)).toBe(true);
    const older = write(100_000, 1_600_000_000);
    const newer = write(100_001, 1_800_000_000);
    for (const key of [older, newer]) expect(await index.refresh(key)).toBe('changed');
    expect(tasks.slice(-2).map((task) => task.keepState)).toEqual([false, true]);
    expect(index.savedState(older)).toBeUndefined();
    expect(index.savedState(newer)).toBeDefined();
    // The summary itself is the same either way.
    expect(index.get(older)?.summary).toMatchObject({ title: 'title 100000', eventCount: 4 });
  });

  it('lists the keys of one scope and forgets deleted ones', () => {
    const index = new TranscriptIndex(base, nodeTranscriptFiles, 1);
    for (const key of ['p/a/session.jsonl', 'p/b/session.jsonl.zstd', 'q/a/session.jsonl']) {
      const [projectDir, sessionDir] = key.split('/');
      index.add({ key, projectDir, sessionDir, encoding: key.endsWith('.zstd') ? 'zstd' : 'raw' });
    }
    expect(index.keysIn({ kind: 'project', projectDir: 'p' }).sort()).toEqual(['p/a/session.jsonl', 'p/b/session.jsonl.zstd']);
    expect(index.keysIn({ kind: 'session', projectDir: 'q', sessionDir: 'a' })).toEqual(['q/a/session.jsonl']);
    expect(index.delete('p/a/session.jsonl')).toBe(true);
    expect(index.delete('p/a/session.jsonl')).toBe(false);
    expect(index.keysIn({ kind: 'root' }).sort()).toEqual(['p/b/session.jsonl.zstd', 'q/a/session.jsonl']);
  });
});
