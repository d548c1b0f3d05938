/**
 * Stale state, through the real server: a read failure must never become a session's state (live
 * or across restarts), a transcript rewritten in place must be read again from byte 0 (grown,
 * shrunk or same size; live, after a restart with the cache and without one), a changed cache
 * must never give a wrong listing, killed writes' temp files must go, and one huge title must not
 * make every restart throw the cache away.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SessionCommands } from '@dsh-session-ls/shared';
import type { TranscriptEncoding } from '../../server/src/store/layout';
import { findProgram, IN_CI } from '../support/conformance';
import { escapedFaults, shutdownWithin, startMeasuredServer, type MeasuredServer } from './support/serverProcess';
import { recordFigure, scaled } from './support/scale';
import { encodeBatches, eventually, sessionBatches, TemporaryDirectories, transcriptPath, treeHash, writeSession, type SessionSpec } from './support/stores';

const zstd = findProgram('zstd');
const ENCODINGS: TranscriptEncoding[] = zstd.found ? ['raw', 'zstd'] : ['raw'];
const temporary = new TemporaryDirectories();
const running: MeasuredServer[] = [];
afterEach(() => {
  for (const server of running.splice(0)) server.kill();
});
afterAll(() => temporary.removeAll());

interface Row {
  sessionId: string;
  label: string;
}

const CWD = '/home/alice/proj';

async function rows(server: MeasuredServer): Promise<Row[]> {
  const list = await server.client.executeCommand<Row[]>(SessionCommands.candidates, { limit: 100_000 });
  return list.map(({ sessionId, label }) => ({ sessionId, label }));
}

/** Sorted `[id, label]` pairs, for comparing listings. */
async function labels(server: MeasuredServer): Promise<Array<[string, string]>> {
  return (await rows(server)).map((row): [string, string] => [row.sessionId, row.label]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

async function start(root: string, home: string, user?: { uid: number; gid: number }): Promise<MeasuredServer> {
  const server = await startMeasuredServer(temporary, root, { home, user });
  running.push(server);
  return server;
}

async function stop(server: MeasuredServer): Promise<void> {
  expect(await shutdownWithin(server)).toBe(0);
  expect(escapedFaults(server.stderr())).toEqual([]);
}

/** The cache files of a server home. */
function cacheFiles(home: string): string[] {
  const dir = path.join(home, 'cache', 'dsh-session-ls');
  try {
    return readdirSync(dir).map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

function cacheFile(home: string): string {
  const files = cacheFiles(home).filter((file) => file.endsWith('.jsonl'));
  expect(files).toHaveLength(1);
  return files[0];
}

/**
 * Who the server runs as so that a mode-000 file is really unreadable to it: as root, the
 * `nobody` user (spawned with its uid and gid); as anyone else, that user.
 */
function unprivileged(): { user?: { uid: number; gid: number }; reason?: string } {
  if (process.getuid?.() !== 0) return {};
  const probe = spawnSync(process.execPath, ['-e', 'process.exit(process.getuid() === 65534 ? 0 : 1)'], { uid: 65534, gid: 65534 });
  if (probe.status === 0) return { user: { uid: 65534, gid: 65534 } };
  const reason = `running as root and cannot start a process as nobody (${probe.error?.message ?? `exit ${probe.status}`})`;
  if (IN_CI) throw new Error(`CI=true: ${reason}`);
  return { reason };
}

/** Directories an unprivileged server can read (and a home it can write), as a real user's would be. */
function openUp(dirs: string[], home: string, user?: { uid: number; gid: number }): void {
  for (const dir of dirs) chmodSync(dir, 0o755);
  chmodSync(home, 0o755);
  if (user) chownSync(home, user.uid, user.gid);
}

describe('a read failure is never a session’s state', () => {
  const who = unprivileged();

  it.skipIf(who.reason !== undefined).each(ENCODINGS)(
    `a log unreadable at the first index is listed once readable, live and after restarts (%s) ${who.reason ?? ''}`,
    async (encoding) => {
      const base = temporary.make('unreadable');
      const root = path.join(base, 'sessions');
      const home = temporary.make('unreadable-home');
      writeSession(root, { id: 'open-1', cwd: CWD, createdAt: 1, turns: [{ prompt: 'p', title: 'Always open' }] }, encoding);
      const locked = writeSession(root, { id: 'locked-1', cwd: CWD, createdAt: 2, turns: [{ prompt: 'p', title: 'Locked title' }] }, encoding);
      openUp([base], home, who.user);
      chmodSync(locked, 0o000);

      const first = await start(root, home, who.user);
      await eventually(async () => expect(await labels(first)).toEqual([['open-1', 'Always open']]));
      // The failure was reported, and the cache (written after the first index) does not hold it.
      await eventually(() => expect(cacheFiles(home).some((file) => file.endsWith('.jsonl'))).toBe(true));
      expect(readFileSync(cacheFile(home), 'utf8')).not.toMatch(/EACCES|cannot read/);
      // Fixed while the server runs: listed without a restart.
      chmodSync(locked, 0o644);
      await eventually(async () => expect(await labels(first)).toEqual([['locked-1', 'Locked title'], ['open-1', 'Always open']]));
      await stop(first);

      // Unreadable while no server runs, then a restart with the cache: not listed, then fixed
      // while it runs: listed; and a restart after that lists it from the start.
      chmodSync(locked, 0o000);
      const second = await start(root, home, who.user);
      await eventually(async () => expect(await labels(second)).toEqual([['open-1', 'Always open']]));
      chmodSync(locked, 0o644);
      await eventually(async () => expect(await labels(second)).toHaveLength(2));
      await stop(second);
      const third = await start(root, home, who.user);
      await eventually(async () => expect(await labels(third)).toEqual([['locked-1', 'Locked title'], ['open-1', 'Always open']]));
      await stop(third);
      recordFigure('stale-state', `unreadable log listed once readable (${encoding}, server as ${who.user ? 'nobody' : 'this user'})`, 'yes');
    },
  );
});

/** A session whose log is rewritten in place (same inode) into another version. */
interface Rewrite {
  kind: 'grown' | 'shrunk' | 'same size';
  before: SessionSpec;
  after: SessionSpec;
}

function rewrites(count: number): Rewrite[] {
  const kinds: Rewrite['kind'][] = ['grown', 'shrunk', 'same size'];
  return Array.from({ length: count }, (_, i) => {
    const kind = kinds[i % kinds.length];
    const id = `rewritten-${i}`;
    const turns = (title: string, n: number) => Array.from({ length: n }, (_, t) => ({ prompt: `prompt ${t}`, answer: `answer ${t}`, title: t === 0 ? title : undefined }));
    const before: SessionSpec = { id, cwd: CWD, createdAt: 100 + i, turns: turns(`Old title ${i}`, 3) };
    // Same size: a title of the same length; grown: one more turn; shrunk: one turn fewer.
    const after: SessionSpec = { id, cwd: CWD, createdAt: 100 + i, turns: turns(`New title ${i}`, kind === 'grown' ? 4 : kind === 'shrunk' ? 2 : 3) };
    return { kind, before, after };
  });
}

/** The bytes of a rewrite; a same-size one tries other titles until the encoded size matches (zstd sizes vary). */
function rewrittenBytes(rewrite: Rewrite, encoding: TranscriptEncoding, size: number): { bytes: Uint8Array; title: string } {
  const title = rewrite.after.turns[0].title as string;
  const letters = 'qwertyuiopasdfghjklzxcvbnm';
  const number = title.slice(title.lastIndexOf(' ') + 1);
  // The title itself, then titles of other lengths and letters around it.
  const titles = [title];
  for (let length = 1; length <= 14; length++) {
    for (let offset = 0; offset < letters.length; offset++) titles.push(`New ${(letters.slice(offset) + letters).slice(0, length)} ${number}`);
  }
  for (const tried of titles) {
    const spec = { ...rewrite.after, turns: rewrite.after.turns.map((turn, i) => (i === 0 ? { ...turn, title: tried } : turn)) };
    const bytes = encodeBatches(sessionBatches(spec), encoding);
    if (rewrite.kind !== 'same size' || bytes.length === size) return { bytes, title: tried };
  }
  throw new Error(`no same-size rewrite of ${rewrite.after.id} found`);
}

/**
 * Rewrites the log in place: the same file (inode), truncated and written; same-size ones keep
 * their modification time too. Returns the title it now has.
 */
function rewriteInPlace(root: string, rewrite: Rewrite, encoding: TranscriptEncoding): string {
  const file = transcriptPath(root, rewrite.after, encoding);
  const before = lstatSync(file);
  const { bytes, title } = rewrittenBytes(rewrite, encoding, before.size);
  writeFileSync(file, bytes);
  const after = lstatSync(file);
  expect(after.ino).toBe(before.ino);
  if (rewrite.kind === 'grown') expect(after.size).toBeGreaterThan(before.size);
  if (rewrite.kind === 'shrunk') expect(after.size).toBeLessThan(before.size);
  if (rewrite.kind === 'same size') {
    expect(after.size).toBe(before.size);
    utimesSync(file, before.atime, before.mtime);
  }
  return title;
}

describe('a log rewritten in place is read again from byte 0', () => {
  const count = scaled(6, 30);

  it.each(ENCODINGS)('grown, shrunk or same size: live, after a restart with the cache, and without one (%s)', async (encoding) => {
    const root = path.join(temporary.make('rewrites'), 'sessions');
    const home = temporary.make('rewrites-home');
    const all = rewrites(count);
    const expectOld = all.map((r): [string, string] => [r.before.id, r.before.turns[0].title as string]);
    const expectNew: Array<[string, string]> = [];
    const sort = (pairs: Array<[string, string]>) => pairs.sort((a, b) => (a[0] < b[0] ? -1 : 1));

    // Live: a server that has read every log sees them rewritten.
    const half = Math.ceil(all.length / 2);
    for (const r of all) writeSession(root, r.before, encoding);
    const live = await start(root, home);
    await eventually(async () => expect(await labels(live)).toEqual(sort([...expectOld])));
    for (const r of all.slice(0, half)) expectNew.push([r.after.id, rewriteInPlace(root, r, encoding)]);
    await eventually(async () => expect(await labels(live)).toEqual(sort([...expectNew, ...expectOld.slice(half)])));
    await stop(live);

    // While no server runs: the restart with the cache (which holds resume states for these
    // recently written logs) must not take them for appends.
    for (const r of all.slice(half)) expectNew.push([r.after.id, rewriteInPlace(root, r, encoding)]);
    const hashBefore = treeHash(root);
    for (let restart = 0; restart < 2; restart++) {
      const withCache = await start(root, home);
      await eventually(async () => expect(await labels(withCache)).toEqual(sort([...expectNew])));
      await stop(withCache);
    }
    const withoutCache = await start(root, temporary.make('rewrites-no-cache'));
    await eventually(async () => expect(await labels(withoutCache)).toEqual(sort([...expectNew])));
    await stop(withoutCache);
    expect(treeHash(root)).toBe(hashBefore);
    recordFigure('stale-state', `sessions rewritten in place, stale after restarts (${encoding})`, `0 of ${count}`);
  }, 180_000);
});

describe('the persistent cache', () => {
  it('one-character changes inside a complete cache never give a wrong listing', async () => {
    const root = path.join(temporary.make('cache-damage'), 'sessions');
    const home = temporary.make('cache-damage-home');
    const sessions = 20;
    for (let i = 0; i < sessions; i++) {
      writeSession(root, { id: `cached-${String(i).padStart(2, '0')}`, cwd: CWD, createdAt: i, turns: [{ prompt: 'p', answer: 'a', title: `Title ${i} abc` }] }, 'raw');
    }
    const first = await start(root, home);
    await eventually(async () => expect(await rows(first)).toHaveLength(sessions));
    const expected = await labels(first);
    await eventually(() => expect(cacheFiles(home).some((file) => file.endsWith('.jsonl'))).toBe(true));
    await stop(first);
    const file = cacheFile(home);
    const intact = readFileSync(file, 'utf8');

    // Letters for letters and digits for digits inside ids, keys, titles and numbers: the changes that still parse.
    const rounds = scaled(8, 40);
    let seed = 13;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    // Half the changes anywhere, half inside the ids and titles the listing shows (where a
    // trusted change would show a made-up session or title).
    const anywhere = [...intact].map((c, i) => (/[a-z0-9]/.test(c) ? i : -1)).filter((i) => i >= 0);
    const shown: number[] = [];
    for (const match of intact.matchAll(/"(?:id|title)":"([^"]*)"/g)) {
      const start = (match.index ?? 0) + match[0].length - match[1].length - 1;
      for (let i = start; i < start + match[1].length; i++) if (/[a-z0-9]/.test(intact[i])) shown.push(i);
    }
    expect(shown.length).toBeGreaterThan(sessions * 10);
    let wrong = 0;
    for (let round = 0; round < rounds; round++) {
      const positions = round % 2 === 0 ? shown : anywhere;
      const at = positions[random(positions.length)];
      const c = intact[at];
      const other = /[0-9]/.test(c) ? String((Number(c) + 1 + random(8)) % 10) : String.fromCharCode(97 + ((c.charCodeAt(0) - 97 + 1 + random(24)) % 26));
      writeFileSync(file, intact.slice(0, at) + other + intact.slice(at + 1));
      const server = await start(root, home);
      await eventually(async () => expect(await rows(server)).toHaveLength(sessions));
      const listed = await labels(server);
      if (JSON.stringify(listed) !== JSON.stringify(expected)) wrong++;
      expect(listed, `cache changed at ${at} (${JSON.stringify(c)} → ${JSON.stringify(other)})`).toEqual(expected);
      await stop(server);
    }
    recordFigure('stale-state', 'restarts over a cache with one character changed: wrong listings', `${wrong} of ${rounds}`);
  }, 60_000 + scaled(8, 40) * 10_000);

  it('removes killed writes’ temp files at start, never a live one', async () => {
    const root = path.join(temporary.make('temps'), 'sessions');
    const home = temporary.make('temps-home');
    writeSession(root, { id: 't-1', cwd: CWD, createdAt: 1, turns: [{ prompt: 'p', title: 'T' }] }, 'raw');
    const first = await start(root, home);
    await eventually(() => expect(cacheFiles(home).some((file) => file.endsWith('.jsonl'))).toBe(true));
    await stop(first);
    const cache = cacheFile(home);
    // Leftovers of killed writes: a dead writer's, and one untouched for ten minutes (of a live
    // pid); a live write in progress: this process's pid, just written.
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid;
    const old = Date.now() / 1000 - 600;
    const temps = {
      dead: `${cache}.${deadPid}.aaaaaaaaaaaa.tmp`,
      stale: `${cache}.${process.pid}.bbbbbbbbbbbb.tmp`,
      live: `${cache}.${process.pid}.cccccccccccc.tmp`,
    };
    for (const temp of Object.values(temps)) writeFileSync(temp, '{"format":4,'.padEnd(1024 * 1024, ' '));
    utimesSync(temps.dead, old + 590, old + 590);
    utimesSync(temps.stale, old, old);
    const second = await start(root, home);
    await eventually(() => expect(cacheFiles(home).filter((file) => file.endsWith('.tmp')).sort()).toEqual([temps.live]));
    expect(await labels(second)).toEqual([['t-1', 'T']]);
    await stop(second);
  });

  it('a 5 MB title neither empties nor rewrites the cache at every restart', async () => {
    const root = path.join(temporary.make('huge-title'), 'sessions');
    const home = temporary.make('huge-title-home');
    const huge = `Huge ${'title words '.repeat(5 * 1024 * 1024 / 12)}`;
    for (let i = 0; i < 50; i++) writeSession(root, { id: `small-${i}`, cwd: CWD, createdAt: i, turns: [{ prompt: 'p', title: `Small ${i}` }] }, 'raw');
    writeSession(root, { id: 'huge-1', cwd: CWD, createdAt: 99, turns: [{ prompt: 'p', title: huge }] }, 'raw');
    const first = await start(root, home);
    await eventually(async () => expect(await rows(first)).toHaveLength(51));
    await eventually(() => expect(cacheFiles(home).some((file) => file.endsWith('.jsonl'))).toBe(true));
    await stop(first);
    const file = cacheFile(home);
    const written = lstatSync(file);
    // Every summary but the huge one is in the file: a restart re-reads that one log only.
    expect(written.size).toBeLessThan(1024 * 1024);
    const restarts: number[] = [];
    for (let restart = 0; restart < 2; restart++) {
      const started = performance.now();
      const server = await start(root, home);
      await eventually(async () => expect(await rows(server)).toHaveLength(51));
      restarts.push(performance.now() - started);
      const listed = await rows(server);
      expect(listed.find((row) => row.sessionId === 'huge-1')?.label.startsWith('Huge title words')).toBe(true);
      expect(listed.find((row) => row.sessionId === 'small-7')?.label).toBe('Small 7');
      // The first index wrote nothing: the same file (a write is a new file renamed into place).
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await stop(server);
      expect(lstatSync(file).ino).toBe(written.ino);
      expect(lstatSync(file).mtimeMs).toBe(written.mtimeMs);
    }
    recordFigure('stale-state', '5 MB title: restarts to a complete listing (ms)', restarts.map((ms) => ms.toFixed(0)).join(', '));
  });
});
