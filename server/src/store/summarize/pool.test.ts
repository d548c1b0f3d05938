import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findProgram, fixtureStore, REPO_ROOT } from '../../../../test/support/conformance';
import { INLINE_INDEX_BYTES } from '../disk/tuning';
import { relativeLogPath } from '../layout';
import { DEMO_1, DEMO_2, concatBytes, ev, headerLine, rawTranscript, zstdFrame, zstdTranscript } from '../../testing/testLogs';
import { nodeTranscriptFiles } from '../transcriptFiles';
import { TranscriptIndex } from '../transcriptIndex';
import type { TranscriptSummary } from '../transcriptSummary';
import { dshFormat } from '../formats/dsh';
import { SummarizePool } from './pool';
import { mayResume, summarizeTranscriptFile, type SummarizeOutcome, type SummarizeTask } from './summarizeFile';

const zstdCli = findProgram('zstd');
const dir = mkdtempSync(path.join(os.tmpdir(), 'dsh-summarize-pool-'));
const built = path.join(dir, 'built');
const workerFile = path.join(built, 'summarizeWorker.js');
/** The worker double that crashes or hangs on the tasks that ask it to (server/src/testing/misbehavingWorker.ts). */
const misbehavingWorkerFile = path.join(built, 'misbehavingWorker.js');
const pools: SummarizePool[] = [];

/** The worker and the pool as the server ships them (JavaScript), built from these sources. */
beforeAll(async () => {
  const here = path.join(REPO_ROOT, 'server', 'src', 'store', 'summarize');
  await build({
    entryPoints: {
      summarizeWorker: path.join(here, 'summarizeWorker.ts'),
      pool: path.join(here, 'pool.ts'),
      misbehavingWorker: path.join(REPO_ROOT, 'server', 'src', 'testing', 'misbehavingWorker.ts'),
    },
    outdir: built,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'warning',
    alias: { '@dsh-session-ls/shared': path.join(REPO_ROOT, 'shared', 'src', 'index.ts') },
  });
  // libzstd's wasm beside the bundle, as client-vscode/esbuild.mjs ships it.
  copyFileSync(path.join(path.dirname(require.resolve('@bokuweb/zstd-wasm')), 'zstd.wasm'), path.join(built, 'zstd.wasm'));
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.dispose()));
  rmSync(dir, { recursive: true, force: true });
});

/** Polls `condition` until it holds, failing after a generous deadline (no timing is asserted). */
async function until(condition: () => boolean, deadlineMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > deadlineMs) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function pool(options: ConstructorParameters<typeof SummarizePool>[0] = {}): SummarizePool {
  const created = new SummarizePool({ size: 2, workerFile, ...options });
  pools.push(created);
  return created;
}

let fileCount = 0;
function writeLog(bytes: Uint8Array | string): string {
  const file = path.join(dir, `log-${fileCount++}`);
  writeFileSync(file, bytes);
  return file;
}

/** The task that continues `outcome`, as the index builds it. */
function continuation(task: SummarizeTask, outcome: SummarizeOutcome): SummarizeTask {
  if (outcome.kind !== 'summary') return task;
  const saved = mayResume(outcome.summary) ? outcome.saved : undefined;
  return { ...task, previous: { ...outcome.opened, size: outcome.position }, saved };
}

/** Every transcript of a fixture store. */
function fixtureTasks(encoding: 'raw' | 'zstd'): SummarizeTask[] {
  const root = fixtureStore(encoding);
  const name = encoding === 'raw' ? 'session.jsonl' : 'session.jsonl.zstd';
  return readdirSync(root).flatMap((project) =>
    readdirSync(path.join(root, project)).map((session) => ({ file: path.join(root, project, session, name), encoding })),
  );
}

describe('the pool on the fixture store', () => {
  it('summarizes every transcript, raw and zstd, exactly as inline', async () => {
    const workers = pool();
    const tasks = [...fixtureTasks('raw'), ...fixtureTasks('zstd')];
    expect(tasks.length).toBeGreaterThanOrEqual(22);
    const pooled = await Promise.all(tasks.map((task) => workers.run(task)));
    const inline = await Promise.all(tasks.map((task) => summarizeTranscriptFile(task)));
    expect(workers.probe().runsInline).toBe(false);
    expect(pooled).toEqual(inline);
    expect(pooled.filter((outcome) => outcome.kind === 'summary' && outcome.summary.header !== undefined).length).toBeGreaterThan(tasks.length / 2);
  });
});

