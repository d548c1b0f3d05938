/**
 * Big reads at once share one memory budget: three torn sparse logs (a header, then hundreds of
 * MB of NUL bytes without a newline) and three whose one NUL line ends, all read together while
 * the store indexes them (index workers and the main thread at once). Every such read may hold a
 * line up to the 64 MiB record limit; together they must stay within what one file may take.
 * Beside them another agent's hostile file is read (a Claude Code session whose middle line is 60 MB
 * of `{},`, put together whole before it is skipped as too dense): its big buffer draws on the same
 * budget, so the bound does not change.
 * Measured in a child process (its peak RSS from /proc/self/status), as large-log.test.ts does.
 */
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, ftruncateSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_RECORD_BYTES } from '../../server/src/store/log';
import { REPO_ROOT } from '../support/lspClient';
import { recordFigure, scaled } from './support/scale';
import { TemporaryDirectories, transcriptPath, treeHash, writeSession, type SessionSpec } from './support/stores';

const temporary = new TemporaryDirectories();
afterAll(() => temporary.removeAll());

/** Each log's size: 256 MiB by default, 2 GiB under DSH_LONG. */
const LOG_BYTES = scaled(256, 2048) * 1024 * 1024;
/** What one file may take (large-log.test.ts): the bound for all six reads together. */
const MEMORY_BOUND_BYTES = 2.5 * MAX_RECORD_BYTES;
const PROBE = path.join(REPO_ROOT, 'test', 'reliability', 'support', 'storeMemoryProbe.cjs');
const CWD = '/home/alice/proj';
const GOOD: SessionSpec = { id: 'good', cwd: CWD, createdAt: 10, turns: [{ prompt: 'hi', answer: 'hello', title: 'Good title' }] };
const TORN = ['torn-1', 'torn-2', 'torn-3'];
const ENDED = ['ended-1', 'ended-2', 'ended-3'];

/** A raw log of LOG_BYTES, sparse: its header, NUL bytes, and a final newline when `ended`. */
function sparseLog(root: string, id: string, ended: boolean): void {
  const file = transcriptPath(root, { id, cwd: CWD }, 'raw');
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, JSON.stringify({ type: 'session', version: 0, id, createdAt: 20, cwd: CWD, delegationDepth: 0 }) + '\n');
    ftruncateSync(fd, LOG_BYTES);
    if (ended) writeSync(fd, '\n', LOG_BYTES - 1);
  } finally {
    closeSync(fd);
  }
}

/** Another agent's session: a sound line, one of 60 MB of `{},` (too dense to parse), a sound line. */
function hostileForeignFile(dir: string): string {
  const file = path.join(dir, 'hostile.jsonl');
  const sound = (text: string) => JSON.stringify({ type: 'user', sessionId: 'hostile', message: { role: 'user', content: text } });
  writeFileSync(file, `${sound('before')}\n[${'{},'.repeat(20_000_000)}{}]\n${sound('after')}\n`);
  return file;
}

interface ProbeReport {
  foreign?: { lines: number[] };
  listed: Array<{ id: string; title?: string }>;
  reads: Record<string, { ok: boolean; reason?: string; events?: number; capturedThroughSeq?: number | null }>;
  growthKb: number;
}

function probe(root: string, foreignFile: string, ids: readonly string[]): Promise<ProbeReport> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [PROBE, root, `--foreign=${foreignFile}`, '--together', ...ids], { maxBuffer: 1024 * 1024, timeout: 300_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`probe failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as ProbeReport);
    });
  });
}

describe(`six ${LOG_BYTES / 1024 / 1024} MiB sparse logs and a hostile foreign file read at once`, () => {
  it('each answers as dsh does, and together they take no more memory than one file may', async () => {
    const scratch = temporary.make('concurrent-reads');
    const root = path.join(scratch, 'sessions');
    const foreignFile = hostileForeignFile(scratch);
    writeSession(root, GOOD, 'raw');
    for (const id of TORN) sparseLog(root, id, false);
    for (const id of ENDED) sparseLog(root, id, true);
    const before = treeHash(root);
    const report = await probe(root, foreignFile, [...TORN, ...ENDED, 'good']);
    // The dense line is skipped (it keeps its number); the sound lines around it are read.
    expect(report.foreign).toEqual({ lines: [0, 2] });
    expect(report.listed.map((row) => row.id).sort()).toEqual([...ENDED, 'good', ...TORN].sort());
    // Torn: the NUL run is a torn tail, the header alone is read. Ended: one line past the limit.
    for (const id of TORN) expect(report.reads[id]).toMatchObject({ ok: true, events: 0, capturedThroughSeq: null });
    for (const id of ENDED) expect(report.reads[id]).toMatchObject({ ok: false, reason: 'too-large' });
    expect(report.reads.good).toMatchObject({ ok: true, events: 2 });
    recordFigure('concurrent-reads', `six ${LOG_BYTES} B sparse logs and a hostile foreign file at once: peak RSS growth KiB`, report.growthKb);
    expect(report.growthKb * 1024).toBeLessThan(MEMORY_BOUND_BYTES);
    expect(treeHash(root)).toBe(before);
  });
});
