import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { StoredSessionSummary } from '../../resolver/sessionStore';
import { FakeClock, yieldTurns } from '../../testing/fakeClock';
import { InMemoryStoreService } from '../../testing/inMemoryStoreService';
import { composeAgentStores } from '../composite';
import { quickSync } from '../quickSync';
import { saveSummaryCache, summaryCacheFile } from '../summaryCache';
import { foreignCacheRoot } from './foreignCache';
import { sessionSummary } from './foreignFormat';
import type { ForeignSessionStore, ForeignStoreOptions } from './foreignStore';
import { openForeignStore } from './openForeignStore';
import { nodeForeignFiles } from './foreignRead';
import { loadSqlite } from './databaseSnapshot';

// Stores written by the real CLIs (Claude Code 2.1.197, codex-cli 0.171.0): test/agent-stores/tools/generate.mjs.
const FIXTURES = fileURLToPath(new URL('../../../../test/agent-stores/fixtures/', import.meta.url));
const CC_RENAMED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const CC_UNTITLED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a02';
const CX_RENAMED = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';
const CX_UNTITLED = '01a23b79-474a-78b1-9540-13f1768e6c53';
const CC_PROJECT = path.join('projects', '-tmp-dsh-agent-fixtures-proj-a');
const CX_DAY = path.join('sessions', '2026', '12', '03');
const QW_TOOL = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e02';
const QW_CHAT = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01';

/** Per agent: the fixture session a test changes, the one it copies, their folder, and where new sessions go. */
const CASES = {
  'claude-code': { changed: CC_RENAMED, source: CC_UNTITLED, folder: CC_PROJECT, idPrefix: '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a', newFolder: path.join('projects', '-tmp-new-project'), downFolder: path.join('projects', '-tmp-added-while-down') },
  codex: { changed: CX_RENAMED, source: CX_UNTITLED, folder: CX_DAY, idPrefix: '01a23b79-0000-7000-8000-0000000000', newFolder: path.join('sessions', '2026', '12', '04'), downFolder: path.join('sessions', '2026', '12', '05') },
  'qwen-code': {
    changed: QW_TOOL,
    source: QW_CHAT,
    folder: path.join('projects', '-tmp-dsh-agent-fixtures-proj-a', 'chats'),
    idPrefix: '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e',
    newFolder: path.join('projects', '-tmp-new-project', 'chats'),
    downFolder: path.join('projects', '-tmp-added-while-down', 'chats'),
  },
} as const;

/** The record that renames the session of `file` for an agent that keeps titles in it (Codex keeps them in its index). */
function titleRecord(agent: ForeignAgent, file: string, title: string): string | undefined {
  if (agent === 'claude-code') return JSON.stringify({ type: 'custom-title', customTitle: title });
  if (agent === 'codex') return undefined;
  // Qwen Code's /rename: a custom_title record chained to the last record.
  const records = readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { uuid?: string; sessionId?: string });
  const last = records.reverse().find((record) => typeof record.uuid === 'string') as { uuid: string; sessionId: string };
  return JSON.stringify({ uuid: `${last.uuid.slice(0, -4)}7171`, parentUuid: last.uuid, sessionId: last.sessionId, type: 'system', subtype: 'custom_title', systemPayload: { customTitle: title } });
}

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'foreign-store-'));
  scratch.push(dir);
  return dir;
}
/** A writable copy of a fixture home, and a cache folder beside it. */
function homeAndCache(agent: ForeignAgent): { home: string; cacheDir: string } {
  const dir = tempDir();
  const home = path.join(dir, 'home');
  cpSync(path.join(FIXTURES, agent), home, { recursive: true });
  return { home, cacheDir: path.join(dir, 'cache') };
}

/** A store whose session-file reads are counted (home-relative paths, in order). */
function counted(agent: ForeignAgent, home: string, options: ForeignStoreOptions = {}): { store: ForeignSessionStore; reads: string[]; logged: string[] } {
  const reads: string[] = [];
  const logged: string[] = [];
  const store = openForeignStore(agent, home, {
    log: (message) => logged.push(message),
    ...options,
    files: {
      open: (file) => {
        reads.push(path.relative(home, file));
        return nodeForeignFiles.open(file);
      },
    },
  });
  scratchStores.push(store);
  return { store, reads, logged };
}
const scratchStores: ForeignSessionStore[] = [];
afterAll(() => scratchStores.forEach((store) => store.dispose()));

