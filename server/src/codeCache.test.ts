import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codeCacheDirectories, codeCacheName, loadSiblingBundle, NO_CODE_CACHE_ENV, requireWithCodeCache } from './codeCache';

const scratches: string[] = [];
afterEach(() => {
  for (const dir of scratches.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A `bundle/` directory holding a CommonJS file that uses its require, module, __filename and __dirname. */
function bundleDir(source = BUNDLE_SOURCE): { dir: string; file: string; userCache: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'dsh-code-cache-'));
  scratches.push(root);
  const dir = path.join(root, 'bundle');
  mkdirSync(dir);
  const file = path.join(dir, 'sample.js');
  writeFileSync(file, source);
  writeFileSync(path.join(dir, 'helper.js'), 'module.exports = { twice: (n) => 2 * n };\n');
  return { dir, file, userCache: path.join(root, 'user-cache') };
}

const BUNDLE_SOURCE = `'use strict';
const path = require('node:path');
const helper = require('./helper.js');
let calls = 0;
function work(n) { calls++; let total = 0; for (let i = 0; i < n; i++) total += helper.twice(i); return total; }
module.exports = { work, calls: () => calls, file: __filename, dir: path.basename(__dirname), self: module.filename };
`;

function load(file: string, env: NodeJS.ProcessEnv) {
  const loaded = requireWithCodeCache(file, { env });
  return { ...loaded, exports: loaded.exports as { work(n: number): number; calls(): number; file: string; dir: string; self: string } };
}

function cacheFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => name.endsWith('.v8'));
  } catch {
    return [];
  }
}

describe('requireWithCodeCache', () => {
  it('runs the bundle as require would and makes the cache once its top level has run', () => {
    const { dir, file, userCache } = bundleDir();
    const env = { XDG_CACHE_HOME: userCache };
    const first = load(file, env);
    expect(first.cache).toBe('missing');
    expect(first.exports.work(4)).toBe(12);
    expect(first.exports).toMatchObject({ file, dir: 'bundle', self: file });
    const stats = statSync(file);
    expect(cacheFiles(path.join(dir, 'code-cache'))).toEqual([codeCacheName(file, stats.size, stats.mtimeMs)]);

    // Whether V8 accepts it is seen only in a new process (this one's isolate keeps its own
    // compilation of the source): test/e2e/codeCache.test.ts.
  });

  it('makes the cache when asked later (the CLI: at exit), with the functions the run compiled since', () => {
    const atLoad = bundleDir();
    load(atLoad.file, { XDG_CACHE_HOME: atLoad.userCache });
    const [madeAtLoad] = cacheFiles(path.join(atLoad.dir, 'code-cache'));

    const { dir, file, userCache } = bundleDir();
    let make: (() => void) | undefined;
    const later = requireWithCodeCache(file, { env: { XDG_CACHE_HOME: userCache }, makeLater: (maker) => (make = maker) });
    expect(later.cache).toBe('missing');
    expect(cacheFiles(path.join(dir, 'code-cache'))).toEqual([]);
    expect((later.exports as { work(n: number): number }).work(4)).toBe(12);
    make!();
    const [madeLater] = cacheFiles(path.join(dir, 'code-cache'));
    expect(madeLater).toBe(codeCacheName(file, statSync(file).size, statSync(file).mtimeMs));
    // `work` was compiled after the top level ran: only the later cache holds its bytecode.
    expect(statSync(path.join(dir, 'code-cache', madeLater!)).size).toBeGreaterThan(statSync(path.join(atLoad.dir, 'code-cache', madeAtLoad!)).size);
  });

  it('names the cache after the bundle, so a rebuilt bundle never reads the old bytecode, and drops the old cache', () => {
    const { dir, file, userCache } = bundleDir();
    const env = { XDG_CACHE_HOME: userCache };
    load(file, env);
    // Same length, other code: V8's own check (source length and flags) would accept the old cache.
    writeFileSync(file, BUNDLE_SOURCE.replace('2 * n', '3 * n'));
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    // Another Node's cache of the same bundle is left alone; the old build's is removed.
    const otherNode = codeCacheName(file, 1, 1).replace(process.version, 'v0.0.1');
    writeFileSync(path.join(dir, 'code-cache', otherNode), 'another Node');
    const again = load(file, env);
    expect(again.cache).toBe('missing');
    const stats = statSync(file);
    expect(cacheFiles(path.join(dir, 'code-cache')).sort()).toEqual([codeCacheName(file, stats.size, stats.mtimeMs), otherNode].sort());
  });

  it("writes to the user's cache directory when the bundle's directory takes no cache, and reads it there", () => {
    const { dir, file, userCache } = bundleDir();
    writeFileSync(path.join(dir, 'code-cache'), 'a file where the directory would be');
    const env = { XDG_CACHE_HOME: userCache };
    load(file, env);
    const [, userDir] = codeCacheDirectories(file, env);
    expect(userDir).toBe(path.join(userCache, 'dsh-session-ls', 'code-cache'));
    expect(cacheFiles(userDir!)).toHaveLength(1);
    expect(readdirSync(userDir!).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(load(file, env).cache).not.toBe('missing'); // found there
  });

  it('is off when asked, and then leaves no file', () => {
    const { dir, file, userCache } = bundleDir();
    const off = load(file, { XDG_CACHE_HOME: userCache, [NO_CODE_CACHE_ENV]: '1' });
    expect(off.cache).toBe('off');
    expect(off.exports.work(2)).toBe(2);
    expect(cacheFiles(path.join(dir, 'code-cache'))).toEqual([]);
  });

  it('throws what the bundle throws, once, without running it a second time', () => {
    const marker = path.join(os.tmpdir(), `dsh-code-cache-runs-${process.pid}-${Date.now()}`);
    scratches.push(marker);
    const { file, userCache } = bundleDir(`require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'x'); throw new Error('bundle failed');\n`);
    expect(() => requireWithCodeCache(file, { env: { XDG_CACHE_HOME: userCache } })).toThrow('bundle failed');
    expect(readFileSync(marker, 'utf8')).toBe('x');
  });
});

describe('loadSiblingBundle', () => {
  it('loads a sibling only from a bundle directory, where the split build puts them', () => {
    const { dir } = bundleDir();
    const elsewhere = path.join(path.dirname(dir), 'dist');
    mkdirSync(elsewhere);
    writeFileSync(path.join(elsewhere, 'sample.js'), BUNDLE_SOURCE);
    expect(loadSiblingBundle('sample', elsewhere)).toBeUndefined();
    expect(loadSiblingBundle('absent', dir)).toBeUndefined();
    const loaded = loadSiblingBundle('sample', dir) as { work(n: number): number };
    expect(loaded.work(3)).toBe(6);
  });
});
