import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelledError } from '../resolver';
import { findMentionableFiles } from './fileMentions';
import { directoryLister } from '../settings/workspaceFileSystem';
import { WorkspaceFiles, type ListingOutcome, type ListingRequest, type WorkspaceEntry, type WorkspaceLister } from './workspaceFiles';

/** A settable clock. */
function clock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => void (time += ms) };
}

/** An in-memory lister that records every read; its folders' names are changed between reads by the test. */
function memoryLister(contents: Map<string, string[]>) {
  const walks: ListingRequest[] = [];
  const lister: WorkspaceLister = async (request) => {
    walks.push(request);
    const names = contents.get(request.folder) ?? [];
    return { entries: names.map((name) => entry(name)), cut: false, failed: false };
  };
  return { lister, walks };
}

/** A lister whose reads stay open until the test settles them. */
function controlledLister() {
  const pending: { request: ListingRequest; signal: AbortSignal; resolve(outcome: ListingOutcome): void; reject(error: unknown): void }[] = [];
  const lister: WorkspaceLister = (request, signal) =>
    new Promise((resolve, reject) => {
      pending.push({ request, signal, resolve, reject });
      signal.addEventListener('abort', () => reject(cancelledError(signal)), { once: true });
    });
  return { lister, pending };
}

const entry = (name: string, directory = false): WorkspaceEntry => ({ name, lowerName: name.toLowerCase(), directory, link: false });
const outcome = (...names: string[]): ListingOutcome => ({ entries: names.map((name) => entry(name)), cut: false, failed: false });
const names = (listing: { entries: readonly { name: string }[] }) => listing.entries.map((child) => child.name);