/** Polls `check` until it holds, failing after a generous deadline (never a timed assertion). */
async function eventually<T>(check: () => T | Promise<T>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function listedUntil(store: ForeignSessionStore, done: (listing: readonly StoredSessionSummary[]) => boolean, what: string): Promise<readonly StoredSessionSummary[]> {
  return eventually(async () => {
    const listing = await store.listSessions();
    if (!done(listing)) throw new Error('not yet');
    return listing;
  }, what);
}

function cacheFiles(cacheDir: string): string[] {
  return existsSync(cacheDir) ? readdirSync(cacheDir).filter((name) => name.endsWith('.jsonl')) : [];
}

/** Lists once, then waits for the cache file to be written (one per agent home). */
async function listAndCache(store: ForeignSessionStore, cacheDir: string, count = 1): Promise<readonly StoredSessionSummary[]> {
  const listing = await store.listSessions();
  await eventually(() => expect(cacheFiles(cacheDir)).toHaveLength(count), 'the cache file was never written');
  return listing;
}

/** Copies a fixture session under a new id (and, for Codex, a new rollout name). */
function copySession(agent: ForeignAgent, home: string, fromId: string, toId: string, toDir?: string): string {
  const sourceKey = readdirSync(home, { recursive: true, encoding: 'utf8' }).find((name) => path.basename(name).includes(fromId))!;
  const fromDir = path.dirname(path.join(home, sourceKey));
  const source = path.basename(sourceKey);
  const dir = toDir === undefined ? fromDir : path.join(home, toDir);
  mkdirSync(dir, { recursive: true });
  const target = path.join(dir, agent === 'claude-code' ? `${toId}.jsonl` : source.replace(fromId, toId));
  // Written elsewhere and renamed in, as an atomic writer does (a watch never sees it half-written).
  const temp = path.join(path.dirname(home), `${toId}.tmp`);
  writeFileSync(temp, readFileSync(path.join(fromDir, source), 'utf8').replaceAll(fromId, toId));
  renameSync(temp, target);
  return target;
}

describe.each(['claude-code', 'codex', 'qwen-code'] as const)('%s store: persistent summary cache', (agent) => {
  const sessions = 3;
  const changedId = CASES[agent].changed;

  it('reads every file once, then a restart reads none: the summaries come from the cache', async () => {
    const { home, cacheDir } = homeAndCache(agent);
    const first = counted(agent, home, { cacheDir });
    const listed = await listAndCache(first.store, cacheDir);
    expect(listed).toHaveLength(sessions);
    expect(first.reads).toHaveLength(sessions);
    first.store.dispose();

    const second = counted(agent, home, { cacheDir });
    expect(await second.store.listSessions()).toEqual(listed);
    expect(second.reads).toEqual([]);
    // The surfaces still come from the files themselves.
    const id = listed[0]!.id;
    expect((await second.store.readSurface(id)).header).toMatchObject({ id, agent });
  });

  it('re-reads only a file whose identity changed while it was down, and one that changes while it runs', async () => {
    const { home, cacheDir } = homeAndCache(agent);
    const first = counted(agent, home, { cacheDir });
    await listAndCache(first.store, cacheDir);
    first.store.dispose();
    const file = readdirSync(path.join(home, CASES[agent].folder)).find((name) => name.includes(changedId))!;
    const key = path.join(CASES[agent].folder, file);
    // A record of a type the store does not know: the file changed, the listing row did not.
    appendFileSync(path.join(home, key), JSON.stringify({ type: 'unknown-record-type', note: 'appended while down' }) + '\n');

    const second = counted(agent, home, { cacheDir });
    const listing = await second.store.listSessions();
    expect(second.reads).toEqual([key]);
    expect(listing).toHaveLength(sessions);

    // Running: a watched folder reports the write, and only that file is read again.
    appendFileSync(path.join(home, key), JSON.stringify({ type: 'unknown-record-type', note: 'appended while running' }) + '\n');
    await eventually(() => expect(second.reads).toEqual([key, key]), 'the changed file was never read again');
    expect(await second.store.listSessions()).toBe(listing);
  });
});

describe('foreign store: the cache written when the process ends', () => {
  it("writes a home's cache at once when the composite saves its stores, so the next start reads nothing", async () => {
    const { home, cacheDir } = homeAndCache('codex');
    const first = counted('codex', home, { cacheDir, tuning: { cacheSaveDelayMs: 3_600_000 } });
    await listAndCache(first.store, cacheDir);
    const newId = `${CASES.codex.idPrefix}fa`;
    copySession('codex', home, CASES.codex.source, newId);
    await listedUntil(first.store, (listing) => listing.some((s) => s.id === newId), 'the new session never appeared');
    await composeAgentStores(new InMemoryStoreService('/no-dsh-root'), [first.store]).saveCache!();
    first.store.dispose();

    const second = counted('codex', home, { cacheDir });
    expect((await second.store.listSessions()).map((s) => s.id)).toContain(newId);
    expect(second.reads).toEqual([]);
  });
});

describe.each([
  ['claude-code', 'synchronous'],
  ['claude-code', 'through the thread pool'],
  ['codex', 'synchronous'],
  ['codex', 'through the thread pool'],
  ['qwen-code', 'synchronous'],
  ['qwen-code', 'through the thread pool'],
] as const)('%s store: a restart sees what changed while it was down (stats %s)', (agent, how) => {
  afterEach(() => vi.restoreAllMocks());

  it('lists at once a session changed, added (known and new folder) or removed while down, as a store without a cache does', async () => {
    const { home, cacheDir } = homeAndCache(agent);
    const first = counted(agent, home, { cacheDir });
    const before = await listAndCache(first.store, cacheDir);
    first.store.dispose();
    // The thread-pool path is the one taken after slow synchronous calls (a cold disk).
    if (how !== 'synchronous') vi.spyOn(quickSync, 'quick', 'get').mockReturnValue(false);

    const { changed: changedId, source: sourceId } = CASES[agent];
    const removed = before.find((s) => s.id !== changedId && s.id !== sourceId)!;
    const files = readdirSync(home, { recursive: true, encoding: 'utf8' });
    const changedFile = path.join(home, files.find((name) => path.basename(name).includes(changedId))!);
    const rename = titleRecord(agent, changedFile, 'Renamed while down');
    if (rename !== undefined) {
      appendFileSync(changedFile, rename + '\n');
    } else {
      // Rewritten in place with another cwd (its identity and its row change).
      const cwd = before.find((s) => s.id === changedId)!.cwd!;
      writeFileSync(changedFile, readFileSync(changedFile, 'utf8').replaceAll(cwd, '/tmp/moved-while-down'));
    }
    rmSync(path.join(home, files.find((name) => path.basename(name).includes(removed.id))!));
    const addedId = `${CASES[agent].idPrefix}d0`;
    const inNewFolderId = addedId.replace(/d0$/, 'd1');
    copySession(agent, home, sourceId, addedId);
    copySession(agent, home, sourceId, inNewFolderId, CASES[agent].downFolder);

    const second = counted(agent, home, { cacheDir });
    const listing = await second.store.listSessions();
    expect(listing.map((s) => s.id).sort()).toEqual([...before.map((s) => s.id).filter((id) => id !== removed.id), addedId, inNewFolderId].sort());
    const changed = listing.find((s) => s.id === changedId)!;
    if (rename !== undefined) expect(changed.title).toBe('Renamed while down');
    else expect(changed.cwd).toBe('/tmp/moved-while-down');
    // Only the changed and the new files were read, and the rows are those of a store that reads every file.
    expect(second.reads).toHaveLength(3);
    const fresh = counted(agent, home);
    expect(listing).toEqual(await fresh.store.listSessions());
  });
});

describe.each(['claude-code', 'codex', 'qwen-code'] as const)('%s store: freshness by folder watches', (agent) => {
  const sourceId = CASES[agent].source;
  const newId = `${CASES[agent].idPrefix}ff`;

  it('lists a new session in a known folder and in a new one, and drops deleted ones, without a restart', async () => {
    const { home, cacheDir } = homeAndCache(agent);
    const { store, reads } = counted(agent, home, { cacheDir });
    const before = await store.listSessions();
    const readsBefore = reads.length;
    const added = copySession(agent, home, sourceId, newId);
    await listedUntil(store, (listing) => listing.some((s) => s.id === newId), 'the new session never appeared');
    // Only the new file was read.
    expect(reads.slice(readsBefore)).toEqual([path.relative(home, added)]);

    // A session in a folder that did not exist (a new project; a new day): the folder is walked and watched.
    const otherId = newId.replace(/ff$/, 'fe');
    const newFolder = CASES[agent].newFolder;
    const inNewFolder = copySession(agent, home, sourceId, otherId, newFolder);
    await listedUntil(store, (listing) => listing.some((s) => s.id === otherId), 'the session in a new folder never appeared');
    const written = titleRecord(agent, inNewFolder, 'Named in the new folder');
    appendFileSync(inNewFolder, (written ?? JSON.stringify({ type: 'unknown' })) + '\n');
    if (written !== undefined) await listedUntil(store, (listing) => listing.find((s) => s.id === otherId)?.title === 'Named in the new folder', 'the new folder is not watched');

    rmSync(added);
    rmSync(path.join(home, newFolder), { recursive: true });
    const after = await listedUntil(store, (listing) => !listing.some((s) => s.id === newId || s.id === otherId), 'the deleted sessions never disappeared');
    expect(after).toEqual(before);
  });

  it('fires onDidChange for a new session and a new title, coalesced, and not for a write that changes no row', async () => {
    const { home } = homeAndCache(agent);
    // A long spacing: the first change is told at once, the next ones wait (and are told together).
    const { store, reads } = counted(agent, home, { tuning: { notifyThrottleMs: 600_000 } });
    let fired = 0;
    store.onDidChange(() => fired++);
    const reread: string[] = [];
    store.onDidChangeContent((sessions) => reread.push(...sessions.map((key) => key.id)));
    const before = await store.listSessions();
    expect(fired).toBe(0); // the first listing is the caller's answer, not a change

    // A write that changes no row: read again (its content told), listing kept, no change told.
    const [source] = readdirSync(home, { recursive: true, encoding: 'utf8' }).filter((name) => path.basename(name).includes(sourceId));
    const readsBefore = reads.length;
    appendFileSync(path.join(home, source!), JSON.stringify({ type: 'unknown-record-type' }) + '\n');
    await eventually(() => expect(reads.length).toBeGreaterThan(readsBefore), 'the written file was never read again');
    await eventually(() => expect(reread).toEqual([sourceId]), 'the read was never told as a content change');
    expect(await store.listSessions()).toBe(before);
    expect(fired).toBe(0);

    const newFile = copySession(agent, home, sourceId, newId);
    await listedUntil(store, (listing) => listing.some((s) => s.id === newId), 'the new session never appeared');
    await eventually(() => expect(fired).toBe(1), 'no change was told');

    // A new title (Claude Code and Qwen Code: a title record; Codex: a thread_name in session_index.jsonl).
    const told = agent === 'codex' ? undefined : titleRecord(agent, newFile, 'Told title');
    if (told !== undefined) {
      appendFileSync(newFile, told + '\n');
    } else {
      appendFileSync(path.join(home, 'session_index.jsonl'), JSON.stringify({ id: newId, thread_name: 'Told title', updated_at: '2027-01-01T00:00:00Z' }) + '\n');
    }
    await listedUntil(store, (listing) => listing.find((s) => s.id === newId)?.title === 'Told title', 'the new title never appeared');
    // Within the spacing: pending, not yet told.
    expect(fired).toBe(1);
    expect((store as unknown as { handles(): { timers: number } }).handles().timers).toBeGreaterThan(0);
  });

  it('tells content listeners of a write that changes no row, and not listing ones', async () => {
    const { home } = homeAndCache(agent);
    const { store } = counted(agent, home);
    let fired = 0;
    const contents: string[][] = [];
    store.onDidChange(() => fired++);
    store.onDidChangeContent((sessions) => contents.push(sessions.map((key) => `${key.agent ?? 'dsh'}:${key.id}`)));
    const before = await store.listSessions();

    const [source] = readdirSync(home, { recursive: true, encoding: 'utf8' }).filter((name) => path.basename(name).includes(sourceId));
    appendFileSync(path.join(home, source!), JSON.stringify({ type: 'unknown-record-type' }) + '\n');
    await eventually(() => expect(contents).toEqual([[`${agent}:${sourceId}`]]), 'no content change was told');
    expect(await store.listSessions()).toBe(before);
    expect(fired).toBe(0);
  });

  it('reads only the appended bytes of a session being written, and its row equals a read from byte 0', async () => {
    const { home } = homeAndCache(agent);
    const { store } = counted(agent, home);
    await store.listSessions();
    const resumed = () => (store as unknown as { resumedReads: number }).resumedReads;
    const [source] = readdirSync(home, { recursive: true, encoding: 'utf8' }).filter((name) => path.basename(name).includes(sourceId));
    for (const title of ['First title', 'Second title']) {
      const before = resumed();
      const rename = titleRecord(agent, path.join(home, source!), title);
      if (rename !== undefined) appendFileSync(path.join(home, source!), rename + '\n');
      else appendFileSync(path.join(home, source!), JSON.stringify({ type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: title }] } }) + '\n');
      await eventually(() => expect(resumed()).toBe(before + 1), 'the append was not read from where the last read stopped');
    }
    const fresh = counted(agent, home);
    expect(await store.listSessions()).toEqual(await fresh.store.listSessions());
    if (agent !== 'codex') expect((await store.listSessions()).find((s) => s.id === sourceId)?.title).toBe('Second title');
  });

  it('tells every change once the spacing allows (default spacing)', async () => {
    const { home } = homeAndCache(agent);
    const { store } = counted(agent, home);
    let fired = 0;
    store.onDidChange(() => fired++);
    await store.listSessions();
    copySession(agent, home, sourceId, newId);
    await eventually(() => expect(fired).toBe(1), 'the new session was not told');
    const otherId = newId.replace(/ff$/, 'fe');
    copySession(agent, home, sourceId, otherId);
    await eventually(() => expect(fired).toBe(2), 'the second new session was not told');
    expect((await store.listSessions()).filter((s) => s.id === newId || s.id === otherId)).toHaveLength(2);
    store.dispose();
    expect((store as unknown as { handles(): { timers: number } }).handles().timers).toBe(0);
  });

  it('finds changes by the sweep alone when no folder can be watched (out of watches)', async () => {
    const { home } = homeAndCache(agent);
    const noWatches = () => {
      throw Object.assign(new Error('no space left for watches'), { code: 'ENOSPC' });
    };
    const { store, logged } = counted(agent, home, { tuning: { watchFactory: noWatches, sweepPeriodMs: 50, sweepCostFactor: 0 } });
    await store.listSessions();
    expect(logged.some((message) => message.includes('cannot watch'))).toBe(true);
    copySession(agent, home, sourceId, newId);
    await listedUntil(store, (listing) => listing.some((s) => s.id === newId), 'the sweep never found the new session');
  });

  it('sweeps in the time it is given: not before the period, and then the change is told', async () => {
    const { home } = homeAndCache(agent);
    const clock = new FakeClock();
    const inert = () => ({ close() {}, on() {} }) as unknown as import('node:fs').FSWatcher;
    const { store } = counted(agent, home, { tuning: { clock, watchFactory: inert, sweepPeriodMs: 60_000, sweepCostFactor: 0, notifyThrottleMs: 1000 } });
    await store.listSessions();
    let told = 0;
    store.onDidChange(() => told++);
    copySession(agent, home, sourceId, newId);
    clock.advance(59_000);
    await yieldTurns(20);
    expect((await store.listSessions()).map((s) => s.id)).not.toContain(newId);
    clock.advance(1000);
    await listedUntil(store, (listing) => listing.some((s) => s.id === newId), 'the sweep never ran in the clock given');
    expect(told).toBe(0);
    await eventually(() => {
      clock.advance(1000);
      expect(told).toBe(1);
    }, 'the change was never told');
  });

  it('rescans the home for an id it does not list at most every missRescanMs', async () => {
    const { home } = homeAndCache(agent);
    const clock = new FakeClock();
    const inert = () => ({ close() {}, on() {} }) as unknown as import('node:fs').FSWatcher;
    const { store } = counted(agent, home, { tuning: { clock, watchFactory: inert, sweepPeriodMs: 3_600_000, missRescanMs: 60_000 } });
    await store.listSessions();
    // A miss rescans the home (nothing new there yet)…
    await expect(store.readSurface(newId)).rejects.toMatchObject({ reason: 'not-found' });
    copySession(agent, home, sourceId, newId);
    // …and the next one within the spacing does not: the new session is not found yet.
    clock.advance(59_000);
    await expect(store.readSurface(newId)).rejects.toMatchObject({ reason: 'not-found' });
    clock.advance(1000);
    await expect(store.readSurface(newId)).resolves.toMatchObject({ header: { id: newId, agent } });
  });

  it('reads a session written a moment ago even before any watch reported it', async () => {
    const { home } = homeAndCache(agent);
    const inert = () => ({ close() {}, on() {} }) as unknown as import('node:fs').FSWatcher;
    const { store } = counted(agent, home, { tuning: { watchFactory: inert, sweepPeriodMs: 600_000, missRescanMs: 0 } });
    await store.listSessions();
    copySession(agent, home, sourceId, newId);
    await expect(store.readSurface(newId)).resolves.toMatchObject({ header: { id: newId, agent } });
    expect((await store.listSessions()).map((s) => s.id)).toContain(newId);
  });
});