describe('the pool on damaged, torn and appended transcripts', () => {
  const enc = new TextEncoder();
  const titled = [...DEMO_2, ev.title(17, 'Renamed again')];

  it('summarizes them exactly as inline', async () => {
    const cases: SummarizeTask[] = [
      { file: writeLog(rawTranscript(DEMO_1)), encoding: 'raw' },
      { file: writeLog(concatBytes([rawTranscript(DEMO_2), enc.encode('{"type":"session/ti')])), encoding: 'raw' },
      { file: writeLog(concatBytes([rawTranscript(DEMO_2.slice(0, 4)), enc.encode('{"type":\n'), rawTranscript(DEMO_2.slice(4))])), encoding: 'raw' },
      { file: writeLog(headerLine('half').slice(0, 25)), encoding: 'raw' },
      { file: writeLog('{"type":"nonsense"}\n'), encoding: 'raw' },
      { file: writeLog(''), encoding: 'raw' },
      { file: writeLog('not zstd at all'), encoding: 'zstd' },
      { file: path.join(dir, 'missing'), encoding: 'raw' },
    ];
    if (zstdCli.found) {
      const frames = zstdTranscript([DEMO_2.slice(0, 1), DEMO_2.slice(1, 8), DEMO_2.slice(8)]);
      const flipped = frames.slice();
      flipped[frames.length - 6] ^= 0xff; // inside the last frame: a checksum or content failure
      cases.push(
        { file: writeLog(frames), encoding: 'zstd' },
        { file: writeLog(frames.subarray(0, frames.length - 9)), encoding: 'zstd' },
        { file: writeLog(flipped), encoding: 'zstd' },
      );
    }
    const workers = pool();
    const pooled = await Promise.all(cases.map((task) => workers.run(task)));
    const inline = await Promise.all(cases.map((task) => summarizeTranscriptFile(task)));
    expect(pooled).toEqual(inline);
    expect(pooled.some((outcome) => outcome.kind === 'summary' && outcome.summary.bodyError !== undefined)).toBe(true);
    expect(pooled.some((outcome) => outcome.kind === 'failed')).toBe(true);
  });

  it('resumes appends from the state a worker saved, as inline does', async () => {
    const workers = pool();
    const parts = zstdCli.found ? (['raw', 'zstd'] as const) : (['raw'] as const);
    for (const encoding of parts) {
      const whole = encoding === 'raw' ? rawTranscript(titled) : concatBytes([zstdFrame(titled.slice(0, 1)), zstdFrame(titled.slice(1, 9)), zstdFrame(titled.slice(9))]);
      const cuts = [whole.length >> 2, whole.length >> 1, whole.length - 7, whole.length];
      const file = writeLog(whole.subarray(0, cuts[0]));
      let pooledTask: SummarizeTask = { file, encoding };
      let inlineTask: SummarizeTask = { file, encoding };
      let previousCut = cuts[0];
      for (const cut of cuts.slice(1)) {
        const pooled = await workers.run(pooledTask);
        const inline = await summarizeTranscriptFile(inlineTask);
        expect(pooled).toEqual(inline);
        pooledTask = continuation(pooledTask, pooled);
        inlineTask = continuation(inlineTask, inline);
        appendFileSync(file, whole.subarray(previousCut, cut));
        previousCut = cut;
      }
      const last = await workers.run(pooledTask);
      expect(last).toEqual(await summarizeTranscriptFile(inlineTask));
      expect(last).toMatchObject({ kind: 'summary', resumed: true, summary: { title: 'Renamed again' } });
    }
  });
});

