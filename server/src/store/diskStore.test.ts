import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dshAnswersFile, findProgram, fixtureStore } from '../../../test/support/conformance';
import { SessionReadError, type StoredSessionSummary } from '../resolver/sessionStore';
import { nodeDirectoryFiles, type DirectoryFiles, type WatchFactory } from './directoryFiles';
import { FakeClock, yieldTurns } from '../testing/fakeClock';
import { cacheWritesSettled, DiskSessionStore, type DiskStoreTuning } from './diskStore';
import { openSessionStore } from './index';
import { encodeSegment, projectDirName, TRANSCRIPT_NAMES, type TranscriptEncoding } from './layout';
import type { StoreProblem, StoreStatus } from './service';
import { nodeTranscriptFiles, type TranscriptFiles } from './transcriptFiles';
import { storeWorkSlices } from './concurrency';

// ---- writing real-format dsh logs ----------------------------------------------------------

const zstdProgram = findProgram('zstd');

/** A dsh log being written: a header line, then batches of event lines (one zstd frame each). */
class LogWriter {
  private seq = 0;
  readonly batches: string[][] = [];

  constructor(
    readonly id: string,
    readonly cwd: string | undefined,
    readonly createdAt: number,
    readonly headerOverrides: Record<string, unknown> = {},
  ) {}

  headerLine(): string {
    const header: Record<string, unknown> = { type: 'session', version: 0, id: this.id, createdAt: this.createdAt };
    if (this.cwd !== undefined) header.cwd = this.cwd;
    header.delegationDepth = 0;
    return JSON.stringify({ ...header, ...this.headerOverrides }) + '\n';
  }

  event(type: string, data: unknown, extra: Record<string, unknown> = {}): string {
    const seq = this.seq++;
    return JSON.stringify({ type, seq, time: this.createdAt + seq, data, ...extra }) + '\n';
  }

  /** One completed turn with a user prompt, and optionally a fallback title. */
  turn(prompt: string, title?: string): string[] {
    const turn = this.batches.length + 1;
    const lines = [this.event('turn/start', { turn })];
    const user = this.seq;
    lines.push(
      this.event(
        'user/message',
        { content: [{ type: 'text', text: prompt }], source: { kind: 'user' }, role: 'user', id: `u-${this.id}-${user}` },
        { surfaceOp: 'append' },
      ),
    );
    if (title !== undefined) lines.push(this.titleLine(title, 'fallback', [user]));
    lines.push(this.event('turn/end', { turn, reason: { kind: 'completed' } }));
    this.batches.push(lines);
    return lines;
  }

  titleLine(title: string, kind = 'user', messageSeqs: number[] = []): string {
    return this.event('session/title', { title, messageSeqs, source: { kind } });
  }

  /** A rename between turns (a user title), as its own batch. */
  rename(title: string): string[] {
    const lines = [this.titleLine(title)];
    this.batches.push(lines);
    return lines;
  }
}

function zstdFrame(text: string): Buffer {
  return execFileSync('zstd', ['-q', '--check', '-c'], { input: Buffer.from(text) });
}

/** The bytes of a log in an encoding: raw lines, or one zstd frame for the header and one per batch. */
function encodeLog(header: string, batches: string[][], encoding: TranscriptEncoding): Buffer {
  if (encoding === 'raw') return Buffer.from(header + batches.map((b) => b.join('')).join(''));
  return Buffer.concat([zstdFrame(header), ...batches.map((b) => zstdFrame(b.join('')))]);
}

function transcriptPath(root: string, log: LogWriter, encoding: TranscriptEncoding, projectDir = projectDirName(log.cwd)): string {
  return path.join(root, projectDir, encodeSegment(log.id), TRANSCRIPT_NAMES[encoding]);
}

/** Writes a whole log where dsh would put it (or in `projectDir`); returns its path. */
function writeLog(root: string, log: LogWriter, encoding: TranscriptEncoding, projectDir?: string): string {
  const file = transcriptPath(root, log, encoding, projectDir);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, encodeLog(log.headerLine(), log.batches, encoding));
  return file;
}

/** Appends one batch the way dsh does (a raw line run, or one more zstd frame). */
function appendBatch(file: string, lines: string[], encoding: TranscriptEncoding): void {
  appendFileSync(file, encoding === 'raw' ? lines.join('') : zstdFrame(lines.join('')));
}

function session(id: string, createdAt: number, title?: string, cwd: string | undefined = '/home/alice/proj'): LogWriter {
  const log = new LogWriter(id, cwd, createdAt);
  log.turn(`prompt of ${id}`, title);
  return log;
}

// ---- harness --------------------------------------------------------------------------------

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()?.();
  clock = undefined;
});

/**
 * The fake clock of the running test (one for every store it opens): the store's timers move
 * only with it, while the file system and its watches stay real.
 */
let clock: FakeClock | undefined;
function testClock(): FakeClock {
  return (clock ??= new FakeClock());
}


function tempDir(prefix = 'dsh-store-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Test timing: short intervals so fallbacks run during a test; watches still do the real work. */
const FAST: Partial<DiskStoreTuning> = {
  sweepIntervalMs: 50,
  sweepPeriodMs: 200,
  rescanMinIntervalMs: 400,
  // Work takes no fake time of its own: a duration would be how far polls moved the clock meanwhile.
  rescanCostFactor: 0,
  rescanCpuFactor: 0,
  sweepCostFactor: 0,
  rootPollMs: 50,
  cacheSaveDelayMs: 50,
};

function open(root: string, tuning: Partial<DiskStoreTuning> = {}, cacheDir?: string) {
  const problems: StoreProblem[] = [];
  const logs: string[] = [];
  const store = new DiskSessionStore({ root, cacheDir, log: (m) => logs.push(m) }, { ...FAST, clock: testClock(), ...tuning });
  store.onProblem((p) => problems.push(p));
  cleanups.push(() => store.dispose());
  return { store, problems, logs };
}

/** Fake time that passes between two polls of {@link eventually}. */
const POLL_STEP_MS = 25;

/**
 * Polls until `check` passes (a generous real-time deadline; never a timed assertion). Between
 * polls the real file system and its watches get a few ms of real time, and the test's fake
 * clock moves on, so the store's timers fire as they would.
 */
async function eventually<T>(check: () => Promise<T> | T, deadlineMs = 10_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5));
      clock?.advance(POLL_STEP_MS);
    }
  }
}

const ids = (sessions: readonly StoredSessionSummary[]) => sessions.map((s) => s.id);

async function readFailure(promise: Promise<unknown>): Promise<SessionReadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SessionReadError);
  return error as SessionReadError;
}

/** Every name, type, size, mtime and content byte under a directory. */
function treeHash(dir: string): string {
  const hash = createHash('sha256');
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      const stats = lstatSync(path.join(dir, child));
      hash.update(`${child}\0${stats.mode}\0${stats.size}\0${stats.mtimeMs}\0`);
      if (stats.isDirectory()) walk(child);
      else if (stats.isFile()) hash.update(readFileSync(path.join(dir, child)));
    }
  };
  walk('');
  return hash.digest('hex');
}

const encodings: TranscriptEncoding[] = ['raw', 'zstd'];
const needZstd = (encoding: TranscriptEncoding) => encoding === 'zstd' && !zstdProgram.found;

// ---- the fixture store ------------------------------------------------------------------------

interface AnswerRow {
  request: { op: string; args: unknown[]; cwd: string; target?: string };
  response: { ok: boolean; result: Array<{ sessionId: string; label: string; cwd?: string; createdAt: number }> };
}

