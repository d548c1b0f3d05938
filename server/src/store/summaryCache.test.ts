import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { utimesSync } from 'node:fs';
import type { FileIdentity } from './transcriptFiles';
import { cacheDirInside, isWithin, loadSummaryCache, removeStaleTempFiles, saveSummaryCache, STALE_TEMP_MS, SUMMARY_CACHE_FORMAT, summaryCacheFile, type CachedSummary } from './summaryCache';

let dir: string;

/** The lines of a cache file (without the empty string after the last newline). */
function linesOf(text: string): string[] {
  return text.split('\n').filter((line, i, all) => i < all.length - 1 || line !== '');
}

/** A cache file of these head and entry lines, with a trailer whose checksum matches them. */
function withChecksum(lines: string[], entries = lines.length - 1): string {
  const body = lines.map((line) => `${line}\n`).join('');
  return `${body}${JSON.stringify({ end: true, entries, sha256: createHash('sha256').update(body).digest('hex') })}\n`;
}
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dsh-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry: CachedSummary = {
  identity: { size: 10, mtimeMs: 1234.5, ctimeMs: 1234.5, ino: 7, dev: 8 },
  summary: { header: { id: 'demo-1', createdAt: 1, cwd: '/p' }, title: 'Say hi', capturedThroughSeq: 10, eventCount: 11 },
};

/** Many entries with long, non-ASCII titles: several write chunks and read chunks. */
function manyEntries(count: number): Array<[string, CachedSummary]> {
  return Array.from({ length: count }, (_, i): [string, CachedSummary] => [
    `--p${i % 7}--/s-${i}/session.jsonl${i % 2 ? '.zstd' : ''}`,
    {
      identity: { size: i, mtimeMs: 1000 + i / 3, ctimeMs: 2000 + i, ino: i + 1, dev: 2 },
      summary: {
        header: { id: `s-${i}`, createdAt: i },
        title: `résumé ${'✓'.repeat(i % 300)} ${i}\n"quoted"`,
        capturedThroughSeq: i % 5 ? i : null,
        eventCount: i,
        surfaceCounts: { user: i, assistant: 1, tool: 0 },
      },
      ...(i % 100 === 0
        ? { resume: { summarizer: { version: 1, reader: { encoding: 'raw', committedBytes: i, zstdFrames: 0 } }, prefixSha256: 'ab'.repeat(32) } as CachedSummary['resume'] }
        : {}),
    },
  ]);
}

