import { appendFileSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { relativeLogPath } from './layout';
import { ev, headerLine, rawTranscript } from '../testing/testLogs';
import { fileIdentity, nodeTranscriptFiles, RECENT_WRITE_MS } from './transcriptFiles';
import { SummarizePool } from './summarize/pool';
import type { SummarizeTask } from './summarize/summarizeFile';
import { recordingFiles } from '../testing/testFiles';
import { RESUMABLE_TRANSCRIPTS, TranscriptIndex } from './transcriptIndex';
import { dshFormat } from './formats/dsh';

/** A modification time (seconds) written within the last RECENT_WRITE_MS, later for a larger `order`. */
function recently(order: number): number {
  return (Date.now() - RECENT_WRITE_MS / 2) / 1000 + order / 20;
}

/** Writes a one-turn raw transcript of session `id` under `root` (modification time `mtime` in seconds, if given). */
function writeTranscript(root: string, id: string, prompt: string, title: string, mtime?: number): { key: string; file: string } {
  const key = relativeLogPath('/home/alice/proj', id, 'raw').split(path.sep).join('/');
  const file = path.join(root, ...key.split('/'));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, rawTranscript([headerLine(id), ev.turnStart(0), ev.user(1, prompt), ev.title(2, title), ev.turnEnd(3)]));
  if (mtime !== undefined) utimesSync(file, mtime, mtime);
  return { key, file };
}

/** Makes the raw transcript at `key` known to `index`; returns the key. */
function addTo(index: TranscriptIndex, key: string): string {
  const [projectDir, sessionDir] = key.split('/');
  index.add({ key, projectDir, sessionDir });
  return key;
}