describe('fixture store', () => {
  const answers: AnswerRow[] = readFileSync(dshAnswersFile(), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AnswerRow);
  const fullLists = answers.filter((row) => row.request.op === 'list' && row.request.args[0] === '' && row.request.args.length === 1 && row.response.ok);

  it.each(['raw', 'zstd'] as const)('lists the %s fixture store with dsh’s ids, labels, cwds and order', async (encoding) => {
    expect(fullLists.length).toBeGreaterThan(0);
    const { store, problems } = open(fixtureStore(encoding));
    await store.whenIndexed();
    const listed = await store.listSessions();
    expect(problems).toEqual([]);
    for (const row of fullLists) {
      const expected = row.response.result;
      const mine = listed
        .filter((s) => s.id !== row.request.target)
        .map((s) => {
          const candidate: { sessionId: string; label: string; cwd?: string; createdAt: number } = {
            sessionId: s.id,
            label: s.title ?? s.id,
            createdAt: s.createdAt,
          };
          if (s.cwd !== undefined) candidate.cwd = s.cwd;
          return candidate;
        });
      // Same candidates; dsh groups them by cwd, and within one cwd keeps store order.
      expect([...mine].sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1))).toEqual(
        [...expected].sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1)),
      );
      for (const cwd of new Set(expected.map((c) => c.cwd))) {
        expect(mine.filter((c) => c.cwd === cwd).map((c) => c.sessionId)).toEqual(
          expected.filter((c) => c.cwd === cwd).map((c) => c.sessionId),
        );
      }
    }
    // Store order itself: createdAt descending, then id.
    for (let i = 1; i < listed.length; i++) {
      const [a, b] = [listed[i - 1], listed[i]];
      expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id.localeCompare(b.id) < 0)).toBe(true);
    }
  });

  it.each(['raw', 'zstd'] as const)('reads surfaces of the %s fixture store', async (encoding) => {
    const { store } = open(fixtureStore(encoding));
    const demo2 = await store.readSurface('demo-2');
    expect(demo2.header).toEqual({ id: 'demo-2', cwd: '/home/alice/proj', createdAt: 1767225700000 });
    expect(demo2.capturedThroughSeq).toBe(16);
    expect(demo2.events.map((e) => e.seq)).toEqual([14, 9]);
    const handshake = await store.readSurface('ex-handshake');
    expect(handshake).toEqual({ header: { id: 'ex-handshake', createdAt: 0 }, capturedThroughSeq: null, events: [] });
    const mixed = await store.readSurface('demo-4-mixed');
    expect(mixed.capturedThroughSeq).toBe(15);
    const missing = await readFailure(store.readSurface('no-such-session'));
    expect(missing.reason).toBe('not-found');
    expect(missing.message).toBe('session "no-such-session" not found');
  });
});

// ---- header-level damage ----------------------------------------------------------------------

describe('header-level damage is skipped and reported once, the rest still answers', () => {
  it.each(encodings)('%s store', async (encoding) => {
    if (needZstd(encoding)) return expect(zstdProgram.reason).toBeTruthy();
    const root = path.join(tempDir(), 'sessions');
    const good = session('good', 100, 'Good title');
    const goodFile = writeLog(root, good, encoding);
    writeLog(root, session('other-project', 90, 'Other', '/home/alice/other'), encoding);

    // A flat transcript directly in a project directory.
    const flat = path.join(root, '--home-alice-proj--', `flat${encoding === 'raw' ? '.jsonl' : '.jsonl.zstd'}`);
    writeFileSync(flat, encodeLog(session('flat', 1).headerLine(), [], encoding));
    // The same id in two project directories: both copies are ambiguous.
    const dupA = writeLog(root, session('dup', 80, 'Dup A'), encoding);
    const dupB = writeLog(root, session('dup', 81, 'Dup B', '/home/alice/other'), encoding);
    // A header whose cwd does not derive the project directory it sits in.
    const moved = writeLog(root, session('moved', 70, 'Moved'), encoding, '--home-alice-other--');
    // A header whose id does not derive its session directory.
    const renamed = session('inner-id', 70, 'Renamed');
    const renamedFile = path.join(root, '--home-alice-proj--', 'outer-dir', TRANSCRIPT_NAMES[encoding]);
    mkdirSync(path.dirname(renamedFile), { recursive: true });
    writeFileSync(renamedFile, encodeLog(renamed.headerLine(), renamed.batches, encoding));
    // A session directory holding both encodings.
    const both = session('both', 60, 'Both');
    const bothRaw = writeLog(root, both, 'raw');
    // Its content does not matter: the directory is skipped before the transcript is trusted.
    const bothZstd = transcriptPath(root, both, 'zstd');
    writeFileSync(bothZstd, 'not even zstd');
    // No complete header: a raw first line without `\n`, or a torn first zstd frame.
    const tornHeader = session('torn-header', 50);
    const tornFile = transcriptPath(root, tornHeader, encoding);
    mkdirSync(path.dirname(tornFile), { recursive: true });
    const tornBytes = encodeLog(tornHeader.headerLine(), [], encoding);
    writeFileSync(tornFile, tornBytes.subarray(0, tornBytes.length - 3));
    // A complete first line/frame that is not a valid header (no delegationDepth).
    const invalid = new LogWriter('invalid-header', '/home/alice/proj', 40, { delegationDepth: 'deep' });
    invalid.turn('x', 'Invalid');
    const invalidFile = writeLog(root, invalid, encoding);
    // A symbolic link to a session directory outside the root, and a linked transcript.
    const outside = tempDir();
    const outsideLog = session('linked', 30, 'Linked');
    const outsideFile = writeLog(outside, outsideLog, encoding);
    const linkedDir = path.join(root, '--home-alice-proj--', 'linked');
    symlinkSync(path.dirname(outsideFile), linkedDir);
    const linkedTranscript = path.join(root, '--home-alice-proj--', 'linked-file', TRANSCRIPT_NAMES[encoding]);
    mkdirSync(path.dirname(linkedTranscript));
    symlinkSync(outsideFile, linkedTranscript);

    const before = treeHash(root);
    const { store, problems } = open(root);
    await store.whenIndexed();
    expect(ids(await store.listSessions())).toEqual(['good', 'other-project']);
    expect((await store.listSessions())[0]).toEqual({ id: 'good', cwd: '/home/alice/proj', createdAt: 100, title: 'Good title' });

    const reasonFor = (file: string) => problems.filter((p) => p.path === file).map((p) => p.reason);
    expect(reasonFor(flat)).toEqual([expect.stringContaining('flat-file layout')]);
    expect(reasonFor(dupA)).toEqual([expect.stringContaining('ambiguous')]);
    expect(reasonFor(dupB)).toEqual([expect.stringContaining('ambiguous')]);
    expect(reasonFor(moved)).toEqual([expect.stringContaining('does not identify')]);
    expect(reasonFor(renamedFile)).toEqual([expect.stringContaining('does not identify')]);
    expect(reasonFor(bothRaw)).toEqual([expect.stringContaining('both')]);
    expect(reasonFor(bothZstd)).toEqual([expect.stringContaining('both')]);
    expect(reasonFor(tornFile)).toEqual([expect.stringContaining('no complete header')]);
    expect(reasonFor(invalidFile)).toEqual([expect.stringContaining('invalid session header')]);
    expect(reasonFor(linkedDir)).toEqual([expect.stringContaining('symbolic link')]);
    expect(reasonFor(linkedTranscript)).toEqual([expect.stringContaining('symbolic link')]);
    expect(problems).toHaveLength(11);

    // Reads: ambiguous, unsupported and unbound entries fail; the good one answers.
    const dup = await readFailure(store.readSurface('dup'));
    expect(dup.reason).toBe('ambiguous');
    expect(dup.message).toContain('ambiguous');
    expect((await readFailure(store.readSurface('both'))).reason).toBe('unsupported');
    expect((await readFailure(store.readSurface('linked'))).reason).toBe('unsupported');
    expect((await readFailure(store.readSurface('moved'))).reason).toBe('corrupt');
    expect((await readFailure(store.readSurface('torn-header'))).reason).toBe('corrupt');
    expect((await readFailure(store.readSurface('flat'))).reason).toBe('unsupported');
    expect((await store.readSurface('good')).events.map((e) => e.type)).toEqual(['user/message']);

    expect(treeHash(root)).toBe(before);

    // Reported once: a later change and rescan do not report the same problems again.
    appendBatch(goodFile, good.rename('Good renamed'), encoding);
    await eventually(async () => expect((await store.listSessions())[0].title).toBe('Good renamed'));
    // Another full rescan (the catch-up after the first index, or a periodic one) reports nothing again.
    const rescans = store.probe().completedRescans;
    await eventually(() => expect(store.probe().completedRescans).toBeGreaterThan(rescans));
    expect(problems).toHaveLength(11);
  });
});