describe('summary cache', () => {
  it('is empty when its file is a FIFO, a directory or a device, without waiting on it', async () => {
    const fifo = path.join(dir, 'fifo.jsonl');
    spawnSync('mkfifo', [fifo]);
    expect(await loadSummaryCache(fifo, '/store')).toEqual(new Map());
    expect(await loadSummaryCache(dir, '/store')).toEqual(new Map());
    expect(await loadSummaryCache('/dev/zero', '/store')).toEqual(new Map());
  });

  it('round-trips summaries for the same root, atomically, leaving no temp file', async () => {
    const file = summaryCacheFile(path.join(dir, 'cache'), '/root');
    await saveSummaryCache(file, '/root', [['--p--/demo-1/session.jsonl', entry]]);
    const loaded = await loadSummaryCache(file, '/root');
    expect([...loaded]).toEqual([['--p--/demo-1/session.jsonl', entry]]);
    expect(readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  });

  it('round-trips thousands of entries written and read in chunks, one record per line', async () => {
    const file = summaryCacheFile(dir, '/root');
    const entries = manyEntries(3000);
    await saveSummaryCache(file, '/root', entries);
    const text = readFileSync(file, 'utf8');
    expect(text.length).toBeGreaterThan(1024 * 1024);
    expect(text.split('\n').length).toBe(entries.length + 3); // head, entries, trailer, final newline
    const loaded = await loadSummaryCache(file, '/root');
    expect(loaded).toEqual(new Map(entries));
  });

  it('takes the entries lazily from an iterable', async () => {
    const file = summaryCacheFile(dir, '/root');
    const entries = manyEntries(50);
    function* lazily(): Generator<[string, CachedSummary]> {
      yield* entries;
    }
    await saveSummaryCache(file, '/root', lazily());
    expect((await loadSummaryCache(file, '/root')).size).toBe(50);
  });

  it('names one file per root', () => {
    expect(summaryCacheFile(dir, '/a')).not.toBe(summaryCacheFile(dir, '/b'));
  });

  it('treats a missing, foreign-root, other-version or single-document cache as empty', async () => {
    const file = summaryCacheFile(dir, '/root');
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    await saveSummaryCache(file, '/other', [['k', entry]]);
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    // The same file with the root edited: its checksum no longer matches.
    writeFileSync(file, readFileSync(file, 'utf8').replace('"/other"', '"/root"'));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    await saveSummaryCache(file, '/root', [['k', entry]]);
    const valid = readFileSync(file, 'utf8');
    expect((await loadSummaryCache(file, '/root')).size).toBe(1);
    // Another format, with a checksum that matches it.
    writeFileSync(file, withChecksum(linesOf(valid).slice(0, -1).map((line) => line.replace(`"format":${SUMMARY_CACHE_FORMAT}`, `"format":${SUMMARY_CACHE_FORMAT + 1}`))));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    // The format-2 layout: one document on one line.
    writeFileSync(file, JSON.stringify({ format: 2, root: '/root', entries: { k: entry } }));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    writeFileSync(file, 'x'.repeat(5 * 1024 * 1024));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
  });

  it('treats a cache cut short anywhere, or with bytes after its trailer, as empty', async () => {
    const file = summaryCacheFile(dir, '/root');
    await saveSummaryCache(file, '/root', manyEntries(40));
    const whole = readFileSync(file);
    expect((await loadSummaryCache(file, '/root')).size).toBe(40);
    const lineEnds = [...whole.keys()].filter((i) => whole[i] === 0x0a);
    // Every cut at a line boundary (the hardest to notice) and a few inside lines.
    const cuts = [...lineEnds.slice(0, -1).map((i) => i + 1), 1, 100, whole.length - 3];
    for (const cut of cuts) {
      writeFileSync(file, whole.subarray(0, cut));
      expect((await loadSummaryCache(file, '/root')).size, `cut at ${cut}`).toBe(0);
    }
    // Only the final newline missing: the trailer itself is whole, so is everything before it.
    writeFileSync(file, whole.subarray(0, whole.length - 1));
    expect((await loadSummaryCache(file, '/root')).size).toBe(40);
    writeFileSync(file, Buffer.concat([whole, Buffer.from(`${JSON.stringify({ key: 'late', ...entry })}\n`)]));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    // A trailer whose count disagrees with the entry lines (the checksum matches).
    const lines = linesOf(whole.toString('utf8')).slice(0, -1);
    writeFileSync(file, withChecksum(lines, 41));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    writeFileSync(file, withChecksum(lines));
    expect((await loadSummaryCache(file, '/root')).size).toBe(40);
  });

  it('treats a cache with a line longer than any it writes as empty, checksum or not', async () => {
    const file = summaryCacheFile(dir, '/root');
    const head = JSON.stringify({ format: SUMMARY_CACHE_FORMAT, root: '/root', pad: 'é'.repeat(4 * 1024 * 1024) });
    const lines = [head, JSON.stringify({ key: 'p/s/session.jsonl', ...entry })];
    writeFileSync(file, withChecksum(lines));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    // The same cache with a head of ordinary length loads.
    writeFileSync(file, withChecksum([JSON.stringify({ format: SUMMARY_CACHE_FORMAT, root: '/root' }), lines[1]!]));
    expect((await loadSummaryCache(file, '/root')).size).toBe(1);
  });

  it('drops a malformed entry line of a complete cache, keeping the others', async () => {
    const file = summaryCacheFile(dir, '/root');
    const lines = [
      JSON.stringify({ format: SUMMARY_CACHE_FORMAT, root: '/root' }),
      JSON.stringify({ key: 'good', ...entry }),
      JSON.stringify({ key: 'noIdentity', summary: entry.summary }),
      JSON.stringify({ key: 'badTitle', ...entry, summary: { ...entry.summary, title: 3 } }),
      JSON.stringify({ key: 'badHeader', ...entry, summary: { ...entry.summary, header: 'x' } }),
      JSON.stringify({ identity: entry.identity, summary: entry.summary }),
      '{"key":"torn',
      'null',
      JSON.stringify({ key: 'readFailure', ...entry, summary: { headerProblem: 'cannot read transcript: EACCES', capturedThroughSeq: null, eventCount: 0 } }),
      JSON.stringify({ key: 'oldIdentity', ...entry, identity: { size: 10, mtimeMs: 1, ino: 7, dev: 8 } }),
      JSON.stringify({ key: 'oldResume', ...entry, resume: { version: 1, reader: { encoding: 'raw', committedBytes: 1, zstdFrames: 0 } } }),
    ];
    writeFileSync(file, withChecksum(lines));
    expect([...(await loadSummaryCache(file, '/root')).keys()]).toEqual(['good']);
  });

  it('removes the single-document cache of earlier formats once it writes its own', async () => {
    const file = summaryCacheFile(dir, '/root');
    const legacy = file.replace(/\.jsonl$/, '.json');
    expect(legacy).not.toBe(file);
    writeFileSync(legacy, '{}');
    await saveSummaryCache(file, '/root', [['k', entry]]);
    expect(readdirSync(dir)).toEqual([path.basename(file)]);
  });

  it('never loads a changed cache: every one-character change of a complete cache gives the same entries or none', async () => {
    const file = summaryCacheFile(dir, '/root');
    const entries = manyEntries(6).map(([key, cached]): [string, CachedSummary] => [key, { ...cached, summary: { ...cached.summary, title: `title ${key}` } }]);
    await saveSummaryCache(file, '/root', entries);
    const whole = readFileSync(file, 'utf8');
    const original = new Map(entries);
    let changed = 0;
    for (let i = 0; i < whole.length; i++) {
      const c = whole[i];
      // A letter for another letter, a digit for another digit, anything else for 'x': the edits that still parse.
      const other = /[a-y]/.test(c) ? String.fromCharCode(c.charCodeAt(0) + 1) : /[0-8]/.test(c) ? String(Number(c) + 1) : c === 'x' ? 'y' : 'x';
      writeFileSync(file, whole.slice(0, i) + other + whole.slice(i + 1));
      const loaded = await loadSummaryCache(file, '/root');
      if (loaded.size === 0) changed++;
      else expect(loaded, `change at ${i}`).toEqual(original);
    }
    // In fact every change empties it: the checksum covers every line, the trailer is checked as a whole.
    expect(changed).toBe(whole.length);
  });

  it('round-trips a line longer than the write buffer between shorter ones', async () => {
    const file = summaryCacheFile(dir, '/root');
    // ~600 KB of UTF-8 in one line: more than a write chunk, far less than a line's limit.
    const long: CachedSummary = { ...entry, summary: { ...entry.summary, title: 'é✓'.repeat(120_000) } };
    const entries: Array<[string, CachedSummary]> = [['a', entry], ['long', long], ['b', entry]];
    await saveSummaryCache(file, '/root', entries);
    expect([...(await loadSummaryCache(file, '/root'))]).toEqual(entries);
  });

  it('keeps an entry too long for a line as its identity only (omitted), and loads the rest', async () => {
    const file = summaryCacheFile(dir, '/root');
    const huge: CachedSummary = { ...entry, summary: { ...entry.summary, title: 'é'.repeat(5 * 1024 * 1024) } };
    await saveSummaryCache(file, '/root', [['huge', huge], ['small', entry]]);
    expect(readFileSync(file).length).toBeLessThan(64 * 1024);
    const omitted = new Map<string, FileIdentity>();
    const loaded = await loadSummaryCache(file, '/root', omitted);
    expect([...loaded]).toEqual([['small', entry]]);
    expect([...omitted]).toEqual([['huge', huge.identity]]);
  });

  it('removes the temp files of killed writes, never a live write\'s', async () => {
    const cacheDir = path.join(dir, 'cache');
    const file = summaryCacheFile(cacheDir, '/root');
    await saveSummaryCache(file, '/root', [['k', entry]]);
    // A pid that is certainly not running: a child that has exited.
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid;
    const now = Date.now();
    const temps = {
      ownFresh: { pid: process.pid, age: 1_000 },
      ownOld: { pid: process.pid, age: STALE_TEMP_MS + 1_000 },
      deadFresh: { pid: deadPid, age: 1_000 },
      deadAFewSeconds: { pid: deadPid, age: 10_000 },
      legacyAFewSeconds: { pid: undefined, age: 10_000 },
    };
    const names: Record<string, string> = {};
    Object.entries(temps).forEach(([what, { pid, age }], i) => {
      const name = `${path.basename(file)}.${pid === undefined ? '' : `${pid}.`}${String(i).padStart(12, 'a')}.tmp`;
      names[what] = name;
      writeFileSync(path.join(cacheDir, name), 'partial');
      utimesSync(path.join(cacheDir, name), (now - age) / 1000, (now - age) / 1000);
    });
    writeFileSync(path.join(cacheDir, 'unrelated.tmp'), 'x');
    utimesSync(path.join(cacheDir, 'unrelated.tmp'), 1, 1);
    const removed = await removeStaleTempFiles(cacheDir, now);
    expect(removed.sort()).toEqual([names.ownOld, names.deadAFewSeconds, names.legacyAFewSeconds].sort());
    expect(readdirSync(cacheDir).sort()).toEqual([path.basename(file), names.ownFresh, names.deadFresh, 'unrelated.tmp'].sort());
    expect(await removeStaleTempFiles(path.join(dir, 'missing'))).toEqual([]);
  });

  it('tells whether a cache directory lies inside a store, as given or through a link', async () => {
    const store = path.join(dir, 'store');
    mkdirSync(path.join(store, 'inner'), { recursive: true });
    symlinkSync(path.join(store, 'inner'), path.join(dir, 'link'));
    expect(await cacheDirInside(path.join(store, 'inner'), [store])).toBe(true);
    expect(await cacheDirInside(path.join(dir, 'link'), [store])).toBe(true);
    expect(await cacheDirInside(path.join(dir, 'elsewhere'), [store])).toBe(false);
    expect(await cacheDirInside(path.join(dir, 'link'), [path.join(dir, 'other'), store])).toBe(true);
  });

  it('tells whether a directory lies within another', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/', '/a')).toBe(false);
    expect(isWithin('/a/..b', '/a')).toBe(true);
  });
});