/** An index over `root` summarizing inline, and the tasks its pool was given, in order. */
function recordingIndex(root: string, concurrency: number): { index: TranscriptIndex; tasks: SummarizeTask[] } {
  const tasks: SummarizeTask[] = [];
  class RecordingPool extends SummarizePool {
    override run(task: SummarizeTask) {
      tasks.push(task);
      return super.run(task);
    }
  }
  return { index: new TranscriptIndex(root, nodeTranscriptFiles, concurrency, dshFormat(new RecordingPool({ size: 0 }), nodeTranscriptFiles)), tasks };
}

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
      // Distinct modification times, all recent (see the test below): s-00000 is the oldest.
      const { key, file } = writeTranscript(root, `s-${String(i).padStart(5, '0')}`, `prompt ${i}`, `title ${i}`, recently(i));
      keys.push(key);
      files.push(file);
    }
    const recorder = recordingFiles();
    const index = new TranscriptIndex(root, recorder.files, 4);
    for (const key of keys) addTo(index, key);
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
      const sizeAfter = (await nodeTranscriptFiles.lstat(files[i])).size;
      // The recent one checks the bytes it skips (one read of [0, sizeBefore)), then reads the append.
      const expected = i === oldest ? [[0, sizeAfter]] : [[0, sizeBefore], [sizeBefore, sizeAfter - sizeBefore]];
      expect(recorder.reads.map((r) => [r.position, r.length])).toEqual(expected);
      // Just read: now it is resumable whatever its age.
      expect(index.savedState(keys[i])).toBeDefined();
    }
  });

  it('once states were pruned, does not ask for the state of a transcript older than those kept; a newer one still gets it', async () => {
    const root = path.join(base, 'sessions');
    const { index, tasks } = recordingIndex(root, 4);
    const write = (i: number, mtime: number): string =>
      addTo(index, writeTranscript(root, `t-${String(i).padStart(5, '0')}`, `prompt ${i}`, `title ${i}`, mtime).key);
    for (let i = 0; i <= 2 * RESUMABLE_TRANSCRIPTS; i++) await index.refresh(write(i, recently(i)));
    expect(tasks.every((task) => task.keepState !== false)).toBe(true);
    const older = write(100_000, recently(-1));
    const newer = write(100_001, recently(2 * RESUMABLE_TRANSCRIPTS + 1));
    for (const key of [older, newer]) expect(await index.refresh(key)).toBe('changed');
    expect(tasks.slice(-2).map((task) => task.keepState)).toEqual([false, true]);
    expect(index.savedState(older)).toBeUndefined();
    expect(index.savedState(newer)).toBeDefined();
    // The summary itself is the same either way.
    expect(index.get(older)?.summary).toMatchObject({ title: 'title 100000', eventCount: 4 });
  });

  it('asks no state of a transcript last written longer ago than RECENT_WRITE_MS; once appended to, it keeps one', async () => {
    const root = path.join(base, 'sessions');
    const { index, tasks } = recordingIndex(root, 1);
    const lastWritten = (Date.now() - RECENT_WRITE_MS - 60_000) / 1000;
    const old = writeTranscript(root, 'old-1', 'prompt', 'title old-1', lastWritten);
    const oldFile = old.file;
    const keys = [addTo(index, old.key), addTo(index, writeTranscript(root, 'new-1', 'prompt', 'title new-1').key)];
    for (const key of keys) expect(await index.refresh(key)).toBe('changed');
    expect(tasks.map((task) => task.keepState)).toEqual([false, true]);
    expect(index.savedState(keys[0])).toBeUndefined();
    expect(index.savedState(keys[1])).toBeDefined();
    expect(index.get(keys[0])?.summary).toMatchObject({ title: 'title old-1', eventCount: 4 });
    // dsh writes to it again: read from byte 0 (there is nothing to resume), and resumable from then on.
    appendFileSync(oldFile, rawTranscript([ev.turnStart(4, 2), ev.user(5, 'more'), ev.turnEnd(6, 2)]));
    expect(await index.refresh(keys[0])).toBe('changed');
    expect(tasks[2]).toMatchObject({ saved: undefined, keepState: true });
    expect(index.savedState(keys[0])).toBeDefined();
    expect(index.get(keys[0])?.summary).toMatchObject({ title: 'title old-1', eventCount: 7 });
  });

  it('re-reads from byte 0 a transcript rewritten in place (same file, grown, shrunk, same size and time)', async () => {
    const root = path.join(base, 'sessions');
    const key = relativeLogPath('/home/alice/proj', 'rw-1', 'raw').split(path.sep).join('/');
    const file = path.join(root, ...key.split('/'));
    mkdirSync(path.dirname(file), { recursive: true });
    const turn = (title: string, seq = 0) => [ev.turnStart(seq), ev.user(seq + 1, 'prompt'), ev.title(seq + 2, title), ev.turnEnd(seq + 3)];
    writeFileSync(file, rawTranscript([headerLine('rw-1'), ...turn('First')]));
    const index = new TranscriptIndex(root, nodeTranscriptFiles, 1);
    const [projectDir, sessionDir] = key.split('/');
    index.add({ key, projectDir, sessionDir });
    expect(await index.refresh(key)).toBe('changed');
    expect(index.get(key)?.summary?.title).toBe('First');
    // Grown: the title inside changed and a turn was added; same inode, so it looks like an append.
    const ino = (await nodeTranscriptFiles.lstat(file)).ino;
    writeFileSync(file, rawTranscript([headerLine('rw-1'), ...turn('Fixed'), ...turn('Fixed', 4)]));
    expect((await nodeTranscriptFiles.lstat(file)).ino).toBe(ino);
    expect(await index.refresh(key)).toBe('changed');
    expect(index.get(key)?.summary).toMatchObject({ title: 'Fixed', eventCount: 8 });
    // A true append after that still resumes and still sees the new title.
    appendFileSync(file, rawTranscript(turn('Appended', 8)));
    expect(await index.refresh(key)).toBe('changed');
    expect(index.get(key)?.summary).toMatchObject({ title: 'Appended', eventCount: 12 });
    // Shrunk: fewer turns, another title.
    writeFileSync(file, rawTranscript([headerLine('rw-1'), ...turn('Short')]));
    expect(await index.refresh(key)).toBe('changed');
    expect(index.get(key)?.summary).toMatchObject({ title: 'Short', eventCount: 4 });
    // Same size and modification time, other bytes: the change time tells.
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    expect(await index.refresh(key)).toBe('changed');
    const before = await nodeTranscriptFiles.lstat(file);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"Short"', '"Other"'));
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const after = await nodeTranscriptFiles.lstat(file);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    expect(await index.refresh(key)).toBe('changed');
    expect(index.get(key)?.summary?.title).toBe('Other');
  });

  it('never keeps a read failure: the next refresh reads the file again, and succeeds once it can', async () => {
    const root = path.join(base, 'sessions');
    const key = relativeLogPath('/home/alice/proj', 'locked-1', 'raw').split(path.sep).join('/');
    const file = path.join(root, ...key.split('/'));
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, rawTranscript([headerLine('locked-1'), ev.turnStart(0), ev.user(1, 'p'), ev.title(2, 'Readable now'), ev.turnEnd(3)]));
    // Permission denied at open, as for a mode-000 file read by its non-owner (tests may run as root).
    let locked = true;
    let opens = 0;
    const files = {
      ...nodeTranscriptFiles,
      async open(target: string) {
        opens++;
        if (locked) throw Object.assign(new Error(`EACCES: permission denied, open '${target}'`), { code: 'EACCES' });
        return nodeTranscriptFiles.open(target);
      },
    };
    let tasks = 0;
    class CountingPool extends SummarizePool {
      override run(task: SummarizeTask) {
        tasks++;
        return super.run(task);
      }
    }
    const index = new TranscriptIndex(root, files, 1, dshFormat(new CountingPool({ size: 0, files }), files));
    const [projectDir, sessionDir] = key.split('/');
    index.add({ key, projectDir, sessionDir });
    expect(await index.refresh(key)).toBe('changed');
    expect(index.get(key)).toMatchObject({ readFailed: true, summary: { headerProblem: expect.stringContaining('EACCES') } });
    expect(index.failedKeys()).toEqual([key]);
    // Still failing: tried again (the file is unchanged), nothing new to tell, and no summarizing
    // task for it (the retry opens the file first).
    expect(await index.refresh(key)).toBe('unchanged');
    expect([opens, tasks]).toEqual([2, 1]);
    locked = false;
    expect(await index.refresh(key)).toBe('changed');
    expect([opens, tasks]).toEqual([4, 2]);
    expect(index.get(key)?.readFailed).toBeUndefined();
    expect(index.get(key)?.summary).toMatchObject({ title: 'Readable now' });
    expect(index.failedKeys()).toEqual([]);
    expect(await index.refresh(key)).toBe('unchanged');
    expect(opens).toBe(4);
  });

  it('lists the keys of one scope and forgets deleted ones', () => {
    const index = new TranscriptIndex(base, nodeTranscriptFiles, 1);
    for (const key of ['p/a/session.jsonl', 'p/b/session.jsonl.zstd', 'q/a/session.jsonl']) {
      const [projectDir, sessionDir] = key.split('/');
      index.add({ key, projectDir, sessionDir });
    }
    expect(index.keysIn({ kind: 'dir', dir: 'p' }).sort()).toEqual(['p/a/session.jsonl', 'p/b/session.jsonl.zstd']);
    expect(index.keysIn({ kind: 'dir', dir: 'q/a' })).toEqual(['q/a/session.jsonl']);
    expect(index.delete('p/a/session.jsonl')).toBe(true);
    expect(index.delete('p/a/session.jsonl')).toBe(false);
    expect(index.keysIn({ kind: 'root' }).sort()).toEqual(['p/b/session.jsonl.zstd', 'q/a/session.jsonl']);
  });
});