describe('workers start only when the work pays for them (INLINE_INDEX_BYTES)', () => {
  /** A store of `sessions` raw logs of about `bytesEach` bytes each; returns its root and keys. */
  function writeStore(name: string, sessions: number, bytesEach: number): { root: string; keys: string[] } {
    const root = path.join(dir, name);
    const keys: string[] = [];
    for (let i = 0; i < sessions; i++) {
      const id = `${name}-${i}`;
      const key = relativeLogPath('/home/alice/proj', id, 'raw').split(path.sep).join('/');
      const file = path.join(root, ...key.split('/'));
      const message = `words of session ${i} `.repeat(Math.max(1, Math.floor(bytesEach / 22)));
      const lines = [headerLine(id), ev.turnStart(0), ev.user(1, message), ev.title(2, `title ${i}`), ev.turnEnd(3)];
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, rawTranscript(lines));
      keys.push(key);
    }
    return { root, keys };
  }

  /** Indexes every key of `store` through `summarizer` (the index's own path: lstat, then the pool). */
  async function index(store: { root: string; keys: string[] }, summarizer: SummarizePool): Promise<(TranscriptSummary | undefined)[]> {
    const built = new TranscriptIndex(store.root, nodeTranscriptFiles, 16, dshFormat(summarizer, nodeTranscriptFiles));
    for (const key of store.keys) {
      const [projectDir, sessionDir] = key.split('/');
      built.add({ key, projectDir, sessionDir });
    }
    expect(await Promise.all(store.keys.map((key) => built.refresh(key)))).toEqual(store.keys.map(() => 'changed'));
    return store.keys.map((key) => built.get(key)?.summary);
  }

  it('indexes a small store in the main thread, without starting a worker', async () => {
    const store = writeStore('small', 20, 8_000);
    const workers = pool({ inlineBytes: INLINE_INDEX_BYTES });
    const summaries = await index(store, workers);
    expect(workers.probe().workersStarted).toBe(0);
    expect(summaries).toEqual(await index(store, pool({ size: 0 })));
    expect(summaries.map((summary) => summary?.title)).toEqual(store.keys.map((_, i) => `title ${i}`));
  });

  it('indexes a large store on the workers once the inline budget is spent, with the same summaries', async () => {
    const store = writeStore('large', 24, Math.ceil((2 * INLINE_INDEX_BYTES) / 24));
    const workers = pool({ inlineBytes: INLINE_INDEX_BYTES });
    const summaries = await index(store, workers);
    expect(workers.probe().workersStarted).toBeGreaterThan(0);
    expect(summaries).toEqual(await index(store, pool({ size: 0 })));
    expect(summaries.map((summary) => summary?.title)).toEqual(store.keys.map((_, i) => `title ${i}`));
  });

  it('hands one transcript larger than the budget to a worker at once', async () => {
    const store = writeStore('one-big', 1, 20_000);
    const workers = pool({ inlineBytes: 10_000 });
    const [summary] = await index(store, workers);
    expect(workers.probe().workersStarted).toBe(1);
    expect(summary?.title).toBe('title 0');
  });
});