describe('a root mixing encodings across sessions', () => {
  it.skipIf(!zstdProgram.found)('lists and reads both kinds without a problem', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('plain', 2, 'Plain'), 'raw');
    writeLog(root, session('packed', 1, 'Packed'), 'zstd');
    const { store, problems } = open(root);
    await store.whenIndexed();
    expect(await store.listSessions()).toEqual([
      { id: 'plain', cwd: '/home/alice/proj', createdAt: 2, title: 'Plain' },
      { id: 'packed', cwd: '/home/alice/proj', createdAt: 1, title: 'Packed' },
    ]);
    expect(problems).toEqual([]);
    expect((await store.readSurface('packed')).capturedThroughSeq).toBe(3);
  });
});

// ---- body-level damage and torn tails ----------------------------------------------------------

describe('body-level damage is listed without a title, and reading it fails with the decoder’s reason', () => {
  function damaged(encoding: TranscriptEncoding) {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('fine', 10, 'Fine'), encoding);

    const unknown = new LogWriter('unknown-type', '/home/alice/proj', 9);
    unknown.turn('a', 'Unknown title');
    unknown.batches.push([unknown.event('future/thing', {})]);
    unknown.turn('b');
    writeLog(root, unknown, encoding);

    const v1 = new LogWriter('version-one', '/home/alice/proj', 8, { version: 1 });
    v1.turn('a', 'V1 title');
    writeLog(root, v1, encoding);

    const garbage = new LogWriter('garbage', '/home/alice/proj', 7);
    garbage.turn('a', 'Garbage title');
    garbage.batches.push(['this is not json\n']);
    garbage.turn('b'); // a later turn/end makes the defect corruption, not a torn tail
    writeLog(root, garbage, encoding);
    return root;
  }

  it.each(encodings)('%s store', async (encoding) => {
    if (needZstd(encoding)) return expect(zstdProgram.reason).toBeTruthy();
    const root = damaged(encoding);
    let checksum: string | undefined;
    if (encoding === 'zstd') {
      // A complete frame whose content checksum is wrong.
      const log = session('bad-checksum', 6, 'Checksum title');
      checksum = writeLog(root, log, 'zstd');
      const bytes = readFileSync(checksum);
      bytes[bytes.length - 1] ^= 0xff;
      writeFileSync(checksum, bytes);
    }
    const { store, problems } = open(root);
    await store.whenIndexed();
    const listed = await store.listSessions();
    const expectedIds = ['fine', 'unknown-type', 'version-one', 'garbage', ...(checksum ? ['bad-checksum'] : [])];
    expect(ids(listed)).toEqual(expectedIds);
    expect(listed[0].title).toBe('Fine');
    for (const s of listed.slice(1)) {
      expect(s.title).toBeUndefined();
      expect('title' in s).toBe(false);
    }
    expect(problems).toEqual([]);
    expect((await readFailure(store.readSurface('unknown-type'))).reason).toBe('unsupported');
    expect((await readFailure(store.readSurface('version-one'))).reason).toBe('unsupported');
    expect((await readFailure(store.readSurface('garbage'))).reason).toBe('corrupt');
    if (checksum) expect((await readFailure(store.readSurface('bad-checksum'))).reason).toBe('corrupt');
  });

  it.each(encodings)('a torn tail is read silently (%s)', async (encoding) => {
    if (needZstd(encoding)) return expect(zstdProgram.reason).toBeTruthy();
    const root = path.join(tempDir(), 'sessions');
    const log = session('torn-tail', 5, 'First title');
    log.rename('Second title');
    const file = writeLog(root, log, encoding);
    const bytes = readFileSync(file);
    // Cut inside the last batch: its record (the rename) is lost, the rest stands.
    writeFileSync(file, bytes.subarray(0, bytes.length - (encoding === 'raw' ? 1 : 12)));
    const { store, problems } = open(root);
    await store.whenIndexed();
    expect(await store.listSessions()).toEqual([{ id: 'torn-tail', cwd: '/home/alice/proj', createdAt: 5, title: 'First title' }]);
    expect(problems).toEqual([]);
    const surface = await store.readSurface('torn-tail');
    expect(surface.capturedThroughSeq).toBe(3);
  });
});

// ---- freshness -------------------------------------------------------------------------------------