describe('foreign store: damage, sharing, read-only', () => {
  it('ignores a damaged cache (garbage, a flipped byte, a torn tail) and reads the files instead, then writes a sound one', async () => {
    const { home, cacheDir } = homeAndCache('claude-code');
    const first = counted('claude-code', home, { cacheDir });
    const listed = await listAndCache(first.store, cacheDir);
    first.store.dispose();
    const cacheFile = path.join(cacheDir, cacheFiles(cacheDir)[0]!);
    const sound = readFileSync(cacheFile, 'utf8');
    const damages = [
      '{ not json at all',
      sound.replace('Parser work, renamed', 'Parser work, renamEd'),
      sound.slice(0, Math.floor(sound.length / 2)),
      '\u0000'.repeat(64),
    ];
    for (const damaged of damages) {
      writeFileSync(cacheFile, damaged);
      const next = counted('claude-code', home, { cacheDir });
      expect(await next.store.listSessions()).toEqual(listed);
      expect(next.reads).toHaveLength(3);
      // The damaged file is replaced by a sound one, which the next start uses.
      await eventually(() => expect(readFileSync(cacheFile, 'utf8')).toBe(sound), 'the cache was never rewritten');
      next.store.dispose();
    }
    const last = counted('claude-code', home, { cacheDir });
    expect(await last.store.listSessions()).toEqual(listed);
    expect(last.reads).toEqual([]);
  });

  it('never trusts a cache entry outside the session folders, nor one for a file that is gone', async () => {
    const { home, cacheDir } = homeAndCache('claude-code');
    const root = foreignCacheRoot('claude-code', realpathSync(home));
    const identity = { size: 1, mtimeMs: 1, ctimeMs: 1, ino: 1, dev: 1 };
    const planted = (id: string) => ({ identity, summary: sessionSummary({ id, createdAt: 1, title: `planted ${id}` }) });
    await saveSummaryCache(summaryCacheFile(cacheDir, root), root, [
      ['../../etc/passwd.jsonl', planted('outside')],
      ['projects/-gone/gone.jsonl', planted('gone')],
      [`${CC_PROJECT.split(path.sep).join('/')}/${CC_RENAMED}.jsonl`, planted('stale')],
    ]);
    const { store, reads } = counted('claude-code', home, { cacheDir });
    const listing = await store.listSessions();
    expect(listing.map((s) => s.title)).not.toContain('planted outside');
    expect(listing.map((s) => s.id).sort()).toEqual([CC_RENAMED, CC_UNTITLED, '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a03'].sort());
    // The stale entry's identity is not the file's: it was read.
    expect(reads).toHaveLength(3);
  });

  it('shares one walk among concurrent first listings: each file read once', async () => {
    const { home } = homeAndCache('codex');
    const { store, reads } = counted('codex', home);
    const [a, b, c] = await Promise.all([store.listSessions(), store.listSessions(), store.listSessions()]);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(a).toHaveLength(3);
    expect(new Set(reads).size).toBe(3);
    expect(reads).toHaveLength(3);
  });

  it('writes nothing into the agent home: a cache folder inside it is refused', async () => {
    const { home } = homeAndCache('codex');
    const before = readdirSync(home, { recursive: true }).sort();
    const { store, logged } = counted('codex', home, { cacheDir: path.join(home, 'cache') });
    expect(await store.listSessions()).toHaveLength(3);
    expect(logged.some((message) => message.includes('not using a persistent cache'))).toBe(true);
    expect(readdirSync(home, { recursive: true }).sort()).toEqual(before);
  });

  it('lists nothing for a home that vanishes, and holds no watch or timer once disposed', async () => {
    const { home } = homeAndCache('claude-code');
    const { store } = counted('claude-code', home);
    expect(await store.listSessions()).toHaveLength(3);
    const handles = (store as unknown as { handles(): { watches: number; timers: number } }).handles;
    expect(handles.call(store).watches).toBeGreaterThan(0);
    rmSync(home, { recursive: true, force: true });
    await listedUntil(store, (listing) => listing.length === 0, 'the vanished home was still listed');
    store.dispose();
    expect(handles.call(store)).toEqual({ watches: 0, timers: 0 });
  });
});