describe('pool lifecycle', () => {
  const good = (): SummarizeTask => ({ file: writeLog(rawTranscript(DEMO_1)), encoding: 'raw' });
  /** A good log whose file name makes the misbehaving worker exit with `code` or hang when it gets to it. */
  const misbehaving = (how: `exit-${number}` | 'hang'): SummarizeTask => {
    const file = path.join(dir, `log-${fileCount++}.${how}`);
    writeFileSync(file, rawTranscript(DEMO_1));
    return { file, encoding: 'raw' };
  };

  it('fails only the task whose worker crashed, and keeps working', async () => {
    const workers = pool({ size: 1, tasksPerWorker: 3, workerFile: misbehavingWorkerFile });
    const [before, crashed, after] = await Promise.all([workers.run(good()), workers.run(misbehaving('exit-7')), workers.run(good())]);
    expect(before).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(crashed).toMatchObject({ kind: 'failed', error: { reason: 'io' } });
    expect(crashed.kind === 'failed' && crashed.error.message).toMatch(/index worker stopped while reading .*exit code 7/);
    expect(after).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(await workers.run(good())).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(workers.probe().runsInline).toBe(false);
    expect(workers.probe().workers).toBe(1);
  });

  it('replaces a hung worker: only the task it hung on fails', async () => {
    // Generous for the queued task (a fresh worker must start and read a small log), and what a hang costs this test.
    const workers = pool({ size: 1, tasksPerWorker: 2, taskTimeoutMs: 3000, workerFile: misbehavingWorkerFile });
    const [hung, queued] = await Promise.all([workers.run(misbehaving('hang')), workers.run(good())]);
    expect(hung.kind === 'failed' && hung.error.message).toMatch(/index worker stopped while reading .*no answer after 3000 ms/);
    expect(queued).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(workers.probe().workers).toBe(1);
  });

  it('dispose stops every worker and fails what was unfinished', async () => {
    const workers = pool({ size: 2 });
    expect(await workers.run(good())).toMatchObject({ kind: 'summary' });
    const unfinished = Array.from({ length: 20 }, () => workers.run(good()));
    expect(workers.probe().workers).toBe(2);
    const exits = await workers.dispose();
    expect(exits).toHaveLength(2);
    expect(workers.probe().workers).toBe(0);
    const outcomes = await Promise.all(unfinished);
    // Nothing could finish: dispose ran before the event loop delivered any answer.
    for (const outcome of outcomes) expect(outcome).toEqual({ kind: 'failed', error: { reason: 'io', message: 'the session index was closed' } });
    expect(await workers.run(good())).toMatchObject({ kind: 'failed', error: { message: 'the session index was closed' } });
  });

  it('runs inline when the worker file is missing, and logs that once', async () => {
    const messages: string[] = [];
    const first = pool({ workerFile: path.join(dir, 'no-such-worker.js'), log: (message) => messages.push(message) });
    const second = pool({ workerFile: path.join(dir, 'no-such-worker.js'), log: (message) => messages.push(message) });
    expect(first.probe().runsInline && second.probe().runsInline).toBe(true);
    expect(messages.length).toBeLessThanOrEqual(1);
    expect(await first.run(good())).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(first.probe().workers).toBe(0);
  });

  it('falls back to inline when workers keep failing to start, losing no task', async () => {
    const broken = path.join(dir, 'broken-worker.js');
    writeFileSync(broken, 'throw new Error("cannot load");\n');
    const messages: string[] = [];
    const workers = pool({ workerFile: broken, log: (message) => messages.push(message) });
    const outcomes = await Promise.all([workers.run(good()), workers.run(good()), workers.run(good())]);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(workers.probe().runsInline).toBe(true);
    expect(messages.join('\n')).toMatch(/cannot load.*main thread/);
  });

  it('ends idle workers and starts one again on demand, with the same answers', async () => {
    const workers = pool({ idleMs: 20 });
    const tasks = [good(), { file: writeLog(rawTranscript(DEMO_1)), encoding: 'raw' as const }];
    const first = await Promise.all(tasks.map((task) => workers.run(task)));
    expect(workers.probe().workersStarted).toBeGreaterThan(0);
    await until(() => workers.probe().workers === 0);
    const startedBefore = workers.probe().workersStarted;
    const again = await Promise.all(tasks.map((task) => workers.run(task)));
    expect(again).toEqual(first);
    expect(again).toEqual(await Promise.all(tasks.map((task) => summarizeTranscriptFile(task))));
    expect(workers.probe().runsInline).toBe(false);
    expect(workers.probe().workersStarted).toBeGreaterThan(startedBefore);
    await until(() => workers.probe().workers === 0);
  });

  it('retireIdle ends the idle workers at once and the busy ones when done; the next task starts one again', async () => {
    const workers = pool({ idleMs: 60_000 });
    const tasks = [good(), { file: writeLog(rawTranscript(DEMO_1)), encoding: 'raw' as const }];
    const first = await Promise.all(tasks.map((task) => workers.run(task)));
    expect(workers.probe().workers).toBeGreaterThan(0);
    workers.retireIdle();
    expect(workers.probe().workers).toBe(0);
    // A busy worker finishes its task, then ends without waiting for the idle delay.
    const running = workers.run(tasks[0]!);
    expect(workers.probe().workers).toBe(1);
    workers.retireIdle();
    expect(await running).toEqual(first[0]);
    expect(workers.probe().workers).toBe(0);
    const startedBefore = workers.probe().workersStarted;
    expect(await Promise.all(tasks.map((task) => workers.run(task)))).toEqual(first);
    expect(workers.probe().workersStarted).toBeGreaterThan(startedBefore);
    expect(workers.probe().workers).toBeGreaterThan(0);
  });

  it('keeps a worker that has work: an idle delay longer than the gaps between tasks never ends it mid-stream', async () => {
    const workers = pool({ size: 1, idleMs: 60_000 });
    for (let i = 0; i < 5; i++) expect(await workers.run(good())).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(workers.probe().workersStarted).toBe(1);
    expect(workers.probe().workers).toBe(1);
  });

  it('runs inline with size 0', async () => {
    const workers = pool({ size: 0 });
    expect(workers.probe().runsInline).toBe(true);
    expect(await workers.run(good())).toMatchObject({ kind: 'summary', summary: { title: 'Say hi' } });
    expect(workers.probe().workers).toBe(0);
  });

  it('never keeps the process alive, nor writes to its stdout: a process that used the pool and did not dispose it exits', () => {
    // A worker whose code writes to stdout, which in stdio mode carries the protocol.
    const chatty = path.join(built, 'chattyWorker.js');
    writeFileSync(chatty, `require('./summarizeWorker.js');\nprocess.stdout.write('stray output\\n');\n`);
    const script = path.join(dir, 'uses-pool.js');
    writeFileSync(
      script,
      `const { SummarizePool } = require(${JSON.stringify(path.join(built, 'pool.js'))});
       const pool = new SummarizePool({ size: 2, workerFile: ${JSON.stringify(chatty)} });
       pool.run({ file: process.argv[2], encoding: 'raw' }).then((outcome) => {
         process.stdout.write(JSON.stringify({ inline: pool.probe().runsInline, workers: pool.probe().workers, title: outcome.summary && outcome.summary.title }));
       });`,
    );
    // Were a worker to stay referenced, the child would never exit: the generous timeout would fail this test.
    const child = spawnSync(process.execPath, [script, good().file], { encoding: 'utf8', timeout: 50_000 });
    expect(child.error).toBeUndefined();
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ inline: false, workers: 1, title: 'Say hi' });
  });
});
