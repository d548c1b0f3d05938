import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { InMemorySessionStore, type InMemorySession } from '../testing/inMemorySessionStore';
import { createSessionReferenceResolver } from './resolver';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import type { SessionStore, StoredSessionSummary } from './sessionStore';

function titled(title: string): SessionLogBuilder {
  const log = new SessionLogBuilder();
  log.user('some prompt');
  log.title(title);
  return log;
}

/** The example of session-reference.md §6. */
function exampleStore(): InMemorySessionStore {
  return new InMemorySessionStore([
    { header: { id: 'other', cwd: '/else', createdAt: 40 } },
    { header: { id: 'none', createdAt: 30 } },
    { header: { id: 'same-later', cwd: '/same', createdAt: 25 }, events: titled('Latest title').events() },
    { header: { id: 'same', cwd: '/same', createdAt: 20 } },
  ]);
}

const ids = (candidates: ReadonlyArray<{ sessionId: string }>): string[] => candidates.map((candidate) => candidate.sessionId);

describe('listCandidates', () => {
  it('follows the §6 example: same cwd first, then no cwd, then the rest; label = latest title, else the id', async () => {
    const resolver = createSessionReferenceResolver(exampleStore());
    const target = { cwd: '/same' };
    expect(await resolver.listCandidates(target)).toEqual([
      { sessionId: 'same-later', label: 'Latest title', cwd: '/same', createdAt: 25 },
      { sessionId: 'same', label: 'same', cwd: '/same', createdAt: 20 },
      { sessionId: 'none', label: 'none', createdAt: 30 },
      { sessionId: 'other', label: 'other', cwd: '/else', createdAt: 40 },
    ]);
    expect(ids(await resolver.listCandidates(target, 'LATEST'))).toEqual(['same-later']);
    expect(ids(await resolver.listCandidates(target, 'els'))).toEqual(['other']);
  });

  it('gives each candidate exactly sessionId, label, cwd (absent, not undefined, without one) and createdAt', async () => {
    const [withCwd, withoutCwd] = await createSessionReferenceResolver(exampleStore()).listCandidates({ cwd: '/else' });
    expect(Object.keys(withCwd!)).toEqual(['sessionId', 'label', 'cwd', 'createdAt']);
    expect(Object.keys(withoutCwd!)).toEqual(['sessionId', 'label', 'createdAt']);
  });

  it('with an unknown target cwd, still ranks sessions without a cwd first, as dsh does', async () => {
    const resolver = createSessionReferenceResolver(exampleStore());
    expect(ids(await resolver.listCandidates(undefined))).toEqual(['none', 'other', 'same-later', 'same']);
    expect(ids(await resolver.listCandidates({ sessionId: 'x' }))).toEqual(['none', 'other', 'same-later', 'same']);
  });

  it('never offers the target session, and is stable within a rank', async () => {
    const store = new InMemorySessionStore([
      { header: { id: 'b2', cwd: '/b', createdAt: 9 } },
      { header: { id: 'a1', cwd: '/a', createdAt: 8 } },
      { header: { id: 'b1', cwd: '/b', createdAt: 7 } },
      { header: { id: 'me', cwd: '/a', createdAt: 6 } },
      { header: { id: 'a2', cwd: '/a', createdAt: 5 } },
      { header: { id: 'n1', createdAt: 4 } },
      { header: { id: 'c1', cwd: '/c', createdAt: 3 } },
    ]);
    const resolver = createSessionReferenceResolver(store);
    expect(ids(await resolver.listCandidates({ sessionId: 'me', cwd: '/a' }))).toEqual(['a1', 'a2', 'n1', 'b2', 'b1', 'c1']);
  });

  it('matches the query in id, cwd or label after toLocaleLowerCase on both sides, without trimming', async () => {
    const store = new InMemorySessionStore([
      { header: { id: 'Ärger-ID', cwd: '/Home/Zoë', createdAt: 3 }, events: titled('Quarterly REPORT').events() },
      { header: { id: 'plain', createdAt: 2 } },
    ]);
    const resolver = createSessionReferenceResolver(store);
    expect(ids(await resolver.listCandidates(undefined, 'ärger'))).toEqual(['Ärger-ID']);
    expect(ids(await resolver.listCandidates(undefined, 'ZOË'))).toEqual(['Ärger-ID']);
    expect(ids(await resolver.listCandidates(undefined, 'report'))).toEqual(['Ärger-ID']);
    expect(ids(await resolver.listCandidates(undefined, 'PLAIN'))).toEqual(['plain']);
    expect(ids(await resolver.listCandidates(undefined, ' plain'))).toEqual([]);
    expect(ids(await resolver.listCandidates(undefined, ''))).toEqual(['plain', 'Ärger-ID']); // no cwd ranks first
  });

  it('never searches message bodies', async () => {
    const log = new SessionLogBuilder();
    log.user('the secret word is pineapple');
    log.assistant('pineapple noted');
    const store = new InMemorySessionStore([{ header: { id: 's', createdAt: 1 }, events: log.events() }]);
    expect(await createSessionReferenceResolver(store).listCandidates(undefined, 'pineapple')).toEqual([]);
  });

  it('lists a session whose title read failed, labelled by its id, and matches it by id but not by the lost title', async () => {
    const store = new InMemorySessionStore([{ header: { id: 'broken', createdAt: 1 }, events: titled('Hidden title').events() }]).failTitle(
      'broken',
    );
    const resolver = createSessionReferenceResolver(store);
    expect(await resolver.listCandidates(undefined)).toEqual([{ sessionId: 'broken', label: 'broken', createdAt: 1 }]);
    expect(ids(await resolver.listCandidates(undefined, 'brok'))).toEqual(['broken']);
    expect(ids(await resolver.listCandidates(undefined, 'hidden'))).toEqual([]);
  });

  it('cuts to the limit after ranking, and defaults to candidateLimit', async () => {
    const sessions: InMemorySession[] = Array.from({ length: 60 }, (_, index) => ({
      header: { id: `s${String(index).padStart(2, '0')}`, createdAt: 1000 - index, ...(index % 2 === 0 ? { cwd: '/even' } : {}) },
    }));
    const store = new InMemorySessionStore(sessions);
    expect(await createSessionReferenceResolver(store).listCandidates(undefined)).toHaveLength(50);
    expect(await createSessionReferenceResolver(store, { candidateLimit: 7 }).listCandidates(undefined)).toHaveLength(7);
    const ranked = await createSessionReferenceResolver(store).listCandidates({ cwd: '/even' }, '', 32);
    expect(ids(ranked)).toEqual([
      ...sessions.filter((_, index) => index % 2 === 0).map((session) => session.header.id),
      ...sessions.filter((_, index) => index % 2 === 1).map((session) => session.header.id),
    ].slice(0, 32));
    const firstRankOnly = await createSessionReferenceResolver(store).listCandidates({ cwd: '/even' }, '', 10);
    expect(ids(firstRankOnly)).toEqual(sessions.filter((_, index) => index % 2 === 0).slice(0, 10).map((session) => session.header.id));
  });

  it('rejects a limit that is not a positive safe integer, before looking at the signal or the store', async () => {
    const store = exampleStore();
    const resolver = createSessionReferenceResolver(store);
    const aborted = AbortSignal.abort('gone');
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '3' as unknown as number]) {
      await expect(resolver.listCandidates(undefined, '', limit, aborted)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
        message: 'candidate limit must be a positive safe integer',
      });
    }
    expect(store.listCalls).toBe(0);
  });

  it('rejects an already aborted signal with CANCELLED whose cause is the abort reason, without listing', async () => {
    const store = exampleStore();
    const reason = new Error('user typed on');
    await expect(createSessionReferenceResolver(store).listCandidates(undefined, '', 5, AbortSignal.abort(reason))).rejects.toMatchObject({
      name: 'SessionReferenceError',
      code: 'SESSION_REFERENCE_CANCELLED',
      message: 'session reference preparation was cancelled',
      cause: reason,
    });
    expect(store.listCalls).toBe(0);
  });

  it('rejects with CANCELLED when aborted while the store never settles', async () => {
    const store = exampleStore().stall('list');
    const controller = new AbortController();
    const pending = createSessionReferenceResolver(store).listCandidates(undefined, '', 5, controller.signal);
    controller.abort('stop');
    await expect(pending).rejects.toMatchObject({
      name: 'SessionReferenceError',
      code: 'SESSION_REFERENCE_CANCELLED',
      cause: 'stop',
    });
  });

  it('checks the signal again right after the listing', async () => {
    const controller = new AbortController();
    const store: SessionStore = {
      async listSessions() {
        controller.abort('late');
        return [{ id: 'x', createdAt: 1 }];
      },
      readSurface: () => Promise.reject(new Error('unused')),
    };
    await expect(createSessionReferenceResolver(store).listCandidates(undefined, '', 5, controller.signal)).rejects.toMatchObject({
      name: 'SessionReferenceError',
      code: 'SESSION_REFERENCE_CANCELLED',
    });
  });

  it('passes a listing failure through unchanged when not cancelled', async () => {
    const failure = new Error('root unreadable');
    const store = exampleStore().failList(failure);
    await expect(createSessionReferenceResolver(store).listCandidates(undefined)).rejects.toBe(failure);
  });

  it('sees a summary changed in place and an entry replaced in a listing array the store returns again', async () => {
    const listing: StoredSessionSummary[] = [{ id: 'x', createdAt: 1, title: 'Before' }];
    const store: SessionStore = { listSessions: async () => listing, readSurface: () => Promise.reject(new Error('unused')) };
    const resolver = createSessionReferenceResolver(store);
    expect(ids(await resolver.listCandidates(undefined, 'before'))).toEqual(['x']);
    listing[0]!.title = 'After';
    expect(ids(await resolver.listCandidates(undefined, 'before'))).toEqual([]);
    expect(await resolver.listCandidates(undefined, 'after')).toEqual([{ sessionId: 'x', label: 'After', createdAt: 1 }]);
    listing[0] = { id: 'y', createdAt: 2, cwd: '/Else' };
    expect(ids(await resolver.listCandidates(undefined, 'after'))).toEqual([]);
    expect(ids(await resolver.listCandidates(undefined, 'else'))).toEqual(['y']);
  });

  it('matches a query containing NUL only inside one field', async () => {
    const store = new InMemorySessionStore([{ header: { id: 'ab', cwd: '/cd', createdAt: 1 } }, { header: { id: 'a\u0000b', createdAt: 0 } }]);
    const resolver = createSessionReferenceResolver(store);
    expect(ids(await resolver.listCandidates(undefined, 'ab\u0000/cd'))).toEqual([]);
    expect(ids(await resolver.listCandidates(undefined, 'A\u0000B'))).toEqual(['a\u0000b']);
  });
});

