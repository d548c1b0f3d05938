import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeWorkSlices } from './concurrency';
import { nodeDirectoryFiles, type DirectoryFiles } from './directoryFiles';
import { discover, DISCOVERY_REASONS, keyPath } from './discovery';
import { dshLayout } from './formats/dshLayout';
import { inScope, scopeOfChange, scopeOfKey } from './layoutScopes';
import { sortedDiscovery, writeDiscoveryTree, writeTreeFile } from '../testing/discoveryTree';

let base: string;
let root: string;

function file(rel: string, content = 'x\n'): void {
  writeTreeFile(root, rel, content);
}

beforeAll(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'dsh-discovery-'));
  root = path.join(base, 'sessions');
  writeDiscoveryTree(root);
  file('--p--/flat2.jsonl.zstd');
  file('_no-cwd/e/session.jsonl');
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('discover', () => {
  it('finds transcripts in every directory under the root, dot-directories included, never through links', async () => {
    const result = await discover(root, { kind: 'root' });
    expect(result.transcripts.map((t) => t.key).sort()).toEqual([
      '--p--/a/session.jsonl',
      '--p--/b/session.jsonl.zstd',
      '--p--/both/session.jsonl',
      '--p--/both/session.jsonl.zstd',
      '.hidden/d/session.jsonl',
      '_no-cwd/e/session.jsonl',
    ]);
    const b = result.transcripts.find((t) => t.sessionDir === 'b');
    expect(b).toMatchObject({ projectDir: '--p--', key: '--p--/b/session.jsonl.zstd' });
  });

  it('reports flat files and symbolic links, and ignores stray root files, temp files and other names', async () => {
    const result = await discover(root, { kind: 'root' });
    expect(result.problems.sort((x, y) => (x.key < y.key ? -1 : 1))).toEqual([
      { key: '--linked-project--', reason: DISCOVERY_REASONS.symlink },
      { key: '--p--/flat.jsonl', reason: DISCOVERY_REASONS.flat },
      { key: '--p--/flat2.jsonl.zstd', reason: DISCOVERY_REASONS.flat },
      { key: '--p--/h/session.jsonl', reason: DISCOVERY_REASONS.symlink },
      { key: '--p--/linked-session', reason: DISCOVERY_REASONS.symlink },
    ]);
  });

  it('lists the real directories to watch, empty session directories included', async () => {
    const result = await discover(root, { kind: 'root' });
    expect(result.directories).toContain('--p--');
    expect(result.directories).toContain('--p--/empty-session');
    expect(result.directories).toContain('.hidden/d');
    expect(result.directories).not.toContain('--linked-project--');
    expect(result.directories).not.toContain('--p--/linked-session');
  });

  it('narrows to one project directory', async () => {
    const result = await discover(root, { kind: 'dir', dir: '--p--' });
    expect(result.transcripts.map((t) => t.key).sort()).toEqual([
      '--p--/a/session.jsonl',
      '--p--/b/session.jsonl.zstd',
      '--p--/both/session.jsonl',
      '--p--/both/session.jsonl.zstd',
    ]);
    expect(result.problems.map((p) => p.key).sort()).toEqual([
      '--p--/flat.jsonl',
      '--p--/flat2.jsonl.zstd',
      '--p--/h/session.jsonl',
      '--p--/linked-session',
    ]);
    expect(result.directories).toContain('--p--');
    const linked = await discover(root, { kind: 'dir', dir: '--linked-project--' });
    expect(linked.transcripts).toEqual([]);
    expect(linked.problems).toEqual([{ key: '--linked-project--', reason: DISCOVERY_REASONS.symlink }]);
    expect(await discover(root, { kind: 'dir', dir: '--missing--' })).toEqual({ transcripts: [], seen: new Map(), problems: [], directories: [] });
  });

  it('looks a session directory up by transcript name instead of listing it, synchronously or through the thread pool', async () => {
    const listed: string[] = [];
    const recording: DirectoryFiles = {
      ...nodeDirectoryFiles,
      readdirSync: (dir) => {
        listed.push(path.relative(root, dir));
        return nodeDirectoryFiles.readdirSync!(dir);
      },
    };
    const viaSync = sortedDiscovery(await discover(root, { kind: 'root' }, recording));
    // The root and the project directories are listed; no session directory is.
    expect(listed.sort()).toEqual(['', '--p--', '.hidden', '_no-cwd']);
    const { readdirSync: _readdirSync, lstatSync: _lstatSync, ...threadPoolOnly } = nodeDirectoryFiles;
    expect(sortedDiscovery(await discover(root, { kind: 'root' }, threadPoolOnly))).toEqual(viaSync);
    expect(viaSync.transcripts.map((t) => t.key)).not.toContain('--p--/dir-named-like-a-transcript/session.jsonl');
  });

  it('finishes a session directory after a pause when a time slice ends between its two names, looking each name up once', async () => {
    const plain = sortedDiscovery(await discover(root, { kind: 'root' }));
    const both = path.join(root, '--p--', 'both');
    const lookups: string[] = [];
    let dueAfterFirst: boolean | undefined;
    let dueAtSecond: boolean | undefined;
    const slicing: DirectoryFiles = {
      ...nodeDirectoryFiles,
      lstatSync(file) {
        if (path.dirname(file) === both) lookups.push(path.basename(file));
        if (file === path.join(both, 'session.jsonl')) {
          // This lookup takes the rest of the store's time slice (5 ms at most).
          for (const until = performance.now() + 100; !storeWorkSlices.due && performance.now() < until; );
          dueAfterFirst = storeWorkSlices.due;
        }
        if (file === path.join(both, 'session.jsonl.zstd')) dueAtSecond = storeWorkSlices.due;
        return nodeDirectoryFiles.lstatSync!(file);
      },
    };
    expect(sortedDiscovery(await discover(root, { kind: 'root' }, slicing))).toEqual(plain);
    expect(plain.transcripts.map((t) => t.key)).toEqual(expect.arrayContaining(['--p--/both/session.jsonl', '--p--/both/session.jsonl.zstd']));
    expect(dueAfterFirst).toBe(true);
    // The second name waited for the event loop's turn: a new slice had begun.
    expect(dueAtSecond).toBe(false);
    expect(lookups).toEqual(['session.jsonl', 'session.jsonl.zstd']);
  });

  it('narrows to one session directory or flat file', async () => {
    const a = await discover(root, { kind: 'dir', dir: '--p--/a' });
    expect(a.transcripts).toEqual([{ key: '--p--/a/session.jsonl', projectDir: '--p--', sessionDir: 'a' }]);
    expect(a.directories).toEqual(['--p--/a']);
    const flat = await discover(root, { kind: 'dir', dir: '--p--/flat.jsonl' });
    expect(flat.problems).toEqual([{ key: '--p--/flat.jsonl', reason: DISCOVERY_REASONS.flat }]);
    const link = await discover(root, { kind: 'dir', dir: '--p--/h' });
    expect(link.transcripts).toEqual([]);
    expect(link.problems).toEqual([{ key: '--p--/h/session.jsonl', reason: DISCOVERY_REASONS.symlink }]);
    const gone = await discover(root, { kind: 'dir', dir: '--p--/nope' });
    expect(gone).toEqual({ transcripts: [], seen: new Map(), problems: [], directories: [] });
  });

  it('scopes contain their own directory and everything below it', () => {
    expect(inScope('--p--/a/session.jsonl', { kind: 'dir', dir: '--p--' })).toBe(true);
    expect(inScope('--p--', { kind: 'dir', dir: '--p--' })).toBe(true);
    expect(inScope('--p--x/a/session.jsonl', { kind: 'dir', dir: '--p--' })).toBe(false);
    expect(inScope('--p--/a', { kind: 'dir', dir: '--p--/a' })).toBe(true);
    expect(inScope('--p--/ab/session.jsonl', { kind: 'dir', dir: '--p--/a' })).toBe(false);
    expect(inScope('anything', { kind: 'root' })).toBe(true);
  });

  it('maps a watch event to the scope to re-read', () => {
    expect(scopeOfChange(dshLayout, '', undefined)).toEqual({ kind: 'root' });
    expect(scopeOfChange(dshLayout, '', '--p--')).toEqual({ kind: 'dir', dir: '--p--' });
    expect(scopeOfChange(dshLayout, '--p--', undefined)).toEqual({ kind: 'dir', dir: '--p--' });
    expect(scopeOfChange(dshLayout, '--p--', 'a')).toEqual({ kind: 'dir', dir: '--p--/a' });
    expect(scopeOfChange(dshLayout, '--p--/a', 'session.jsonl')).toEqual({ kind: 'dir', dir: '--p--/a' });
    expect(scopeOfChange(dshLayout, '--p--/a', undefined)).toEqual({ kind: 'dir', dir: '--p--/a' });
    expect(scopeOfKey(dshLayout, '--p--/a/session.jsonl.zstd')).toEqual({ kind: 'dir', dir: '--p--/a' });
  });
});

describe('keyPath', () => {
  it('is path.join of the root and the key\'s segments, for every name a directory listing can give', () => {
    // Any name but '', '.', '..' and one holding a separator: what readdir returns.
    const name = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom('a', 'Z', '0', '.', '-', '_', '~', ' ', 'é', '😀', '\\', ':') }).filter((each) => each !== '.' && each !== '..');
    const root = fc.oneof(fc.constant(path.sep), fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => path.resolve(path.sep, ...parts)), fc.constant(path.resolve(os.tmpdir()) + path.sep));
    fc.assert(
      fc.property(root, fc.array(name, { minLength: 0, maxLength: 3 }), (base, segments) => {
        expect(keyPath(base, segments.join('/'))).toBe(path.join(base, ...segments));
      }),
      { numRuns: 2000 },
    );
  });
});