describe('TranscriptIndex.unchanged', () => {
  it('is true only for a summarized, readable transcript the lookup saw at its summarized identity, and then a refresh reads nothing', async () => {
    const root = path.join(base, 'sessions');
    const { key, file } = writeTranscript(root, 'u-1', 'hello', 'First');
    const { index, tasks } = recordingIndex(root, 2);
    addTo(index, key);
    const seenFirst = fileIdentity(lstatSync(file));
    expect(index.unchanged(key, seenFirst)).toBe(false); // never summarized
    expect(await index.refresh(key, seenFirst)).toBe('changed');
    expect(tasks).toHaveLength(1);

    expect(index.unchanged(key, seenFirst)).toBe(true);
    expect(index.unchanged(key, undefined)).toBe(false); // not looked up
    expect(index.unchanged('nope/none/session.jsonl', seenFirst)).toBe(false);
    for (const field of ['size', 'mtimeMs', 'ctimeMs', 'ino', 'dev'] as const) {
      expect(index.unchanged(key, { ...seenFirst, [field]: seenFirst[field] + 1 })).toBe(false);
    }
    expect(await index.refresh(key, seenFirst)).toBe('unchanged');
    expect(tasks).toHaveLength(1);

    // While a refresh runs, it is not settled: a refresh asked meanwhile waits for it.
    appendFileSync(file, `${JSON.stringify({ type: 'turn/start', seq: 4, time: 1, data: { turn: 2 } })}\n`);
    const seenAfter = fileIdentity(lstatSync(file));
    const running = index.refresh(key, seenAfter);
    expect(index.unchanged(key, seenFirst)).toBe(false);
    expect(await running).toBe('changed');
    expect(index.unchanged(key, seenAfter)).toBe(true);
    expect(index.unchanged(key, seenFirst)).toBe(false);
  });
});