/** Resolves once `condition` holds (polled; a generous deadline, no timing assertion). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('workspace listing snapshots', () => {
  it('answer the next queries within their age from memory, without a walk', async () => {
    const time = clock();
    const { lister, walks } = memoryLister(new Map([['/w', ['a.md']]]));
    const files = new WorkspaceFiles({ lister, now: time.now, maxAgeMs: 2000 });
    expect(names(await files.children('/w', '/w'))).toEqual(['a.md']);
    time.advance(999);
    expect(names(await files.children('/w', '/w'))).toEqual(['a.md']);
    expect(walks).toHaveLength(1);
  });

  it('are kept per folder and per workspace folder', async () => {
    const { lister, walks } = memoryLister(new Map());
    const files = new WorkspaceFiles({ lister, now: clock().now, maxEntries: 7 });
    for (let round = 0; round < 2; round++) {
      await files.children('/w', '/w');
      await files.children('/w/src', '/w');
      // Another workspace folder decides differently what lies inside: its own snapshot.
      await files.children('/w/src', '/w/src');
    }
    expect(walks).toEqual([
      { folder: '/w', root: '/w', limit: 7 },
      { folder: '/w/src', root: '/w', limit: 7 },
      { folder: '/w/src', root: '/w/src', limit: 7 },
    ]);
  });

  it('list entries in name order whatever order the lister gives', async () => {
    const files = new WorkspaceFiles({ lister: async () => outcome('b.md', 'C.md', 'a.md', '.x'), now: clock().now });
    expect(names(await files.children('/w', '/w'))).toEqual(['.x', 'C.md', 'a.md', 'b.md']);
  });

  it('keep at most maxKeptEntries entries in all (a bigger listing is answered, not kept)', async () => {
    const { lister, walks } = memoryLister(new Map([['/a', ['1', '2']], ['/b', ['1', '2']], ['/big', ['1', '2', '3', '4', '5']]]));
    const files = new WorkspaceFiles({ lister, now: clock().now, maxKeptEntries: 4 });
    await files.children('/a', '/');
    await files.children('/b', '/');
    await files.children('/a', '/');
    expect(walks).toHaveLength(2);
    expect(names(await files.children('/big', '/'))).toHaveLength(5);
    await files.children('/big', '/');
    await files.children('/a', '/');
    await files.children('/b', '/');
    expect(walks.map((walk) => walk.folder)).toEqual(['/a', '/b', '/big', '/big']);
  });

  it('walk again once expired, and the answer waits for it (a new file shows up)', async () => {
    const time = clock();
    const contents = new Map([['/w', ['a.md']]]);
    const { lister, walks } = memoryLister(contents);
    const files = new WorkspaceFiles({ lister, now: time.now, maxAgeMs: 2000 });
    await files.children('/w', '/w');
    contents.set('/w', ['a.md', 'new.md']);
    time.advance(2000);
    expect(names(await files.children('/w', '/w'))).toEqual(['a.md', 'new.md']);
    expect(walks).toHaveLength(2);
  });

  it('past half their age answer from memory and refresh in the background', async () => {
    const time = clock();
    const contents = new Map([['/w', ['a.md']]]);
    const { lister, walks } = memoryLister(contents);
    const files = new WorkspaceFiles({ lister, now: time.now, maxAgeMs: 2000 });
    await files.children('/w', '/w');
    contents.set('/w', ['a.md', 'new.md']);
    time.advance(1500);
    expect(names(await files.children('/w', '/w'))).toEqual(['a.md']);
    await until(() => walks.length === 2);
    // The refresh's snapshot counts its age from its own walk: 2,400 ms after the first it answers, walking nothing.
    await new Promise((resolve) => setTimeout(resolve, 0));
    time.advance(900);
    expect(names(await files.children('/w', '/w'))).toEqual(['a.md', 'new.md']);
    expect(walks).toHaveLength(2);
  });

  it('share one walk between concurrent requests', async () => {
    const { lister, pending } = controlledLister();
    const files = new WorkspaceFiles({ lister, now: clock().now });
    const first = files.children('/w', '/w');
    const second = files.children('/w', '/w');
    await until(() => pending.length > 0);
    pending[0]!.resolve(outcome('x'));
    expect(names(await first)).toEqual(['x']);
    expect(names(await second)).toEqual(['x']);
    expect(pending).toHaveLength(1);
  });

  it('answer CANCELLED to a cancelled request; the walk goes on for the others and stops when none is left', async () => {
    const { lister, pending } = controlledLister();
    const files = new WorkspaceFiles({ lister, now: clock().now });
    const one = new AbortController();
    const two = new AbortController();
    const first = files.children('/w', '/w', one.signal);
    const second = files.children('/w', '/w', two.signal);
    await until(() => pending.length === 1);
    one.abort(new Error('typed on'));
    await expect(first).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(pending[0]!.signal.aborted).toBe(false);
    two.abort(new Error('typed on'));
    await expect(second).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(pending[0]!.signal.aborted).toBe(true);
    // Nothing of the stopped walk is kept: the next request walks.
    const third = files.children('/w', '/w');
    await until(() => pending.length === 2);
    pending[1]!.resolve(outcome('y'));
    expect(names(await third)).toEqual(['y']);
    // An already cancelled request starts no walk.
    const aborted = AbortSignal.abort(new Error('gone'));
    await expect(files.children('/w', '/w', aborted)).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(pending).toHaveLength(2);
  });

  it('keep nothing of a failed walk: the next request walks again', async () => {
    const { lister, pending } = controlledLister();
    const files = new WorkspaceFiles({ lister, now: clock().now });
    const first = files.children('/w', '/w');
    await until(() => pending.length === 1);
    pending[0]!.reject(new Error('EIO'));
    await expect(first).rejects.toThrow('EIO');
    const second = files.children('/w', '/w');
    await until(() => pending.length === 2);
    // A walk that ended on an error answers what it found, but is not kept either.
    pending[1]!.resolve({ ...outcome('partial'), failed: true });
    expect(names(await second)).toEqual(['partial']);
    const third = files.children('/w', '/w');
    await until(() => pending.length === 3);
    pending[2]!.resolve(outcome('whole'));
    expect(names(await third)).toEqual(['whole']);
    expect(names(await files.children('/w', '/w'))).toEqual(['whole']);
    expect(pending).toHaveLength(3);
  });

  it('keep at most maxSnapshots, dropping the least recently used', async () => {
    const { lister, walks } = memoryLister(new Map());
    const files = new WorkspaceFiles({ lister, now: clock().now, maxSnapshots: 2 });
    await files.children('/a', '/w');
    await files.children('/b', '/w');
    await files.children('/a', '/w');
    await files.children('/c', '/w');
    expect(walks).toHaveLength(3);
    await files.children('/a', '/w');
    expect(walks).toHaveLength(3);
    await files.children('/b', '/w');
    expect(walks.map((walk) => walk.folder)).toEqual(['/a', '/b', '/c', '/b']);
  });

  it('never trust a snapshot from the future (a clock set back)', async () => {
    const time = clock();
    const { lister, walks } = memoryLister(new Map());
    const files = new WorkspaceFiles({ lister, now: time.now });
    await files.children('/w', '/w');
    time.advance(-10_000);
    await files.children('/w', '/w');
    expect(walks).toHaveLength(2);
  });
});

describe('searches by name', () => {
  it('stop their reads when cancelled, and the next keystroke goes on from where they got', async () => {
    const { lister, pending } = controlledLister();
    const files = new WorkspaceFiles({ lister, now: clock().now });
    const controller = new AbortController();
    const first = findMentionableFiles('/w', 'n', 50, { files, join: path.posix.join, signal: controller.signal });
    await until(() => pending.length === 1);
    pending[0]!.resolve({ entries: [entry('a', true), entry('b', true)], cut: false, failed: false });
    await until(() => pending.length === 3);
    controller.abort(new Error('typed on'));
    await expect(first).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(pending.slice(1).every((read) => read.signal.aborted)).toBe(true);
    const second = findMentionableFiles('/w', 'ne', 50, { files, join: path.posix.join });
    await until(() => pending.length === 5);
    for (const read of pending.slice(3)) read.resolve(read.request.folder === '/w/b' ? outcome('needle.md') : outcome('x.md'));
    expect(await second).toEqual({ entries: [{ path: 'b/needle.md', directory: false }], incomplete: false });
    // The top folder was read once: the second request went on from the first one's progress.
    expect(pending.map((read) => read.request.folder)).toEqual(['/w', '/w/b', '/w/a', '/w/b', '/w/a']);
  });

  it('answer CANCELLED to a request cancelled while it waits for the previous one', async () => {
    const { lister, pending } = controlledLister();
    const files = new WorkspaceFiles({ lister, now: clock().now });
    const first = findMentionableFiles('/w', 'n', 50, { files, join: path.posix.join });
    await until(() => pending.length === 1);
    const controller = new AbortController();
    const second = findMentionableFiles('/w', 'ne', 50, { files, join: path.posix.join, signal: controller.signal });
    controller.abort(new Error('typed on'));
    await expect(second).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    pending[0]!.resolve(outcome('needle.md', 'nothing.md'));
    expect((await first).entries.map((found) => found.path)).toEqual(['needle.md', 'nothing.md']);
    expect(pending).toHaveLength(1);
  });
});

describe('file-mention search over snapshots of a real folder', () => {
  let base: string;

  beforeAll(() => {
    base = mkdtempSync(path.join(os.tmpdir(), 'dsh-workspace-files-'));
    for (const file of ['src/server.ts', 'src/deep/session.ts', 'docs/setup.md', 'README.md']) {
      mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
      writeFileSync(path.join(base, file), 'x');
    }
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  /** Snapshots over the real lister, counting its walks. */
  function countedFiles() {
    const time = clock();
    const walks: ListingRequest[] = [];
    const files = new WorkspaceFiles({
      now: time.now,
      maxAgeMs: 2000,
      lister: (request, signal) => {
        walks.push(request);
        return directoryLister(request, signal);
      },
    });
    const find = async (query: string, signal?: AbortSignal) =>
      (await findMentionableFiles(base, query, 50, { files, join: path.join, ...(signal === undefined ? {} : { signal }) })).entries.map((entry) => entry.path);
    return { time, walks, find };
  }

  it('answers the keystrokes of a token reading each folder once', async () => {
    const { walks, find } = countedFiles();
    expect(await find('s')).toEqual(['src', 'docs/setup.md', 'src/server.ts', 'src/deep/session.ts']);
    expect(await find('se')).toEqual(['docs/setup.md', 'src/server.ts', 'src/deep/session.ts']);
    expect(await find('ser')).toEqual(['src/server.ts']);
    expect(await find('src/')).toEqual(['src/deep', 'src/server.ts']);
    expect(await find('src/s')).toEqual(['src/server.ts']);
    expect(walks.map((walk) => walk.folder).sort()).toEqual([base, path.join(base, 'docs'), path.join(base, 'src'), path.join(base, 'src', 'deep')]);
  });

  it('offers a file created after the snapshot expired', async () => {
    const { time, find } = countedFiles();
    expect(await find('src/')).toEqual(['src/deep', 'src/server.ts']);
    expect(await find('ne')).toEqual([]);
    writeFileSync(path.join(base, 'src', 'new.ts'), 'x');
    try {
      time.advance(2000);
      expect(await find('src/')).toEqual(['src/deep', 'src/new.ts', 'src/server.ts']);
      expect(await find('ne')).toEqual(['src/new.ts']);
    } finally {
      rmSync(path.join(base, 'src', 'new.ts'));
    }
  });

  it('answers CANCELLED when cancelled during a read, and stops the read', async () => {
    const walkSignals: AbortSignal[] = [];
    const files = new WorkspaceFiles({
      now: clock().now,
      lister: (_request, signal) => {
        walkSignals.push(signal);
        return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(cancelledError(signal)), { once: true }));
      },
    });
    const controller = new AbortController();
    const found = findMentionableFiles(base, 'se', 50, { files, join: path.join, signal: controller.signal });
    await until(() => walkSignals.length === 1);
    controller.abort(new Error('typed on'));
    await expect(found).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(walkSignals.every((signal) => signal.aborted)).toBe(true);
  });

  it('cuts a folder at maxEntries and says so', async () => {
    const files = new WorkspaceFiles({ lister: directoryLister, now: clock().now, maxEntries: 2 });
    const listing = await files.children(base, base);
    expect(listing.entries).toHaveLength(2);
    expect(listing.cut).toBe(true);
    expect((await findMentionableFiles(base, 's', 50, { files, join: path.join })).incomplete).toBe(true);
  });
});