// opencode's sessions are rows of one database (opencode 1.18.33: generateOpencode.mjs); the test plays opencode writing it.
describe.skipIf(loadSqlite() === undefined)('opencode store: freshness of a database home (needs node:sqlite, Node 22.13 or newer)', () => {
  const OC_CHAT = 'ses_db528adf7ffesWQ0nGNsMTymth';
  /** A copy of the fixture home, and a connection writing it as opencode does (WAL, never checkpointed). */
  function writtenHome(): { home: string; write: (sql: string) => void; close: () => void } {
    const home = path.join(tempDir(), 'home');
    cpSync(path.join(FIXTURES, 'opencode'), home, { recursive: true });
    const sqlite = process.getBuiltinModule('node:sqlite') as { DatabaseSync: new (file: string) => { exec(sql: string): void; close(): void } };
    const db = new sqlite.DatabaseSync(path.join(home, 'opencode.db'));
    db.exec('PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;');
    return { home, write: (sql) => db.exec(sql), close: () => db.close() };
  }
  const insert = (id: string): string =>
    `INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('${id}', 'global', 's', '/w', 'New', '1', 1796600000000, 1796600000000)`;

  it('lists a commit, a rename and a deletion through the watch on the home, told once each, and not a write that changes no row', async () => {
    const { home, write, close } = writtenHome();
    const store = openForeignStore('opencode', home, { tuning: { notifyThrottleMs: 0 } });
    let fired = 0;
    store.onDidChange(() => fired++);
    const before = await store.listSessions();
    write(insert('ses_new'));
    await listedUntil(store, (listing) => listing.some((s) => s.id === 'ses_new'), 'the committed session never appeared');
    write(`UPDATE session SET title = 'Renamed' WHERE id = '${OC_CHAT}'`);
    await listedUntil(store, (listing) => listing.find((s) => s.id === OC_CHAT)?.title === 'Renamed', 'the rename never showed');
    await vi.waitFor(() => expect(fired).toBe(2));
    const renamed = await store.listSessions();
    // A write that changes no row: a read looks at the database again, and the listing stays the same array.
    write(`UPDATE session SET time_updated = time_updated + 1 WHERE id = '${OC_CHAT}'`);
    await store.readSurface(OC_CHAT);
    expect(await store.listSessions()).toBe(renamed);
    write("DELETE FROM session WHERE id = 'ses_new'");
    await listedUntil(store, (listing) => !listing.some((s) => s.id === 'ses_new'), 'the deleted session was still listed');
    expect(renamed).not.toBe(before);
    await vi.waitFor(() => expect(fired).toBe(3));
    store.dispose();
    close();
  });

  it('tells content listeners of a commit that changes no row (every listed session), and not listing ones', async () => {
    const { home, write, close } = writtenHome();
    const store = openForeignStore('opencode', home, { tuning: { notifyThrottleMs: 0 } });
    let fired = 0;
    const contents: string[][] = [];
    store.onDidChange(() => fired++);
    store.onDidChangeContent((sessions) => contents.push(sessions.map((key) => `${key.agent ?? 'dsh'}:${key.id}`)));
    const before = await store.listSessions();
    write(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_new', '${OC_CHAT}', 1, 1, '{"role":"user"}')`);
    await vi.waitFor(() => expect(contents.some((sessions) => sessions.includes(`opencode:${OC_CHAT}`))).toBe(true), { timeout: 20_000 });
    expect(contents.at(-1)).toEqual(before.map((row) => `opencode:${row.id}`));
    expect(await store.listSessions()).toBe(before);
    expect(fired).toBe(0);
    store.dispose();
    close();
  });

  it('finds a commit by the sweep alone when the home cannot be watched', async () => {
    const { home, write, close } = writtenHome();
    const noWatches = () => {
      throw Object.assign(new Error('no space left for watches'), { code: 'ENOSPC' });
    };
    const store = openForeignStore('opencode', home, { tuning: { watchFactory: noWatches, sweepPeriodMs: 50 } });
    await store.listSessions();
    write(insert('ses_swept'));
    await listedUntil(store, (listing) => listing.some((s) => s.id === 'ses_swept'), 'the sweep never found the commit');
    store.dispose();
    close();
  });

  it('reads a session committed a moment ago before any watch reported it, and holds nothing once disposed', async () => {
    const { home, write, close } = writtenHome();
    const inert = () => ({ close() {}, on() {} }) as unknown as import('node:fs').FSWatcher;
    const store = openForeignStore('opencode', home, { tuning: { watchFactory: inert, sweepPeriodMs: 600_000 } });
    await store.listSessions();
    write(insert('ses_unseen'));
    write(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_1', 'ses_unseen', 1, 1, '{"role":"user"}')`);
    write(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_1', 'msg_1', 'ses_unseen', 1, 1, '{"type":"text","text":"just written"}')`);
    const surface = await store.readSurface('ses_unseen');
    expect(surface.events.map((event) => (event.data as { content: Array<{ text: string }> }).content[0]!.text)).toEqual(['just written']);
    const snapshot = (store as unknown as { snapshot: { folder: string } }).snapshot.folder;
    expect(existsSync(snapshot)).toBe(true);
    const handles = (store as unknown as { handles(): { watches: number; timers: number } }).handles;
    store.dispose();
    expect(handles.call(store)).toEqual({ watches: 0, timers: 0 });
    expect(existsSync(snapshot)).toBe(false);
    close();
  });
});

describe('gemini store: the project folders’ cwds, the cache and the CLI’s other files', () => {
  const GM_SHORT = 'b2000002-7a1e-4c5d-9b2a-3f4e5d6c7b02';
  const chatsA = path.join('tmp', 'proj-a', 'chats');
  const shortFile = (home: string) => path.join(home, chatsA, readdirSync(path.join(home, chatsA)).find((name) => name.includes(GM_SHORT.slice(0, 8)))!);

  it('reads every file once, a restart reads none, and the cwds still come from projects.json and the markers', async () => {
    const { home, cacheDir } = homeAndCache('gemini');
    const first = counted('gemini', home, { cacheDir });
    const listed = await listAndCache(first.store, cacheDir);
    expect(listed).toHaveLength(4);
    expect(first.reads).toHaveLength(4);
    expect(listed.every((s) => s.cwd?.startsWith('/tmp/dsh-agent-fixtures-gemini/') === true)).toBe(true);
    first.store.dispose();
    const second = counted('gemini', home, { cacheDir });
    expect(await second.store.listSessions()).toEqual(listed);
    expect(second.reads).toEqual([]);
  });

  it('never reads the session-named files of logs/ or a subagent folder, and a new project folder is listed with its marker’s cwd', async () => {
    const { home } = homeAndCache('gemini');
    const source = readFileSync(shortFile(home), 'utf8');
    const planted = (dir: string, name: string) => {
      mkdirSync(path.join(home, dir), { recursive: true });
      writeFileSync(path.join(home, dir, name), source.replaceAll(GM_SHORT, 'f0000000-0000-4000-8000-00000000000f'));
    };
    planted(path.join('tmp', 'proj-a', 'logs'), 'session-f0000000-0000-4000-8000-00000000000f.jsonl');
    planted(path.join(chatsA, GM_SHORT), 'session-2026-12-06T10-35-f0000000.jsonl');
    const { store, reads, logged } = counted('gemini', home);
    const listing = await store.listSessions();
    expect(listing).toHaveLength(4);
    expect(reads.every((key) => key.split(path.sep)[2] === 'chats' && key.split(path.sep).length === 4)).toBe(true);
    expect(logged).toEqual([]);

    // A new project, its folder and marker written as the CLI writes them, then its first session.
    const newId = 'e5000005-7a1e-4c5d-9b2a-3f4e5d6c7b05';
    const project = path.join(home, 'tmp', 'proj-new');
    mkdirSync(path.join(project, 'chats'), { recursive: true });
    writeFileSync(path.join(project, '.project_root'), '/work/proj new');
    writeFileSync(path.join(project, 'chats', 'session-2026-12-07T09-00-e5000005.jsonl'), source.replaceAll(GM_SHORT, newId));
    const withNew = await listedUntil(store, (found) => found.some((s) => s.id === newId), 'the new project’s session never appeared');
    expect(withNew.find((s) => s.id === newId)!.cwd).toBe('/work/proj new');
  });

  it('lists the cwds of a projects.json and a marker rewritten while it runs, seen by the watches', async () => {
    const { home } = homeAndCache('gemini');
    const { store } = counted('gemini', home, { tuning: { sweepPeriodMs: 3_600_000 } });
    expect((await store.listSessions()).find((s) => s.id === GM_SHORT)!.cwd).toBe('/tmp/dsh-agent-fixtures-gemini/proj a');
    // The marker gone, the registry names the folder: rewritten as the CLI rewrites it (renamed in).
    rmSync(path.join(home, 'tmp', 'proj-a', '.project_root'));
    const temp = path.join(path.dirname(home), 'projects.json.tmp');
    writeFileSync(temp, JSON.stringify({ projects: { '/moved/proj a': 'proj-a' } }));
    renameSync(temp, path.join(home, 'projects.json'));
    await listedUntil(store, (listing) => listing.find((s) => s.id === GM_SHORT)?.cwd === '/moved/proj a', 'the rewritten registry was never read');
    // A marker written again wins over the registry.
    writeFileSync(path.join(home, 'tmp', 'proj-a', '.project_root'), '/marked/proj a');
    await listedUntil(store, (listing) => listing.find((s) => s.id === GM_SHORT)?.cwd === '/marked/proj a', 'the new marker was never read');
  });

  it('sees a marker change by the sweep alone when no folder can be watched', async () => {
    const { home } = homeAndCache('gemini');
    const noWatches = () => {
      throw Object.assign(new Error('no space left for watches'), { code: 'ENOSPC' });
    };
    const { store } = counted('gemini', home, { tuning: { watchFactory: noWatches, sweepPeriodMs: 50, sweepCostFactor: 0 } });
    expect((await store.listSessions()).find((s) => s.id === GM_SHORT)!.cwd).toBe('/tmp/dsh-agent-fixtures-gemini/proj a');
    writeFileSync(path.join(home, 'tmp', 'proj-a', '.project_root'), '/swept/proj a\n');
    await listedUntil(store, (listing) => listing.find((s) => s.id === GM_SHORT)?.cwd === '/swept/proj a', 'the sweep never read the marker again');
    // Gone: the registry names the folder again.
    rmSync(path.join(home, 'tmp', 'proj-a', '.project_root'));
    await listedUntil(store, (listing) => listing.find((s) => s.id === GM_SHORT)?.cwd === '/tmp/dsh-agent-fixtures-gemini/proj a', 'the gone marker was still used');
  });

  it('reads only the appended bytes of a session being written, and its row equals a read from byte 0', async () => {
    const { home } = homeAndCache('gemini');
    const { store } = counted('gemini', home);
    await store.listSessions();
    const resumed = () => (store as unknown as { resumedReads: number }).resumedReads;
    for (const summary of ['First title', 'Second title']) {
      const before = resumed();
      appendFileSync(shortFile(home), JSON.stringify({ $set: { summary } }) + '\n');
      await eventually(() => expect(resumed()).toBe(before + 1), 'the append was not read from where the last read stopped');
    }
    expect((await store.listSessions()).find((s) => s.id === GM_SHORT)?.title).toBe('Second title');
    expect(await store.listSessions()).toEqual(await counted('gemini', home).store.listSessions());
  });

  it('takes no cwds from a projects.json over 4 MiB, and the markers still name theirs', async () => {
    const { home } = homeAndCache('gemini');
    rmSync(path.join(home, 'tmp', 'proj-a', '.project_root'));
    const registry = (pad: number) => JSON.stringify({ projects: { '/big/proj a': 'proj-a' }, pad: 'x'.repeat(pad) });
    writeFileSync(path.join(home, 'projects.json'), registry(4 * 1024 * 1024));
    const listing = await counted('gemini', home).store.listSessions();
    expect(listing.find((s) => s.id === GM_SHORT)!.cwd).toBeUndefined();
    expect(listing.filter((s) => s.cwd?.startsWith('/tmp/dsh-agent-fixtures-gemini/') === true)).toHaveLength(2);
    writeFileSync(path.join(home, 'projects.json'), registry(1024));
    expect((await counted('gemini', home).store.listSessions()).find((s) => s.id === GM_SHORT)!.cwd).toBe('/big/proj a');
  });

  it('reads a history of megabytes replaced in one $set.messages line: a long line of text, not one dense in values', async () => {
    const { home } = homeAndCache('gemini');
    // Every message the CLI wrote for the fixture session (prompts, replies with their tokens, tool calls and results).
    const fixture = readdirSync(path.join(home, chatsA)).find((name) => name.includes('a1000001'))!;
    const written = new Map<string, Record<string, unknown>>();
    for (const line of readFileSync(path.join(home, chatsA, fixture), 'utf8').split('\n').filter((text) => text !== '')) {
      const record = JSON.parse(line) as { $set?: { messages?: Array<Record<string, unknown>> }; id?: string; type?: string };
      for (const message of record.$set?.messages ?? (typeof record.id === 'string' && typeof record.type === 'string' ? [record] : [])) written.set(message.id as string, message);
    }
    // A long session resumed: the CLI writes its whole history again in one line.
    const history: Array<Record<string, unknown>> = [];
    for (let turn = 0; history.length < 20_000; turn++) {
      for (const message of written.values()) history.push({ ...message, id: `${String(message.id)}-${turn}` });
    }
    history.push({ id: 'last-prompt', timestamp: '2026-12-06T11:00:00.000Z', type: 'user', content: [{ text: 'The last prompt of a long history' }] });
    const line = JSON.stringify({ $set: { messages: history, lastUpdated: '2026-12-06T11:00:00.000Z' } });
    expect(Buffer.byteLength(line)).toBeGreaterThan(4 * 1024 * 1024);
    appendFileSync(shortFile(home), line + '\n');
    const { store, logged } = counted('gemini', home);
    expect((await store.listSessions()).map((s) => s.id)).toContain(GM_SHORT);
    const prompts = (await store.readSurface(GM_SHORT)).events.filter((event) => event.type === 'user/message').map((event) => (event.data as { content: Array<{ text: string }> }).content[0]!.text);
    expect(prompts.at(-1)).toBe('The last prompt of a long history');
    expect(prompts.filter((text) => text === 'Hello gemini, first turn about the parser').length).toBeGreaterThan(1000);
    expect(logged).toEqual([]);
  });
});
