import { mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
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

describe('summary cache', () => {
  it('round-trips summaries for the same root, atomically, leaving no temp file', async () => {
    const file = summaryCacheFile(path.join(dir, 'cache'), '/root');
    await saveSummaryCache(file, '/root', [['--p--/demo-1/session.jsonl', entry]]);
    const loaded = await loadSummaryCache(file, '/root');
    expect([...loaded]).toEqual([['--p--/demo-1/session.jsonl', entry]]);
    expect(readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  });

  it('names one file per root', () => {
    expect(summaryCacheFile(dir, '/a')).not.toBe(summaryCacheFile(dir, '/b'));
  });

  it('treats a missing, corrupt, foreign or other-version cache as empty, and drops malformed entries', async () => {
    const file = path.join(dir, 'c.json');
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    writeFileSync(file, '{"format":1,"root":"/root","entries":{"a":');
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    await saveSummaryCache(file, '/other', [['k', entry]]);
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    writeFileSync(file, JSON.stringify({ format: SUMMARY_CACHE_FORMAT + 1, root: '/root', entries: { k: entry } }));
    expect((await loadSummaryCache(file, '/root')).size).toBe(0);
    writeFileSync(
      file,
      JSON.stringify({
        format: SUMMARY_CACHE_FORMAT,
        root: '/root',
        entries: { good: entry, noIdentity: { summary: entry.summary }, badTitle: { ...entry, summary: { ...entry.summary, title: 3 } }, nothing: null },
      }),
    );
    expect([...(await loadSummaryCache(file, '/root')).keys()]).toEqual(['good']);
    expect(JSON.parse(readFileSync(file, 'utf8')).format).toBe(SUMMARY_CACHE_FORMAT);
  });

  it('tells whether a directory lies within another', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/', '/a')).toBe(false);
    expect(isWithin('/a/..b', '/a')).toBe(true);
  });
});