describe('file-mention search over a large workspace', () => {
  let base: string;

  beforeAll(() => {
    // `aaa/` holds more files than a first-N walk ever reached; what sorts after it must still be found.
    base = mkdtempSync(path.join(os.tmpdir(), 'dsh-workspace-large-'));
    mkdirSync(path.join(base, 'aaa'));
    for (let i = 0; i < 6000; i++) writeFileSync(path.join(base, 'aaa', `f${i}`), '');
    for (let d = 0; d < 40; d++) {
      mkdirSync(path.join(base, 'mmm', `d${String(d).padStart(2, '0')}`), { recursive: true });
      for (let i = 0; i < 10; i++) writeFileSync(path.join(base, 'mmm', `d${String(d).padStart(2, '0')}`, `m${i}.md`), '');
    }
    mkdirSync(path.join(base, 'zzz'));
    writeFileSync(path.join(base, 'zzz', 'needle.md'), '');
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  /** Snapshots over the real lister, counting the entries it reads. */
  function countedFiles(options: { maxVisitsPerRequest?: number; order?: (entries: WorkspaceEntry[]) => WorkspaceEntry[] } = {}) {
    const reads: string[] = [];
    let entriesRead = 0;
    const files = new WorkspaceFiles({
      now: clock().now,
      ...(options.maxVisitsPerRequest === undefined ? {} : { maxVisitsPerRequest: options.maxVisitsPerRequest }),
      lister: async (request, signal) => {
        reads.push(path.relative(base, request.folder));
        const read = await directoryLister(request, signal);
        entriesRead += read.entries.length;
        return options.order === undefined ? read : { ...read, entries: options.order([...read.entries]) };
      },
    });
    const find = (query: string, limit = 50) => findMentionableFiles(base, query, limit, { files, join: path.join });
    return { reads, find, entriesRead: () => entriesRead };
  }

  it('finds a file past the first 5,000 entries by its name, and says the list is complete', async () => {
    const { find } = countedFiles();
    expect(await find('nee')).toEqual({ entries: [{ path: 'zzz/needle.md', directory: false }], incomplete: false });
    expect(await find('f5999')).toEqual({ entries: [{ path: 'aaa/f5999', directory: false }], incomplete: false });
  });

  it('finds a file of a folder holding 6,000 by its path', async () => {
    const { find } = countedFiles();
    expect(await find('aaa/f5999')).toEqual({ entries: [{ path: 'aaa/f5999', directory: false }], incomplete: false });
  });

  it('says incomplete when the list is cut, and stops reading once the first ones are certain', async () => {
    const { find, reads } = countedFiles();
    const found = await find('f', 3);
    expect(found).toEqual({ entries: ['aaa/f0', 'aaa/f1', 'aaa/f10'].map((file) => ({ path: file, directory: false })), incomplete: true });
    // mmm/'s folders hold only deeper entries: not read.
    expect(reads.sort()).toEqual(['', 'aaa', 'mmm', 'zzz']);
  });

  it('answers the same for the same tree, whatever order the folders are read in', async () => {
    const shuffle = (entries: WorkspaceEntry[]) => entries.sort(() => Math.random() - 0.5);
    const first = await countedFiles({ order: shuffle }).find('m');
    const second = await countedFiles({ order: (entries) => entries.reverse() }).find('m');
    expect(first).toEqual(second);
    expect(first.entries[0]).toEqual({ path: 'mmm', directory: true });
  });

  it('reads at most its budget per request (plus the folders in hand when it ran out), and the next keystroke goes on from there', async () => {
    const { find, reads, entriesRead } = countedFiles({ maxVisitsPerRequest: 100 });
    const answers: { entries: unknown[]; incomplete: boolean }[] = [];
    const perRequest: number[] = [];
    for (const query of ['n', 'ne', 'nee', 'need', 'needl', 'needle', 'needle.', 'needle.m', 'needle.md']) {
      const before = entriesRead();
      answers.push(await find(query));
      perRequest.push(entriesRead() - before);
    }
    // Each request reads at most the budget plus the folder it was in when the budget ran out, and those read alongside.
    expect(Math.max(...perRequest)).toBeLessThanOrEqual(100 + 6000 + 7 * 10);
    const firstFound = answers.findIndex((answer) => answer.entries.length > 0);
    expect(firstFound).toBeGreaterThan(0);
    // Until then the answer says a longer name may find more; once everything was read, it does not.
    expect(answers.slice(0, firstFound).every((answer) => answer.incomplete)).toBe(true);
    expect(answers.at(-1)).toEqual({ entries: [{ path: 'zzz/needle.md', directory: false }], incomplete: false });
    // Continued, never restarted: each folder read once.
    expect(new Set(reads).size).toBe(reads.length);
    expect(reads).toHaveLength(1 + 3 + 40);
  });

  it('searches afresh (from the snapshots) for a name that does not extend the last one', async () => {
    const { find, reads } = countedFiles({ maxVisitsPerRequest: 100 });
    expect((await find('nee')).incomplete).toBe(true);
    expect((await find('f5999')).entries).toEqual([{ path: 'aaa/f5999', directory: false }]);
    // The folders read for the first name are not read again (their snapshots answer).
    expect(new Set(reads).size).toBe(reads.length);
  });
});
