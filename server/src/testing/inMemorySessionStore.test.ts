import { describe, expect, it } from 'vitest';
import { InMemorySessionStore, foldSessionTitle, foldSurface } from './inMemorySessionStore';
import { DshLog as SessionLogBuilder } from './testLogs';
import { SessionReadError } from '../resolver/sessionStore';

describe('foldSurface', () => {
  it('folds nested compactions by surface position, as in the store doc §6.3 (surface [15, 11, 12])', () => {
    const log = new SessionLogBuilder();
    const u1 = log.user('U1'); // 0
    log.assistant([{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }]); // 1
    log.event('tool/call', { callId: 'c1' }); // 2
    log.toolResult('c1', 'out'); // 3
    const a2 = log.assistant('A2'); // 4
    log.user('U2'); // 5
    const a3 = log.assistant('A3'); // 6
    log.event('compaction/start', {}); // 7
    log.event('compaction/summary', {}); // 8
    const c1 = log.checkpoint('C1', u1, a2); // 9
    log.event('compaction/end', {}); // 10
    const u3 = log.user('U3'); // 11
    const a4 = log.assistant('A4'); // 12
    log.event('compaction/start', {}); // 13
    log.event('compaction/summary', {}); // 14
    const c2 = log.checkpoint('C2', c1, a3); // 15: start 9 comes before end 6 on the surface
    log.event('compaction/end', {}); // 16

    expect(foldSurface('s', log.events()).map((event) => event.seq)).toEqual([c2, u3, a4]);
    expect([c2, u3, a4]).toEqual([15, 11, 12]);
  });

  it('rejects a replace range that is not on the surface as a corrupt log', () => {
    const log = new SessionLogBuilder();
    const a = log.user('a');
    const b = log.user('b');
    log.checkpoint('c', b, a); // b comes after a: i > j
    expect(() => foldSurface('s', log.events())).toThrow(SessionReadError);
    const missing = new SessionLogBuilder();
    missing.checkpoint('c', 5, 5); // seq 5 was never written
    expect(() => foldSurface('s', missing.events())).toThrow(SessionReadError);
  });
});

describe('foldSessionTitle', () => {
  it('takes the last session/title event, and undefined without one', () => {
    const log = new SessionLogBuilder();
    expect(foldSessionTitle(log.events())).toBeUndefined();
    log.title('first');
    log.user('hello');
    log.title('latest');
    log.user('more');
    expect(foldSessionTitle(log.events())).toBe('latest');
  });
});

describe('InMemorySessionStore', () => {
  it('lists newest first, ties by a.id.localeCompare(b.id), with latest titles', async () => {
    const titled = new SessionLogBuilder();
    titled.title('Old');
    titled.title('New');
    const store = new InMemorySessionStore([
      { header: { id: 'b', createdAt: 10 } },
      { header: { id: 'a', createdAt: 10, cwd: '/x' }, events: titled.events() },
      { header: { id: 'B', createdAt: 10 } },
      { header: { id: 'z', createdAt: 20 } },
    ]);
    const listed = await store.listSessions();
    // localeCompare, not code-unit order (which would put 'B' first).
    expect(listed.map((summary) => summary.id)).toEqual(['z', 'a', 'b', 'B']);
    expect(listed.find((summary) => summary.id === 'a')).toEqual({ id: 'a', createdAt: 10, cwd: '/x', title: 'New' });
    expect(listed.find((summary) => summary.id === 'b')).not.toHaveProperty('title');
  });

  it('reads the current surface, and capturedThroughSeq is the last log seq (null for an empty log)', async () => {
    const log = new SessionLogBuilder();
    const u = log.user('hi');
    log.title('t');
    // A turn the writer never closed: the real fold appends dsh's in-memory closers (§6.5).
    const open = new SessionLogBuilder();
    open.event('turn/start', { turn: 1 });
    open.event('step/start', { turn: 1, step: 1 });
    open.user('interrupted');
    const store = new InMemorySessionStore([
      { header: { id: 's', createdAt: 1 }, events: log.events() },
      { header: { id: 'empty', createdAt: 1 } },
      { header: { id: 'repaired', createdAt: 1 }, events: open.events() },
    ]);
    const surface = await store.readSurface('s');
    expect(surface.header).toEqual({ id: 's', createdAt: 1 });
    expect(surface.capturedThroughSeq).toBe(1);
    expect(surface.events.map((event) => event.seq)).toEqual([u]);
    expect((await store.readSurface('empty')).capturedThroughSeq).toBeNull();
    // seqs 0-2 written, then the closers step/end (3) and turn/end (4).
    expect((await store.readSurface('repaired')).capturedThroughSeq).toBe(4);
  });

  it('rejects an unknown id with a not-found SessionReadError worded as dsh words it', async () => {
    const store = new InMemorySessionStore();
    const error = await store.readSurface('nope').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SessionReadError);
    expect(error).toMatchObject({ reason: 'not-found', message: 'session "nope" not found' });
  });

  it('keeps listing a session whose title read fails, without a title', async () => {
    const log = new SessionLogBuilder();
    log.title('hidden');
    const store = new InMemorySessionStore([{ header: { id: 's', createdAt: 1 }, events: log.events() }]).failTitle('s');
    expect(await store.listSessions()).toEqual([{ id: 's', createdAt: 1 }]);
  });

  it('returns the same summary objects until the store changes', async () => {
    const store = new InMemorySessionStore([{ header: { id: 's', createdAt: 1 } }]);
    const first = await store.listSessions();
    expect(await store.listSessions()).toBe(first);
    const rename = new SessionLogBuilder();
    rename.title('renamed');
    store.append('s', ...rename.events());
    const second = await store.listSessions();
    expect(second).not.toBe(first);
    expect(second[0]?.title).toBe('renamed');
  });
});
