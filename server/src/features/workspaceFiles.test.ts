import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelledError } from '../resolver';
import { findMentionableFiles } from './fileMentions';
import { fastGlobLister } from '../settings/workspaceFileSystem';
import { WorkspaceFiles, type ListingOutcome, type ListingRequest, type WorkspaceLister } from './workspaceFiles';

/** A settable clock. */
function clock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => void (time += ms) };
}

/** An in-memory lister that records every walk; its folders' names are changed between walks by the test. */
function memoryLister(contents: Map<string, string[]>) {
  const walks: ListingRequest[] = [];
  const lister: WorkspaceLister = async (request) => {
    walks.push(request);
    const names = contents.get(request.folder) ?? [];
    return { entries: names.map((name) => ({ path: name, lowerName: name.toLowerCase(), directory: false })), cut: false, failed: false };
  };
  return { lister, walks };
}

/** A lister whose walks stay open until the test settles them. */
function controlledLister() {
  const pending: { request: ListingRequest; signal: AbortSignal; resolve(outcome: ListingOutcome): void; reject(error: unknown): void }[] = [];
  const lister: WorkspaceLister = (request, signal) =>
    new Promise((resolve, reject) => {
      pending.push({ request, signal, resolve, reject });
      signal.addEventListener('abort', () => reject(cancelledError(signal)), { once: true });
    });
  return { lister, pending };
}

