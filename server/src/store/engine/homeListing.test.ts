import { describe, expect, it } from 'vitest';
import type { FileIdentity } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';
import type { SideFacts } from '../formats/adapter';
import { buildHomeListing, type HomeFile } from './homeListing';

function identity(mtimeMs: number): FileIdentity {
  return { size: 10, mtimeMs, ctimeMs: mtimeMs, ino: mtimeMs, dev: 1 };
}

/** A session file at `key` holding session `id`, written at `mtimeMs`. */
function session(key: string, id: string, createdAt: number, extra: { cwd?: string; title?: string; mtimeMs?: number } = {}): HomeFile {
  const summary: TranscriptSummary = {
    header: { id, createdAt, ...(extra.cwd === undefined ? {} : { cwd: extra.cwd }) },
    ...(extra.title === undefined ? {} : { title: extra.title }),
    capturedThroughSeq: null,
    eventCount: 0,
  };
  return { location: { key }, identity: identity(extra.mtimeMs ?? createdAt), summary };
}

const NONE: SideFacts = { titles: new Map(), projectCwd: () => undefined };

describe('the home listing rule', () => {
  it('lists every session in store order with the agent, and the key of each listed id', () => {
    const files = [session('p/a.jsonl', 'a', 1, { cwd: '/a', title: 'First' }), session('p/b.jsonl', 'b', 3), session('q/c.jsonl', 'c', 2, { cwd: '/c' })];
    const listing = buildHomeListing('codex', files, NONE, []);
    expect(listing.sessions).toEqual([
      { id: 'b', createdAt: 3, agent: 'codex' },
      { id: 'c', createdAt: 2, cwd: '/c', agent: 'codex' },
      { id: 'a', createdAt: 1, cwd: '/a', title: 'First', agent: 'codex' },
    ]);
    expect(Object.isFrozen(listing.sessions)).toBe(true);
    expect(listing.sessions.every((row) => Object.isFrozen(row))).toBe(true);
    expect([...listing.keyById]).toEqual([
      ['a', 'p/a.jsonl'],
      ['b', 'p/b.jsonl'],
      ['c', 'q/c.jsonl'],
    ]);
  });

  it('lists no file whose facts have a header problem or that is not read yet', () => {
    const noSession: HomeFile = { location: { key: 'p/x.jsonl' }, identity: identity(5), summary: { headerProblem: 'no session records', capturedThroughSeq: null, eventCount: 0 } };
    const failed: HomeFile = { ...session('p/y.jsonl', 'y', 5), summary: { ...session('p/y.jsonl', 'y', 5).summary!, headerProblem: 'cannot read: EACCES' } };
    const unread: HomeFile = { location: { key: 'p/z.jsonl' } };
    const listing = buildHomeListing('claude-code', [noSession, failed, unread, session('p/a.jsonl', 'a', 1)], NONE, []);
    expect(listing.sessions.map((row) => row.id)).toEqual(['a']);
    expect([...listing.keyById.keys()]).toEqual(['a']);
  });

  it('lists one file per id: the latest written', () => {
    const older = session('p/s.jsonl', 's', 1, { title: 'Plain', mtimeMs: 10 });
    const newer = session('p/s.jsonl.zst', 's', 1, { title: 'Compressed', mtimeMs: 20 });
    for (const files of [
      [older, newer],
      [newer, older],
    ]) {
      const listing = buildHomeListing('codex', files, NONE, []);
      expect(listing.sessions).toEqual([{ id: 's', createdAt: 1, title: 'Compressed', agent: 'codex' }]);
      expect(listing.keyById.get('s')).toBe('p/s.jsonl.zst');
    }
  });

  it("overrides a session's title by the title index and its cwd by its project folder", () => {
    const files = [session('tmp/p/chats/a.jsonl', 'a', 2, { cwd: '/own', title: 'Own' }), session('tmp/q/chats/b.jsonl', 'b', 1, { title: 'Kept' })];
    const side: SideFacts = { titles: new Map([['a', 'Renamed'], ['other', 'Nobody']]), projectCwd: (key) => (key.startsWith('tmp/p/') ? '/project' : undefined) };
    expect(buildHomeListing('gemini', files, side, []).sessions).toEqual([
      { id: 'a', createdAt: 2, cwd: '/project', title: 'Renamed', agent: 'gemini' },
      { id: 'b', createdAt: 1, title: 'Kept', agent: 'gemini' },
    ]);
  });

  it('gives the previous array back when no row changed, a new one when one did', () => {
    const files = [session('p/a.jsonl', 'a', 1, { title: 'A' }), session('p/b.jsonl', 'b', 2)];
    const first = buildHomeListing('codex', files, NONE, []).sessions;
    // Another write of a file (a new turn) that changes nothing listed.
    const again = buildHomeListing('codex', [{ ...files[0]!, identity: identity(99) }, files[1]!], NONE, first);
    expect(again.sessions).toBe(first);
    const retitled = buildHomeListing('codex', files, { titles: new Map([['b', 'B']]), projectCwd: () => undefined }, first);
    expect(retitled.sessions).not.toBe(first);
    expect(retitled.sessions.map((row) => row.title)).toEqual(['B', 'A']);
    expect(buildHomeListing('claude-code', files, NONE, first).sessions).not.toBe(first);
  });
});