describe('listMentionCandidates', () => {
  it('adds the canonical mention of each candidate, label escaped', async () => {
    const store = new InMemorySessionStore([{ header: { id: 'm', createdAt: 1 }, events: titled('a [tricky] \\ title').events() }]);
    const [candidate] = await createSessionReferenceResolver(store).listMentionCandidates(undefined);
    expect(candidate).toEqual({
      sessionId: 'm',
      label: 'a [tricky] \\ title',
      createdAt: 1,
      mention: formatSessionReferenceMention({ sessionId: 'm', label: 'a [tricky] \\ title' }),
    });
    expect(candidate!.mention).toBe('@[a [tricky\\] \\\\ title](dsh-session:Im0i)');
  });
});

describe('listMentionCandidatesOnWrite', () => {
  it('gives the JSON of listMentionCandidates, query, target, limit and errors alike', async () => {
    const store = exampleStore();
    const resolver = createSessionReferenceResolver(store);
    const target = { sessionId: 'same', cwd: '/same' };
    for (const [query, limit] of [['', undefined], ['LATEST', 2], ['e', 3], ['zzz', 5], ['', 1]] as const) {
      const rows = await resolver.listMentionCandidatesOnWrite(target, query, limit);
      expect(JSON.parse(JSON.stringify(rows))).toEqual(await resolver.listMentionCandidates(target, query, limit));
    }
    await expect(resolver.listMentionCandidatesOnWrite(undefined, '', 0)).rejects.toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
  });
});

describe('createSessionReferenceResolver', () => {
  it('validates the config with dsh messages and fills defaults', () => {
    const store = new InMemorySessionStore();
    expect(createSessionReferenceResolver(store).config).toEqual({ maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 });
    expect(() => createSessionReferenceResolver(store, { maxReferences: 4 })).toThrow('session-reference: maxReferences must not exceed 3');
    expect(() => createSessionReferenceResolver(store, { candidateLimit: 0 })).toThrow(
      'session-reference: candidateLimit must be a positive safe integer',
    );
    try {
      createSessionReferenceResolver(store, { maxReferenceBytes: 1.5 });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        code: 'SESSION_REFERENCE_INVALID_CONFIG',
        message: 'session-reference: maxReferenceBytes must be a positive safe integer',
      });
    }
  });
});
