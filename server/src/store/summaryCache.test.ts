import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isWithin, loadSummaryCache, saveSummaryCache, SUMMARY_CACHE_FORMAT, summaryCacheFile, type CachedSummary } from './summaryCache';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dsh-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry: CachedSummary = {
  identity: { size: 10, mtimeMs: 1234.5, ino: 7, dev: 8 },
  summary: { header: { id: 'demo-1', createdAt: 1, cwd: '/p' }, title: 'Say hi', capturedThroughSeq: 10, eventCount: 11 },
};

/** Many entries with long, non-ASCII titles: several write chunks and read chunks. */
function manyEntries(count: number): Array<[string, CachedSummary]> {
  return Array.from({ length: count }, (_, i): [string, CachedSummary] => [
    `--p${i % 7}--/s-${i}/session.jsonl${i % 2 ? '.zstd' : ''}`,
    {
      identity: { size: i, mtimeMs: 1000 + i / 3, ino: i + 1, dev: 2 },
      summary: {
        header: { id: `s-${i}`, createdAt: i },
        title: `résumé ${'✓'.repeat(i % 300)} ${i}\n"quoted"`,
        capturedThroughSeq: i % 5 ? i : null,
        eventCount: i,
        surfaceCounts: { user: i, assistant: 1, tool: 0 },
      },
      ...(i % 100 === 0 ? { resume: { version: 1, reader: { encoding: 'raw', committedBytes: i, zstdFrames: 0 } } as CachedSummary['resume'] } : {}),
    },
  ]);
}

describe('summary cache', () => {
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
    const valid = readFileSync(file, 'utf8').replace('"/other"', '"/root"');
    writeFileSync(file, valid);
    expect((await loadSummaryCache(file, '/root')).size).toBe(1);
    writeFileSync(file, valid.replace(`"format":${SUMMARY_CACHE_FORMAT}`, `"format":${SUMMARY_CACHE_FORMAT + 1}`));
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
    // A trailer whose count disagrees with the entry lines.
    writeFileSync(file, whole.toString('utf8').replace('"entries":40', '"entries":41'));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
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
      JSON.stringify({ end: true, entries: 7 }),
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
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

  it('tells whether a directory lies within another', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/', '/a')).toBe(false);
    expect(isWithin('/a/..b', '/a')).toBe(true);
  });
});