describe('freshness while the store is open', () => {
  it.each(encodings)('a session created, renamed, appended to and deleted is reflected (%s)', async (encoding) => {
    if (needZstd(encoding)) return expect(zstdProgram.reason).toBeTruthy();
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('existing', 1, 'Existing'), encoding);
    const { store } = open(root, { rescanMinIntervalMs: 60_000, sweepIntervalMs: 60_000 }); // watches only
    await store.whenIndexed();
    let changes = 0;
    store.onDidChange(() => changes++);

    const fresh = session('fresh', 2, 'Fresh title');
    // Written the way dsh publishes a new session: temp file, then the final name.
    const file = transcriptPath(root, fresh, encoding);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.0123456789ab.tmp`, encodeLog(fresh.headerLine(), fresh.batches, encoding));
    renameSync(`${file}.0123456789ab.tmp`, file);
    await eventually(async () => expect(ids(await store.listSessions())).toEqual(['fresh', 'existing']));
    await eventually(() => expect(changes).toBeGreaterThan(0));

    appendBatch(file, fresh.rename('Renamed while open'), encoding);
    await eventually(async () => expect((await store.listSessions())[0].title).toBe('Renamed while open'));
    appendBatch(file, fresh.turn('another prompt', 'Newest title'), encoding);
    await eventually(async () => expect((await store.listSessions())[0].title).toBe('Newest title'));
    expect((await store.readSurface('fresh')).capturedThroughSeq).toBe(8);

    rmSync(path.dirname(file), { recursive: true });
    await eventually(async () => expect(ids(await store.listSessions())).toEqual(['existing']));
    await expect(store.readSurface('fresh')).rejects.toMatchObject({ reason: 'not-found' });

    // A new project directory appearing later is watched too.
    const later = writeLog(root, session('later', 3, 'Later', '/srv/new project'), encoding);
    await eventually(async () => expect(ids(await store.listSessions())).toEqual(['later', 'existing']));
    expect(later).toContain(projectDirName('/srv/new project'));
  });

  it.each(encodings)('an append that changes no row tells content listeners, not listing ones (%s)', async (encoding) => {
    if (needZstd(encoding)) return expect(zstdProgram.reason).toBeTruthy();
    const root = path.join(tempDir(), 'sessions');
    const log = session('titled', 1, 'Kept title');
    const file = writeLog(root, log, encoding);
    writeLog(root, session('other', 2, 'Other'), encoding);
    const { store } = open(root, { rescanMinIntervalMs: 60_000, sweepIntervalMs: 60_000 }); // watches only
    await store.whenIndexed();
    const listing = await store.listSessions();
    let changes = 0;
    const contents: string[][] = [];
    store.onDidChange(() => changes++);
    store.onDidChangeContent((sessions) => contents.push(sessions.map((key) => `${key.agent ?? 'dsh'}:${key.id}`)));

    appendBatch(file, log.turn('another prompt'), encoding);
    await eventually(() => expect(contents).toEqual([['dsh:titled']]));
    await eventually(async () => expect((await store.readSurface('titled')).capturedThroughSeq).toBeGreaterThan(3));
    expect(changes).toBe(0);
    expect(await store.listSessions()).toBe(listing);
  });

  it('covers sessions beyond the watch cap with the sweep', async () => {
    const root = path.join(tempDir(), 'sessions');
    const logs = Array.from({ length: 6 }, (_, i) => session(`s${i}`, i, `title ${i}`));
    const files = logs.map((log) => writeLog(root, log, 'raw'));
    const { store } = open(root, { maxWatches: 2, rescanMinIntervalMs: 60_000 });
    await store.whenIndexed();
    expect(store.probe().handles.watches).toBe(2);
    appendBatch(files[0], logs[0].rename('swept title'), 'raw');
    await eventually(async () => expect((await store.listSessions()).find((s) => s.id === 's0')?.title).toBe('swept title'));
  });

  it('while idle, the sweep checks each unwatched transcript once per period with a synchronous lstat, and refreshes none', async () => {
    const root = path.join(tempDir(), 'sessions');
    const files = Array.from({ length: 12 }, (_, i) => writeLog(root, session(`i${i}`, i, `title ${i}`), 'raw'));
    const recorder = recordingFiles();
    // Root + project watched: the 12 session directories are the sweep's.
    const period = 400;
    const { store } = open(root, { files: recorder.files, maxWatches: 2, sweepIntervalMs: 20, sweepPeriodMs: period, rescanMinIntervalMs: 600_000 });
    await store.whenIndexed();
    // Let the catch-up rescan after the first index finish, then count. Neither stats a transcript
    // of its own (each refresh compares what discovery's lookup by name just saw): what was
    // stat'ed meanwhile is at most one pass of the sweep, as the clock moved.
    await eventually(() => expect(store.probe().completedRescans).toBe(1));
    expect(recorder.checks.length).toBeLessThanOrEqual(files.length);
    recorder.lstats.length = recorder.lstatSyncs.length = recorder.reads.length = 0;
    // Three periods of idle time: the sweep's ticks are synchronous, so it all runs in this call.
    testClock().advance(3 * period);
    await yieldTurns();
    // Every unwatched transcript checked exactly once per period, none read or refreshed (nothing changed).
    expect(recorder.lstatSyncs).toHaveLength(3 * files.length);
    for (const file of files) expect(recorder.lstatSyncs.filter((f) => f === file)).toHaveLength(3);
    expect(recorder.lstats).toEqual([]);
    expect(recorder.reads).toEqual([]);
  });

  it('with every directory watched and no failed read, the idle store stats nothing', async () => {
    const root = path.join(tempDir(), 'sessions');
    Array.from({ length: 5 }, (_, i) => writeLog(root, session(`q${i}`, i, `title ${i}`), 'raw'));
    const recorder = recordingFiles();
    const { store } = open(root, { files: recorder.files, sweepIntervalMs: 10, sweepPeriodMs: 50, rescanMinIntervalMs: 600_000 });
    await store.whenIndexed();
    await eventually(() => expect(store.probe().completedRescans).toBe(1));
    expect(recorder.reads.length).toBeGreaterThanOrEqual(5);
    recorder.lstats.length = recorder.lstatSyncs.length = 0;
    // Ten sweep periods of idle time.
    testClock().advance(500);
    await yieldTurns();
    expect([recorder.lstats, recorder.lstatSyncs]).toEqual([[], []]);
    expect(store.probe().handles.timers).toBe(2); // the sweep's (waiting a period to look again) and the rescan's
  });

  it('retries a failed read at the next sweep, in a watched directory too, without any change to the file', async () => {
    const root = path.join(tempDir(), 'sessions');
    const file = writeLog(root, session('locked', 1, 'Readable again'), 'raw');
    writeLog(root, session('open', 2, 'Open'), 'raw');
    let locked = true;
    const files: TranscriptFiles = {
      ...nodeTranscriptFiles,
      async open(target) {
        if (locked && target === file) throw Object.assign(new Error(`EACCES: permission denied, open '${target}'`), { code: 'EACCES' });
        return nodeTranscriptFiles.open(target);
      },
    };
    const { store, problems } = open(root, { files, rescanMinIntervalMs: 600_000 });
    await store.whenIndexed();
    expect(ids(await store.listSessions())).toEqual(['open']);
    await eventually(() => expect(problems.map((p) => p.reason)).toEqual([expect.stringContaining('EACCES')]));
    expect(store.probe().handles.watches).toBeGreaterThanOrEqual(3); // root, project, session directories: all watched
    locked = false;
    await eventually(async () => expect((await store.listSessions()).map((s) => [s.id, s.title])).toEqual([['open', 'Open'], ['locked', 'Readable again']]));
  });

  it('never writes a read failure to the cache: a restart reads the file again', async () => {
    const base = tempDir();
    const root = path.join(base, 'sessions');
    const cacheDir = path.join(base, 'cache');
    const file = writeLog(root, session('locked', 1, 'Locked'), 'raw');
    writeLog(root, session('open', 2, 'Open'), 'raw');
    let locked = true;
    const files: TranscriptFiles = {
      ...nodeTranscriptFiles,
      async open(target) {
        if (locked && target === file) throw Object.assign(new Error(`EACCES: permission denied, open '${target}'`), { code: 'EACCES' });
        return nodeTranscriptFiles.open(target);
      },
    };
    const first = open(root, { files, sweepPeriodMs: 600_000 }, cacheDir);
    await first.store.whenIndexed();
    const cacheFile = await eventually(() => {
      const names = readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl'));
      expect(names).toHaveLength(1);
      return path.join(cacheDir, names[0]);
    });
    expect(readFileSync(cacheFile, 'utf8')).not.toContain('EACCES');
    expect(readFileSync(cacheFile, 'utf8')).not.toContain('"locked"');
    first.store.dispose();
    locked = false;
    const second = open(root, { files, sweepPeriodMs: 600_000 }, cacheDir);
    await second.store.whenIndexed();
    expect(ids(await second.store.listSessions())).toEqual(['open', 'locked']);
  });

  it('beyond the watch cap, watches the project directories and the most recently written session directories', async () => {
    const root = path.join(tempDir(), 'sessions');
    const files = Array.from({ length: 8 }, (_, i) => writeLog(root, session(`w${i}`, i, `title ${i}`), 'raw'));
    // Written in a shuffled order of age: w5, w2 and w7 are the newest.
    const age = [7, 6, 1, 5, 4, 0, 3, 2];
    files.forEach((file, i) => utimesSync(file, 1_700_000_000 - age[i] * 60, 1_700_000_000 - age[i] * 60));
    const watched = new Set<string>();
    const recording: WatchFactory = (dir) => {
      watched.add(dir);
      const watcher = Object.assign(new EventEmitter(), {
        close: () => watched.delete(dir),
        ref: () => watcher,
        unref: () => watcher,
      });
      return watcher as never;
    };
    // The root, one project directory and three session directories.
    const { store } = open(root, { directories: { ...nodeDirectoryFiles, watch: recording }, maxWatches: 5, rescanMinIntervalMs: 60_000 });
    await store.whenIndexed();
    await eventually(() => expect(watched.size).toBe(5));
    const expected = [root, path.dirname(path.dirname(files[0])), ...[5, 2, 7].map((i) => path.dirname(files[i]))];
    expect([...watched].sort()).toEqual(expected.sort());
  });

  it('falls back to the periodic rescan when no watch fires', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('one', 1, 'One'), 'raw');
    const silent: WatchFactory = () => {
      return Object.assign(new EventEmitter(), { close() {}, ref() { return this; }, unref() { return this; } }) as never;
    };
    const { store } = open(root, { directories: { ...nodeDirectoryFiles, watch: silent }, rescanMinIntervalMs: 100 });
    await store.whenIndexed();
    writeLog(root, session('two', 2, 'Two', '/elsewhere'), 'raw');
    await eventually(async () => expect(ids(await store.listSessions())).toEqual(['two', 'one']));
  });

  it('a full rescan, one project directory at a time, forgets a project directory that went and finds a new one', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('one', 1, 'One'), 'raw');
    const gone = writeLog(root, session('two', 2, 'Two', '/elsewhere'), 'raw');
    const silent: WatchFactory = () => {
      return Object.assign(new EventEmitter(), { close() {}, ref() { return this; }, unref() { return this; } }) as never;
    };
    const { store } = open(root, { directories: { ...nodeDirectoryFiles, watch: silent }, rescanMinIntervalMs: 100 });
    await store.whenIndexed();
    expect(ids(await store.listSessions())).toEqual(['two', 'one']);
    // The whole project directory of `two` goes; a third session arrives in a new one.
    rmSync(path.dirname(path.dirname(gone)), { recursive: true, force: true });
    writeLog(root, session('three', 3, 'Three', '/third'), 'raw');
    await eventually(async () => expect(ids(await store.listSessions())).toEqual(['three', 'one']));
    expect(store.status()).toMatchObject({ discovered: 2, indexed: 2 });
  });

  it('keeps answering when the OS refuses every watch, and says so once', async () => {
    const root = path.join(tempDir(), 'sessions');
    const log = session('a', 1, 'A');
    const file = writeLog(root, log, 'raw');
    writeLog(root, session('b', 2, 'B'), 'raw');
    const refuse: WatchFactory = () => {
      throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
    };
    const { store, logs } = open(root, { directories: { ...nodeDirectoryFiles, watch: refuse }, rescanMinIntervalMs: 60_000 });
    await store.whenIndexed();
    expect(store.probe().handles.watches).toBe(0);
    appendBatch(file, log.rename('A via sweep'), 'raw');
    await eventually(async () => expect((await store.listSessions()).find((s) => s.id === 'a')?.title).toBe('A via sweep'));
    expect(logs.filter((m) => m.includes('cannot watch'))).toHaveLength(1);
  });

  it('status counts the summarized transcripts as sessions come, go and are rewritten', async () => {
    const root = tempDir();
    const first = writeLog(root, session('one', 1, 'One'), 'raw');
    writeLog(root, session('two', 2, 'Two'), 'raw');
    const { store } = open(root);
    await store.whenIndexed();
    expect(store.status()).toEqual({ indexing: false, indexed: 2, discovered: 2, rootExists: true });
    writeLog(root, session('three', 3, 'Three'), 'raw');
    await eventually(() => expect(store.status()).toMatchObject({ indexed: 3, discovered: 3 }));
    // Replaced (dsh's logs are append-only, so a new file under the old name): still one summary for it.
    const again = session('one', 1, 'One again');
    writeFileSync(`${first}.tmp`, encodeLog(again.headerLine(), again.batches, 'raw'));
    renameSync(`${first}.tmp`, first);
    await eventually(async () => expect((await store.listSessions()).find((s) => s.id === 'one')?.title).toBe('One again'));
    expect(store.status()).toMatchObject({ indexed: 3, discovered: 3 });
    rmSync(path.dirname(first), { recursive: true });
    await eventually(() => expect(store.status()).toMatchObject({ indexed: 2, discovered: 2 }));
    expect(ids(await store.listSessions())).toEqual(['three', 'two']);
  });

  it('serves an empty store for a missing root and picks the root up when it appears', async () => {
    const root = path.join(tempDir(), 'not-yet', 'sessions');
    const { store } = open(root);
    await store.whenIndexed();
    expect(store.status()).toEqual({ indexing: false, indexed: 0, discovered: 0, rootExists: false, rootProblem: 'missing' });
    expect(await store.listSessions()).toEqual([]);
    await expect(store.readSurface('anything')).rejects.toMatchObject({ reason: 'not-found' });
    writeLog(root, session('appeared', 1, 'Appeared'), 'raw');
    await eventually(async () => expect(ids(await store.listSessions())).toEqual(['appeared']));
    expect(store.status()).toMatchObject({ rootExists: true, indexed: 1, discovered: 1 });
    expect(store.status().rootProblem).toBeUndefined();
    expect(existsSync(root)).toBe(true);
    // And when it goes away again, the store empties and waits.
    rmSync(root, { recursive: true });
    await eventually(async () => expect(store.status().rootExists).toBe(false));
    expect(await store.listSessions()).toEqual([]);
    await eventually(() => expect(store.status().rootProblem).toBe('missing'));
  });

  it('tells a root that is a regular file from a missing one, and picks the root up once it is a directory', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeFileSync(root, 'not a directory');
    const { store } = open(root);
    const statuses: StoreStatus[] = [];
    store.onStatus((status) => statuses.push(status));
    await store.whenIndexed();
    expect(store.status()).toEqual({ indexing: false, indexed: 0, discovered: 0, rootExists: false, rootProblem: 'not-a-directory' });
    // Removed: missing; a file again: not a directory, each heard of at once.
    rmSync(root);
    await eventually(() => expect(statuses.at(-1)?.rootProblem).toBe('missing'));
    writeFileSync(root, 'again');
    await eventually(() => expect(statuses.at(-1)?.rootProblem).toBe('not-a-directory'));
    // Fixed: the polling attaches the directory and the problem is gone.
    rmSync(root);
    writeLog(root, session('fixed', 1, 'Fixed'), 'raw');
    await eventually(async () => expect(ids(await store.listSessions())).toEqual(['fixed']));
    expect(store.status()).toMatchObject({ rootExists: true, indexed: 1 });
    expect(store.status().rootProblem).toBeUndefined();
    expect(statuses.at(-1)?.rootProblem).toBeUndefined();
  });

  it('calls a root under a regular file not a directory, and a symlink loop inaccessible', async () => {
    const base = tempDir();
    writeFileSync(path.join(base, 'file'), 'x');
    const under = open(path.join(base, 'file', 'sessions')).store;
    symlinkSync(path.join(base, 'loop'), path.join(base, 'loop'));
    const { store: loop, logs } = open(path.join(base, 'loop'));
    await Promise.all([under.whenIndexed(), loop.whenIndexed()]);
    expect(under.status().rootProblem).toBe('not-a-directory');
    expect(loop.status().rootProblem).toBe('inaccessible');
    // Only an inaccessible root is logged, with its error.
    expect(logs.filter((line) => line.includes('cannot open the sessions root'))).toEqual([expect.stringContaining('ELOOP')]);
  });
});

// ---- the index ------------------------------------------------------------------------------------

/** File access that records every positioned read per path. */
function recordingFiles() {
  const reads: Array<{ file: string; position: number; bytes: number }> = [];
  const lstats: string[] = [];
  const lstatSyncs: string[] = [];
  /** Every lstat, either way (a refresh stats synchronously when it can, as the sweep does). */
  const checks: string[] = [];
  let gate: { opened: Promise<void>; applies: (file: string) => boolean } | undefined;
  let waiting = 0;
  const files: TranscriptFiles = {
    lstat(file) {
      lstats.push(file);
      checks.push(file);
      return nodeTranscriptFiles.lstat(file);
    },
    lstatSync(file) {
      lstatSyncs.push(file);
      checks.push(file);
      return nodeTranscriptFiles.lstatSync!(file);
    },
    stat: nodeTranscriptFiles.stat,
    async open(file) {
      if (gate?.applies(file)) {
        waiting++;
        await gate.opened;
        waiting--;
      }
      const handle = await nodeTranscriptFiles.open(file);
      return {
        stat: () => handle.stat(),
        async read(buffer, offset, length, position) {
          const result = await handle.read(buffer, offset, length, position);
          reads.push({ file, position, bytes: result.bytesRead });
          return result;
        },
        async readFile() {
          const bytes = await handle.readFile();
          reads.push({ file, position: 0, bytes: bytes.length });
          return bytes;
        },
        close: () => handle.close(),
      };
    },
  };
  return {
    files,
    reads,
    lstats,
    lstatSyncs,
    checks,
    /** Opens held now. */
    pendingOpens: () => waiting,
    /** Holds opening (every file, or those `applies` picks) until the returned release is called. */
    hold(applies: (file: string) => boolean = () => true) {
      let release!: () => void;
      gate = { opened: new Promise((resolve) => (release = resolve)), applies };
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

describe('the index', () => {
  it.each(encodings)('decodes only the appended bytes of a grown transcript, after checking the bytes before them (%s)', async (encoding) => {
    if (needZstd(encoding)) return expect(zstdProgram.reason).toBeTruthy();
    const root = path.join(tempDir(), 'sessions');
    const log = session('growing', 1, 'Before');
    const file = writeLog(root, log, encoding);
    const other = writeLog(root, session('steady', 0, 'Steady'), encoding);
    const recorder = recordingFiles();
    const { store } = open(root, { files: recorder.files });
    await store.whenIndexed();
    const oldSize = lstatSync(file).size;
    expect(recorder.reads.filter((r) => r.file === file).reduce((n, r) => n + r.bytes, 0)).toBe(oldSize);
    recorder.reads.length = 0;

    appendBatch(file, log.rename('After'), encoding);
    await eventually(async () => expect((await store.listSessions())[0].title).toBe('After'));
    const newSize = lstatSync(file).size;
    const growingReads = recorder.reads.filter((r) => r.file === file);
    expect(growingReads.length).toBeGreaterThan(0);
    // The bytes before the resume point are read once (hashed, not decoded), the append once.
    const check = growingReads.filter((r) => r.position < oldSize);
    const appended = growingReads.filter((r) => r.position >= oldSize);
    expect(check.map((r) => [r.position, r.bytes])).toEqual([[0, oldSize]]);
    expect(Math.min(...appended.map((r) => r.position))).toBe(oldSize);
    expect(appended.reduce((n, r) => n + r.bytes, 0)).toBe(newSize - oldSize);
    // An unchanged transcript costs no read at all.
    expect(recorder.reads.filter((r) => r.file === other)).toEqual([]);
  });

  it('re-reads a replaced or shrunk transcript from scratch', async () => {
    const root = path.join(tempDir(), 'sessions');
    const log = session('replaced', 1, 'Long original title');
    log.rename('Even longer original title');
    const file = writeLog(root, log, 'raw');
    const recorder = recordingFiles();
    const { store } = open(root, { files: recorder.files });
    await store.whenIndexed();
    recorder.reads.length = 0;
    const replacement = session('replaced', 1, 'Short');
    writeFileSync(`${file}.tmp`, encodeLog(replacement.headerLine(), replacement.batches, 'raw'));
    renameSync(`${file}.tmp`, file);
    await eventually(async () => expect((await store.listSessions())[0].title).toBe('Short'));
    const reads = recorder.reads.filter((r) => r.file === file);
    expect(reads[0].position).toBe(0);
    expect(reads.reduce((n, r) => n + r.bytes, 0)).toBe(lstatSync(file).size);
  });

  it('rejects a read of an unchanged damaged transcript with the failure it already knows, without reading it again', async () => {
    const root = path.join(tempDir(), 'sessions');
    const log = new LogWriter('broken', '/home/alice/proj', 1, { version: 1 });
    log.turn('a', 'Broken');
    const file = writeLog(root, log, 'raw');
    const recorder = recordingFiles();
    const { store } = open(root, { files: recorder.files });
    await store.whenIndexed();
    recorder.reads.length = 0;
    const first = await readFailure(store.readSurface('broken'));
    expect(first.reason).toBe('unsupported');
    expect(recorder.reads).toEqual([]);
    // Once the bytes change, the read is real again.
    appendBatch(file, log.rename('x'), 'raw');
    const second = await readFailure(store.readSurface('broken'));
    expect(second).toMatchObject({ reason: first.reason, message: first.message });
    expect(recorder.reads.filter((r) => r.file === file).length).toBeGreaterThan(0);
  });

  it('answers with what is indexed so far while the first index is being built', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('a', 1, 'A'), 'raw');
    writeLog(root, session('b', 2, 'B'), 'raw');
    const recorder = recordingFiles();
    const release = recorder.hold();
    const statuses: boolean[] = [];
    const { store } = open(root, { files: recorder.files });
    store.onStatus((s) => statuses.push(s.indexing));
    await eventually(() => expect(store.status()).toMatchObject({ indexing: true, discovered: 2, indexed: 0, rootExists: true }));
    expect(await store.listSessions()).toEqual([]);
    let indexed = false;
    const whenIndexed = store.whenIndexed().then(() => (indexed = true));
    const aborted = new AbortController();
    const abortedWait = store.whenIndexed(aborted.signal);
    aborted.abort(new Error('stop waiting'));
    await expect(abortedWait).rejects.toThrow('stop waiting');
    expect(indexed).toBe(false);
    release();
    await whenIndexed;
    expect(ids(await store.listSessions())).toEqual(['b', 'a']);
    expect(store.status()).toEqual({ indexing: false, indexed: 2, discovered: 2, rootExists: true });
    expect(statuses[0]).toBe(true);
    expect(statuses.at(-1)).toBe(false);
  });

  it('while the first index is built, tells listeners the listing changed and builds it only when it is read', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('a', 1, 'A'), 'raw');
    const slowFile = writeLog(root, session('b', 2, 'B'), 'raw');
    const recorder = recordingFiles();
    const release = recorder.hold((f) => f === slowFile);
    const { store } = open(root, { files: recorder.files });
    let changes = 0;
    store.onDidChange(() => changes++);
    await eventually(() => expect(store.status()).toMatchObject({ indexing: true, discovered: 2, indexed: 1 }));
    await eventually(() => expect(changes).toBeGreaterThan(0));
    expect(store.probe().listingRebuilds).toBe(0);
    expect(ids(await store.listSessions())).toEqual(['a']);
    expect(store.probe().listingRebuilds).toBe(1);
    release();
    await store.whenIndexed();
    expect(ids(await store.listSessions())).toEqual(['b', 'a']);
    expect(store.probe().listingRebuilds).toBe(2);
  });

  /**
   * A store whose first index has read session `early` ("Early"), which is then renamed "Late"
   * before the index is complete (so before it is watched); resolves once the index is complete.
   */
  async function indexedWithChangeDuringFirstIndex(tuning: Partial<DiskStoreTuning> = {}) {
    const root = path.join(tempDir(), 'sessions');
    const log = session('early', 1, 'Early');
    const file = writeLog(root, log, 'raw');
    const slowFile = writeLog(root, session('slow', 0, 'Slow', '/elsewhere'), 'raw');
    const recorder = recordingFiles();
    const release = recorder.hold((f) => f === slowFile);
    const { store } = open(root, { files: recorder.files, rescanMinIntervalMs: 60_000, sweepIntervalMs: 60_000, ...tuning });
    await eventually(() => expect(store.status()).toMatchObject({ indexing: true, discovered: 2, indexed: 1 }));
    appendBatch(file, log.rename('Late'), 'raw');
    release();
    await store.whenIndexed();
    return store;
  }

  it('catches up with changes made while the first index was being built', async () => {
    const store = await indexedWithChangeDuringFirstIndex();
    await eventually(async () => expect((await store.listSessions()).find((s) => s.id === 'early')?.title).toBe('Late'));
  });

  it('starts the catch-up rescan catchUpDelayMs after the first index, so the answers that waited go out first', async () => {
    const store = await indexedWithChangeDuringFirstIndex({ catchUpDelayMs: 1000 });
    // Not yet: the listing is the first index's until the delay has passed (real time for a rescan that would run).
    testClock().advance(900);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(store.probe().completedRescans).toBe(0);
    expect((await store.listSessions()).find((s) => s.id === 'early')?.title).toBe('Early');
    testClock().advance(100);
    await eventually(async () => expect((await store.listSessions()).find((s) => s.id === 'early')?.title).toBe('Late'));
    expect(store.probe().completedRescans).toBe(1);
  });

  it('holds the catch-up rescan while requests are in progress, up to backgroundMaxWaitMs', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('a', 1, 'A'), 'raw');
    let busy = true;
    const foreground = { quietForMs: () => (busy ? 0 : 60_000) };
    const rescanned = async (afterMs: number) => {
      testClock().advance(afterMs);
      // Real time for a rescan that would run now.
      await new Promise((resolve) => setTimeout(resolve, 150));
      return store.probe().completedRescans;
    };
    const { store } = open(root, { foreground, catchUpDelayMs: 0, backgroundQuietMs: 500, backgroundMaxWaitMs: 60_000, rescanMinIntervalMs: 600_000 });
    await store.whenIndexed();
    expect(await rescanned(5000)).toBe(0);
    busy = false;
    expect(await rescanned(600)).toBe(1);

    // Requests without a pause: the rescan still comes, backgroundMaxWaitMs after the first index.
    busy = true;
    const other = open(path.join(tempDir(), 'sessions'), { foreground, catchUpDelayMs: 0, backgroundQuietMs: 500, backgroundMaxWaitMs: 3000, rescanMinIntervalMs: 600_000 });
    writeLog(other.store.root, session('b', 1, 'B'), 'raw');
    await other.store.whenIndexed();
    testClock().advance(2000);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(other.store.probe().completedRescans).toBe(0);
    testClock().advance(1000);
    await eventually(() => expect(other.store.probe().completedRescans).toBe(1));
  });

  it('watches more directories than it may once the requests that waited for the first index are answered, 5 s after it at the latest', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('a', 1, 'A'), 'raw');
    let busy = true;
    const foreground = { quietForMs: () => (busy ? 0 : 60_000) };
    // Two directories (the project and the session directory) and room for two watches: the root and one.
    const tuning = { foreground, maxWatches: 2, catchUpDelayMs: 60_000, rescanMinIntervalMs: 600_000 };
    const { store } = open(root, tuning);
    await store.whenIndexed();
    // The root only, as while indexing: its answers are still being written.
    expect(store.probe().handles.watches).toBe(1);
    testClock().advance(100);
    expect(store.probe().handles.watches).toBe(1);
    busy = false;
    testClock().advance(5);
    expect(store.probe().handles.watches).toBe(2);

    // Requests without a pause: the watches still come, 5 s after the first index.
    busy = true;
    const otherRoot = path.join(tempDir(), 'sessions');
    writeLog(otherRoot, session('b', 1, 'B'), 'raw');
    const other = open(otherRoot, tuning);
    await other.store.whenIndexed();
    expect(other.store.probe().handles.watches).toBe(1);
    testClock().advance(4995);
    expect(other.store.probe().handles.watches).toBe(1);
    testClock().advance(5);
    expect(other.store.probe().handles.watches).toBe(2);

    // Room for every directory: all are watched at once, answers in progress or not.
    const roomy = open(otherRoot, { ...tuning, maxWatches: 3 });
    await roomy.store.whenIndexed();
    expect(roomy.store.probe().handles.watches).toBe(3);
  });

  it('lets its time slices wait for requests only once its first index is built (requests wait for that one)', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('a', 1, 'A'), 'raw');
    expect(storeWorkSlices.givesWay).toBe(true);
    const { store } = open(root, { rescanMinIntervalMs: 600_000 });
    expect(storeWorkSlices.givesWay).toBe(false);
    await store.whenIndexed();
    expect(storeWorkSlices.givesWay).toBe(true);

    // A store disposed before its first index ends does not keep them from waiting.
    const other = open(path.join(tempDir(), 'sessions'), { rescanMinIntervalMs: 600_000 });
    expect(storeWorkSlices.givesWay).toBe(false);
    other.store.dispose();
    expect(storeWorkSlices.givesWay).toBe(true);
  });

  it('holds a cache write while requests are in progress, up to backgroundMaxWaitMs', async () => {
    const base = tempDir();
    const root = path.join(base, 'sessions');
    const cacheDir = path.join(base, 'cache');
    writeLog(root, session('a', 1, 'A'), 'raw');
    let busy = true;
    const foreground = { quietForMs: () => (busy ? 0 : 60_000) };
    const written = () => (existsSync(cacheDir) ? readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl')) : []);
    const { store } = open(root, { foreground, cacheSaveDelayMs: 50, backgroundQuietMs: 500, backgroundMaxWaitMs: 60_000, rescanMinIntervalMs: 600_000 }, cacheDir);
    await store.whenIndexed();
    testClock().advance(5000);
    // Real time for a write that would run now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(written()).toEqual([]);
    busy = false;
    testClock().advance(600);
    await eventually(() => expect(written()).toHaveLength(1));
  });

  it('gives the event loop turns during a rescan of many unchanged transcripts', async () => {
    const root = path.join(tempDir(), 'sessions');
    const count = 60;
    for (let i = 0; i < count; i++) writeLog(root, session(`s${i}`, i, `Title ${i}`), 'raw');
    // While measuring, each synchronous lookup of a transcript (discovery's, by name) costs 0.5 ms
    // of CPU (under what quickSync takes for a slow call): ~30 ms of main thread in all.
    let measuring = false;
    let stats = 0;
    const isTranscript = (file: string) => file.endsWith(`${path.sep}session.jsonl`);
    const directories: DirectoryFiles = {
      ...nodeDirectoryFiles,
      lstat(file) {
        if (measuring && isTranscript(file)) stats++;
        return nodeDirectoryFiles.lstat(file);
      },
      lstatSync(file) {
        if (measuring && isTranscript(file)) {
          stats++;
          for (const until = performance.now() + 0.5; performance.now() < until; );
        }
        return nodeDirectoryFiles.lstatSync!(file);
      },
    };
    const { store } = open(root, { directories, catchUpDelayMs: 0, rescanMinIntervalMs: 10_000, sweepIntervalMs: 60_000 });
    await store.whenIndexed();
    await eventually(() => expect(store.probe().completedRescans).toBe(1));
    measuring = true;
    // A timer of 1 ms asks for a turn all along; count the turns it got between the rescan's first and last lstat.
    let turnsWithin = 0;
    const ticker = setInterval(() => {
      if (stats > 0 && stats < count) turnsWithin++;
    }, 1);
    testClock().advance(10_000); // the next periodic rescan
    try {
      await eventually(() => expect(store.probe().completedRescans).toBe(2));
    } finally {
      clearInterval(ticker);
    }
    expect(stats).toBe(count);
    expect(turnsWithin).toBeGreaterThanOrEqual(3);
  });

  it('runs no sweep and no rescan while the first index is being built, then both resume', async () => {
    const root = path.join(tempDir(), 'sessions');
    const fastFile = writeLog(root, session('fast', 1, 'Fast'), 'raw');
    const slowFile = writeLog(root, session('slow', 0, 'Slow', '/elsewhere'), 'raw');
    const recorder = recordingFiles();
    const release = recorder.hold((f) => f === slowFile);
    // Only the root is watched, so every transcript is the sweep's, and it would run every few ms.
    let watchEvents = 0;
    const directories: DirectoryFiles = {
      ...nodeDirectoryFiles,
      watch: (dir, listener) =>
        nodeDirectoryFiles.watch(dir, (event, name) => {
          watchEvents++;
          listener(event, name);
        }),
    };
    const { store } = open(root, { files: recorder.files, directories, maxWatches: 1, sweepIntervalMs: 5, rescanMinIntervalMs: 5 });
    await eventually(() => expect(store.status()).toMatchObject({ indexing: true, discovered: 2, indexed: 1 }));
    const checksWhenRead = recorder.checks.filter((f) => f === fastFile).length;
    // A change the root watch sees, and many sweep intervals, while the first index waits for the slow file.
    const now = new Date();
    utimesSync(path.dirname(path.dirname(fastFile)), now, now);
    await eventually(() => expect(watchEvents).toBeGreaterThan(0));
    testClock().advance(300);
    await yieldTurns();
    expect(store.status().indexing).toBe(true);
    expect(recorder.checks.filter((f) => f === fastFile)).toHaveLength(checksWhenRead);
    release();
    await store.whenIndexed();
    await eventually(() => expect(recorder.checks.filter((f) => f === fastFile).length).toBeGreaterThan(checksWhenRead + 2));
  });

  it('returns the same cached array until something changes', async () => {
    const root = path.join(tempDir(), 'sessions');
    const log = session('a', 1, 'A');
    const file = writeLog(root, log, 'raw');
    const { store } = open(root);
    await store.whenIndexed();
    const first = await store.listSessions();
    expect(await store.listSessions()).toBe(first);
    appendBatch(file, log.rename('A2'), 'raw');
    await eventually(async () => expect(await store.listSessions()).not.toBe(first));
    expect((await store.listSessions())[0].title).toBe('A2');
  });

  it('restarts from the persistent cache without reading unchanged transcripts, and tolerates a corrupt cache', async () => {
    const base = tempDir();
    const root = path.join(base, 'sessions');
    const cacheDir = path.join(base, 'cache');
    writeLog(root, session('a', 1, 'A'), 'raw');
    const bLog = session('b', 2, 'B');
    const bFile = writeLog(root, bLog, 'raw');
    const first = open(root, {}, cacheDir);
    await first.store.whenIndexed();
    await eventually(() => expect(readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl'))).toHaveLength(1));
    const expected = await first.store.listSessions();
    first.store.dispose();

    const bSizeBefore = lstatSync(bFile).size;
    appendBatch(bFile, bLog.rename('B changed'), 'raw');
    const recorder = recordingFiles();
    const second = open(root, { files: recorder.files }, cacheDir);
    await second.store.whenIndexed();
    expect(await second.store.listSessions()).toEqual([{ ...expected[0], title: 'B changed' }, expected[1]]);
    expect(new Set(recorder.reads.map((r) => r.file))).toEqual(new Set([bFile]));
    // The appended transcript resumes from where the previous process stopped reading it (after
    // one read of the bytes before, to check them).
    expect(recorder.reads.filter((r) => r.position < bSizeBefore).map((r) => [r.position, r.bytes])).toEqual([[0, bSizeBefore]]);
    expect(Math.min(...recorder.reads.filter((r) => r.position >= bSizeBefore).map((r) => r.position))).toBe(bSizeBefore);
    second.store.dispose();

    const [cacheName] = readdirSync(cacheDir);
    writeFileSync(path.join(cacheDir, cacheName), '{ not json');
    const third = open(root, {}, cacheDir);
    await third.store.whenIndexed();
    expect(ids(await third.store.listSessions())).toEqual(['b', 'a']);
  });

  it('on saveCache, scans under way stop at their next transcript and the cache is written meanwhile', async () => {
    const base = tempDir();
    const root = path.join(base, 'sessions');
    const cacheDir = path.join(base, 'cache');
    const count = 40;
    const files = Array.from({ length: count }, (_, i) => writeLog(root, session(`w${i}`, i, `Title ${i}`), 'raw'));
    const recorder = recordingFiles();
    const { store } = open(root, { files: recorder.files, catchUpDelayMs: 0, cacheSaveDelayMs: 3_600_000, rescanMinIntervalMs: 10_000, sweepIntervalMs: 60_000 }, cacheDir);
    await store.whenIndexed();
    await eventually(() => expect(store.probe().completedRescans).toBe(1));
    // Every transcript rewritten, then a rescan whose reads are held open.
    for (let i = 0; i < count; i++) writeLog(root, session(`w${i}`, i, `Retitled ${i}`), 'raw');
    recorder.reads.length = 0;
    const release = recorder.hold((file) => files.includes(file));
    testClock().advance(10_000);
    await eventually(() => expect(recorder.pendingOpens()).toBeGreaterThan(0));
    await store.saveCache();
    expect(readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl'))).toHaveLength(1);
    // The refreshes already waiting for their file finish; no other transcript is read.
    const inFlight = recorder.pendingOpens();
    release();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const read = new Set(recorder.reads.map((r) => r.file));
    expect(read.size).toBeLessThanOrEqual(inFlight);
    expect(read.size).toBeLessThan(count);
  });

  it('writes the cache at once on saveCache (a process that exits first, the CLI), and a restart reads no transcript', async () => {
    const base = tempDir();
    const root = path.join(base, 'sessions');
    const cacheDir = path.join(base, 'cache');
    writeLog(root, session('a', 1, 'A'), 'raw');
    writeLog(root, session('b', 2, 'B'), 'zstd');
    // No scheduled write can happen in this test: only saveCache writes.
    const first = open(root, { cacheSaveDelayMs: 3_600_000 }, cacheDir);
    await first.store.whenIndexed();
    expect(existsSync(cacheDir) ? readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl')) : []).toEqual([]);
    await first.store.saveCache();
    expect(readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl'))).toHaveLength(1);
    const expected = await first.store.listSessions();
    first.store.dispose();

    const recorder = recordingFiles();
    const second = open(root, { files: recorder.files, cacheSaveDelayMs: 3_600_000 }, cacheDir);
    await second.store.whenIndexed();
    expect(await second.store.listSessions()).toEqual(expected);
    expect(recorder.reads).toEqual([]);
    // Nothing differs from the cache: saving again leaves the file as it is.
    const [cacheName] = readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl'));
    const before = statSync(path.join(cacheDir, cacheName)).mtimeMs;
    await second.store.saveCache();
    expect(statSync(path.join(cacheDir, cacheName)).mtimeMs).toBe(before);
  });

  it('rewrites the cache only when the index differs from it', async () => {
    const base = tempDir();
    const root = path.join(base, 'sessions');
    const cacheDir = path.join(base, 'cache');
    const log = session('a', 1, 'A');
    const file = writeLog(root, log, 'raw');
    writeLog(root, session('gone-soon', 2, 'G'), 'raw');
    const first = open(root, {}, cacheDir);
    await first.store.whenIndexed();
    const cacheFile = await eventually(() => {
      const names = readdirSync(cacheDir).filter((n) => n.endsWith('.jsonl'));
      expect(names).toHaveLength(1);
      return path.join(cacheDir, names[0]);
    });
    first.store.dispose();
    const written = () => lstatSync(cacheFile).ino;
    const firstWrite = written();

    // Nothing changed: the restart keeps the file (each write is a new file renamed into place).
    const second = open(root, {}, cacheDir);
    await second.store.whenIndexed();
    // After the catch-up rescan, well past the save delay, and any write it started is done.
    await eventually(() => expect(second.store.probe().completedRescans).toBe(1));
    testClock().advance(300);
    await cacheWritesSettled();
    expect(written()).toBe(firstWrite);
    second.store.dispose();

    // A session removed while no server ran: the file is rewritten without it.
    rmSync(path.dirname(transcriptPath(root, session('gone-soon', 2), 'raw')), { recursive: true });
    const third = open(root, {}, cacheDir);
    await third.store.whenIndexed();
    await eventually(() => expect(written()).not.toBe(firstWrite));
    expect(readFileSync(cacheFile, 'utf8')).not.toContain('gone-soon');
    const thirdWrite = written();

    // An append while open: rewritten again.
    appendBatch(file, log.rename('A2'), 'raw');
    await eventually(async () => expect((await third.store.listSessions())[0].title).toBe('A2'));
    await eventually(() => expect(written()).not.toBe(thirdWrite));
    expect(readFileSync(cacheFile, 'utf8')).toContain('A2');
  });

  it('never puts a cache under the sessions root', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('a', 1, 'A'), 'raw');
    const before = treeHash(root);
    const { store, logs } = open(root, {}, path.join(root, 'cache'));
    // The cache directory is refused before the first index (no cache file, so no save is ever scheduled).
    await store.whenIndexed();
    expect(logs.some((m) => m.includes('inside the sessions root'))).toBe(true);
    expect(treeHash(root)).toBe(before);
  });
});

// ---- read-only and lifecycle ------------------------------------------------------------------------

describe('lifecycle', () => {
  it('leaves the store byte-identical and releases every watch and timer on dispose', async () => {
    const root = path.join(tempDir(), 'sessions');
    execFileSync('cp', ['-a', fixtureStore('raw') + '/.', root]);
    const before = treeHash(root);
    const store = openSessionStore({ root }) as DiskSessionStore;
    await store.whenIndexed();
    for (const s of await store.listSessions()) await store.readSurface(s.id);
    expect(store.probe().handles.watches).toBeGreaterThan(1);
    store.dispose();
    expect(store.probe().handles).toEqual({ watches: 0, timers: 0 });
    expect(treeHash(root)).toBe(before);
  });

  it('honours cancellation', async () => {
    const root = path.join(tempDir(), 'sessions');
    writeLog(root, session('a', 1, 'A'), 'raw');
    const { store } = open(root);
    await store.whenIndexed();
    const cancelled = AbortSignal.abort(new Error('cancelled'));
    await expect(store.listSessions(cancelled)).rejects.toThrow('cancelled');
    await expect(store.readSurface('a', cancelled)).rejects.toThrow('cancelled');
    expect((await store.readSurface('a')).header.id).toBe('a');
  });

  it('keeps serving when a listener throws', async () => {
    const root = path.join(tempDir(), 'sessions');
    const log = session('a', 1, 'A');
    const file = writeLog(root, log, 'raw');
    const { store, logs } = open(root);
    store.onDidChange(() => {
      throw new Error('listener bug');
    });
    await store.whenIndexed();
    appendBatch(file, log.rename('A2'), 'raw');
    await eventually(async () => expect((await store.listSessions())[0].title).toBe('A2'));
    expect(logs.some((m) => m.includes('listener bug'))).toBe(true);
  });
});