const outcome = (...names: string[]): ListingOutcome => ({
  entries: names.map((name) => ({ path: name, lowerName: name, directory: false })),
  cut: false,
  failed: false,
});
const names = (listing: { entries: readonly { path: string }[] }) => listing.entries.map((entry) => entry.path);

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
    expect(names(await files.children('/w', false))).toEqual(['a.md']);
    time.advance(999);
    expect(names(await files.children('/w', false))).toEqual(['a.md']);
    expect(walks).toHaveLength(1);
  });

  it('are kept per folder, per one level or tree, per hidden or not', async () => {
    const { lister, walks } = memoryLister(new Map());
    const files = new WorkspaceFiles({ lister, now: clock().now, maxEntries: 7 });
    for (let round = 0; round < 2; round++) {
      await files.children('/w', false);
      await files.children('/w', true);
      await files.tree('/w', false);
      await files.tree('/w', true);
      await files.children('/w/src', false);
    }
    expect(walks).toEqual([
      { folder: '/w', deep: false, dot: false, limit: 7 },
      { folder: '/w', deep: false, dot: true, limit: 7 },
      { folder: '/w', deep: true, dot: false, limit: 7 },
      { folder: '/w', deep: true, dot: true, limit: 7 },
      { folder: '/w/src', deep: false, dot: false, limit: 7 },
    ]);
  });

  it('walk again once expired, and the answer waits for it (a new file shows up)', async () => {
    const time = clock();
    const contents = new Map([['/w', ['a.md']]]);
    const { lister, walks } = memoryLister(contents);
    const files = new WorkspaceFiles({ lister, now: time.now, maxAgeMs: 2000 });
    await files.children('/w', false);
    contents.set('/w', ['a.md', 'new.md']);
    time.advance(2000);
    expect(names(await files.children('/w', false))).toEqual(['a.md', 'new.md']);
    expect(walks).toHaveLength(2);
  });

  it('past half their age answer from memory and refresh in the background', async () => {
    const time = clock();
    const contents = new Map([['/w', ['a.md']]]);
    const { lister, walks } = memoryLister(contents);
    const files = new WorkspaceFiles({ lister, now: time.now, maxAgeMs: 2000 });
    await files.children('/w', false);
    contents.set('/w', ['a.md', 'new.md']);
    time.advance(1500);
    expect(names(await files.children('/w', false))).toEqual(['a.md']);
    await until(() => walks.length === 2);
    // The refresh's snapshot counts its age from its own walk: 2,400 ms after the first it answers, walking nothing.
    await new Promise((resolve) => setTimeout(resolve, 0));
    time.advance(900);
    expect(names(await files.children('/w', false))).toEqual(['a.md', 'new.md']);
    expect(walks).toHaveLength(2);
  });

  it('share one walk between concurrent requests', async () => {
    const { lister, pending } = controlledLister();
    const files = new WorkspaceFiles({ lister, now: clock().now });
    const first = files.tree('/w', false);
    const second = files.tree('/w', false);
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
    const first = files.children('/w', false, one.signal);
    const second = files.children('/w', false, two.signal);
    await until(() => pending.length === 1);
    one.abort(new Error('typed on'));
    await expect(first).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(pending[0]!.signal.aborted).toBe(false);
    two.abort(new Error('typed on'));
    await expect(second).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(pending[0]!.signal.aborted).toBe(true);
    // Nothing of the stopped walk is kept: the next request walks.
    const third = files.children('/w', false);
    await until(() => pending.length === 2);
    pending[1]!.resolve(outcome('y'));
    expect(names(await third)).toEqual(['y']);
    // An already cancelled request starts no walk.
    const aborted = AbortSignal.abort(new Error('gone'));
    await expect(files.tree('/w', false, aborted)).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(pending).toHaveLength(2);
  });

  it('keep nothing of a failed walk: the next request walks again', async () => {
    const { lister, pending } = controlledLister();
    const files = new WorkspaceFiles({ lister, now: clock().now });
    const first = files.children('/w', false);
    await until(() => pending.length === 1);
    pending[0]!.reject(new Error('EIO'));
    await expect(first).rejects.toThrow('EIO');
    const second = files.children('/w', false);
    await until(() => pending.length === 2);
    // A walk that ended on an error answers what it found, but is not kept either.
    pending[1]!.resolve({ ...outcome('partial'), failed: true });
    expect(names(await second)).toEqual(['partial']);
    const third = files.children('/w', false);
    await until(() => pending.length === 3);
    pending[2]!.resolve(outcome('whole'));
    expect(names(await third)).toEqual(['whole']);
    expect(names(await files.children('/w', false))).toEqual(['whole']);
    expect(pending).toHaveLength(3);
  });

  it('keep at most maxSnapshots, dropping the least recently used', async () => {
    const { lister, walks } = memoryLister(new Map());
    const files = new WorkspaceFiles({ lister, now: clock().now, maxSnapshots: 2 });
    await files.children('/a', false);
    await files.children('/b', false);
    await files.children('/a', false);
    await files.children('/c', false);
    expect(walks).toHaveLength(3);
    await files.children('/a', false);
    expect(walks).toHaveLength(3);
    await files.children('/b', false);
    expect(walks.map((walk) => walk.folder)).toEqual(['/a', '/b', '/c', '/b']);
  });

  it('never trust a snapshot from the future (a clock set back)', async () => {
    const time = clock();
    const { lister, walks } = memoryLister(new Map());
    const files = new WorkspaceFiles({ lister, now: time.now });
    await files.children('/w', false);
    time.advance(-10_000);
    await files.children('/w', false);
    expect(walks).toHaveLength(2);
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
        return fastGlobLister(request, signal);
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
    expect(walks.map((walk) => [walk.folder, walk.deep])).toEqual([
      [base, false],
      [base, true],
      [path.join(base, 'src'), false],
    ]);
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

  it('answers CANCELLED when cancelled during the walk, and stops the walk', async () => {
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
    await until(() => walkSignals.length === 2);
    controller.abort(new Error('typed on'));
    await expect(found).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(walkSignals.every((signal) => signal.aborted)).toBe(true);
  });

  it('cuts a walk at maxEntries and says so', async () => {
    const files = new WorkspaceFiles({ lister: fastGlobLister, now: clock().now, maxEntries: 2 });
    const listing = await files.tree(base, false);
    expect(listing.entries).toHaveLength(2);
    expect(listing.cut).toBe(true);
    expect((await findMentionableFiles(base, 's', 50, { files, join: path.join })).incomplete).toBe(true);
  });
});
