import { formatSessionReferenceMention, type SessionReferenceCandidate, type SessionReferenceTarget } from '@dsh-session-ls/shared';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { candidateLabel, MentionCandidateOnWrite, toCandidate, toMentionCandidate, writeMentionCandidate } from './candidates';
import { findListedSession, selectCandidates } from './candidateSearch';
import { JsonBytes } from '../wiring/jsonBytes';
import type { StoredSessionSummary } from './sessionStore';

/** session-reference.md §6 steps 2–6 as written: the slow rule the indexed selection must equal. */
function referenceSelect(
  sessions: readonly StoredSessionSummary[],
  target: SessionReferenceTarget | undefined,
  query: string,
  limit: number,
): SessionReferenceCandidate[] {
  const needle = query.toLocaleLowerCase();
  const kept = sessions
    .filter((summary) => target?.sessionId === undefined || summary.id !== target.sessionId)
    .filter(
      (summary) =>
        query === '' ||
        summary.id.toLocaleLowerCase().includes(needle) ||
        (summary.cwd !== undefined && summary.cwd.toLocaleLowerCase().includes(needle)) ||
        candidateLabel(summary).toLocaleLowerCase().includes(needle),
    );
  const rank = (summary: StoredSessionSummary): number =>
    target?.cwd !== undefined && summary.cwd === target.cwd ? 0 : summary.cwd === undefined ? 1 : 2;
  // Array.prototype.sort is stable.
  return kept
    .map((summary, order) => ({ summary, order }))
    .sort((a, b) => rank(a.summary) - rank(b.summary) || a.order - b.order)
    .slice(0, limit)
    .map(({ summary }) => toCandidate(summary));
}

const summary = (id: string, cwd?: string, title?: string): StoredSessionSummary => ({
  id,
  createdAt: 0,
  ...(cwd === undefined ? {} : { cwd }),
  ...(title === undefined ? {} : { title }),
});
const frozen = (list: StoredSessionSummary[]): readonly StoredSessionSummary[] => Object.freeze(list.map((s) => Object.freeze({ ...s })));
const ids = (candidates: readonly SessionReferenceCandidate[]): string[] => candidates.map((c) => c.sessionId);

describe('selectCandidates', () => {
  it('lower-cases each field on its own: İ grows to two code units without shifting the next session', () => {
    const listing = frozen([summary('a', '/w', 'İİİİ'), summary('b', '/w', 'abc'), summary('İd', undefined)]);
    expect(ids(selectCandidates(listing, undefined, 'abc', 10))).toEqual(['b']);
    expect(ids(selectCandidates(listing, undefined, 'İ', 10))).toEqual(['İd', 'a']);
    expect(ids(selectCandidates(listing, undefined, 'i\u0307d', 10))).toEqual(['İd']);
    expect(ids(selectCandidates(listing, undefined, 'i\u0307i\u0307i\u0307i\u0307', 10))).toEqual(['a']);
  });

  it('keeps the final sigma of each field as that field lower-cases it', () => {
    const listing = frozen([summary('Σ', '/ΟΔΟΣ'), summary('x', '/w', 'ΟΔΟΣ'), summary('y', '/w', 'ΣΑ')]);
    expect(ids(selectCandidates(listing, undefined, 'ος', 10))).toEqual(['Σ', 'x']);
    expect(ids(selectCandidates(listing, undefined, 'οσ', 10))).toEqual([]);
    expect(ids(selectCandidates(listing, undefined, 'σ', 10))).toEqual(['Σ', 'y']);
  });

  it('never matches across fields or sessions with a query holding the separator, but inside one field', () => {
    const listing = frozen([summary('ab', '/cd', 'ef'), summary('g\u0000h', '/w'), summary('i', '/w', 'j\u0000k'), summary('l', 'm\u0000n')]);
    for (const query of ['ab\u0000ef', 'b\u0000e', 'f\u0000g', '\u0000', 'ef\u0000']) {
      expect(ids(selectCandidates(listing, undefined, query, 10)), JSON.stringify(query)).toEqual(ids(referenceSelect(listing, undefined, query, 10)));
    }
    expect(ids(selectCandidates(listing, undefined, 'G\u0000H', 10))).toEqual(['g\u0000h']);
    expect(ids(selectCandidates(listing, undefined, 'j\u0000k', 10))).toEqual(['i']);
    expect(ids(selectCandidates(listing, undefined, 'm\u0000', 10))).toEqual(['l']);
    expect(ids(selectCandidates(listing, undefined, 'ef', 10))).toEqual(['ab']);
  });

  it('lists everything in rank order for the empty query, the target dropped wherever it is', () => {
    const listing = frozen([summary('o1', '/o'), summary('n1'), summary('s1', '/s'), summary('t', '/s'), summary('o2', '/p'), summary('s2', '/s')]);
    expect(ids(selectCandidates(listing, { sessionId: 't', cwd: '/s' }, '', 10))).toEqual(['s1', 's2', 'n1', 'o1', 'o2']);
    expect(ids(selectCandidates(listing, { sessionId: 't', cwd: '/s' }, '', 3))).toEqual(['s1', 's2', 'n1']);
    expect(ids(selectCandidates(listing, { cwd: '/unknown' }, '', 2))).toEqual(['n1', 'o1']);
  });

  it('matches a whole cwd group by its cwd, merged in store order with id and label matches of other groups', () => {
    const listing = frozen([summary('q1', '/x'), summary('match-id', '/y'), summary('q2', '/match'), summary('z', '/y', 'MATCH'), summary('q3', '/match')]);
    expect(ids(selectCandidates(listing, { cwd: '/y' }, 'match', 10))).toEqual(['match-id', 'z', 'q2', 'q3']);
    expect(ids(selectCandidates(listing, { cwd: '/x' }, 'match', 3))).toEqual(['match-id', 'q2', 'z']);
  });

  it('answers for the store\'s next listing as for a fresh one: renamed, added, removed and retitled sessions', () => {
    const first = frozen([summary('İa', '/w', 'Old'), summary('b', '/w'), summary('c', undefined, 'Keep'), summary('d', '/x', 'Gone')]);
    expect(ids(selectCandidates(first, undefined, 'old', 10))).toEqual(['İa']);
    const next = frozen([summary('e', '/w', 'old too'), summary('İa', '/w', 'New'), summary('b', '/w', 'Now titled'), summary('c', undefined)]);
    for (const query of ['old', 'new', 'titled', 'keep', 'gone', 'i\u0307', 'c', '']) {
      expect(selectCandidates(next, { cwd: '/w' }, query, 10), query).toEqual(referenceSelect(next, { cwd: '/w' }, query, 10));
    }
  });

  it('sees a summary changed in place in an array that is not frozen', () => {
    const listing = [summary('x', '/a', 'Before')];
    expect(ids(selectCandidates(listing, undefined, 'before', 10))).toEqual(['x']);
    listing[0]!.title = 'After';
    expect(ids(selectCandidates(listing, undefined, 'before', 10))).toEqual([]);
    expect(ids(selectCandidates(listing, undefined, 'after', 10))).toEqual(['x']);
  });

  it('equals the spec rule for any listing, query, target and limit (frozen listings queried repeatedly)', () => {
    // A small alphabet makes matches, duplicates and shared cwds common; it holds case pairs that change
    // length or depend on their neighbours, and the separator.
    const char = fc.constantFrom('a', 'A', 'b', 'İ', 'i', '\u0307', 'Σ', 'σ', 'ς', 'ß', '/', ' ', '\u0000', '\u0001', 'é', '😀');
    const text = (maxLength: number) => fc.string({ unit: char, maxLength });
    const cwd = fc.option(fc.constantFrom('/a', '/A', '/İ', '', '/σΣ', '\u0000'), { nil: undefined });
    const session = fc.record({ id: text(4), cwd, title: fc.option(text(5), { nil: undefined }) });
    const listing = fc.array(session, { maxLength: 30 });
    const target = fc.option(
      fc.record({ sessionId: fc.option(text(3), { nil: undefined }), cwd: fc.option(fc.constantFrom('/a', '/A', '/İ', '', '/none'), { nil: undefined }) }, { requiredKeys: [] }),
      { nil: undefined },
    );
    const limit = fc.oneof(fc.integer({ min: 1, max: 12 }), fc.constant(Number.MAX_SAFE_INTEGER));
    fc.assert(
      fc.property(listing, fc.array(fc.tuple(target, text(3), limit), { minLength: 1, maxLength: 4 }), fc.boolean(), (raw, queries, freeze) => {
        const sessions = raw.map((s) => summary(s.id, s.cwd, s.title));
        const list = freeze ? frozen(sessions) : sessions;
        for (const [t, query, max] of queries) {
          // Target ids are often taken from the listing, so dropping it is exercised.
          const aimed = t?.sessionId !== undefined && sessions.length > 0 && query.length % 2 === 0 ? { ...t, sessionId: sessions[0]!.id } : t;
          const targetOf = aimed === undefined ? undefined : Object.fromEntries(Object.entries(aimed).filter(([, v]) => v !== undefined));
          expect(selectCandidates(list, targetOf, query, max)).toEqual(referenceSelect(list, targetOf, query, max));
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('findListedSession', () => {
  it('finds the first session with the id in a frozen listing, and nothing for an unknown id', () => {
    const listing = frozen([summary('a', '/1'), summary('b', '/2'), summary('a', '/3')]);
    expect(findListedSession(listing, 'a')).toBe(listing[0]);
    expect(findListedSession(listing, 'b')).toBe(listing[1]);
    expect(findListedSession(listing, 'A')).toBeUndefined();
    expect(findListedSession(listing, 'a')).toBe(listing[0]);
  });

  it('sees changes to a listing that is not frozen', () => {
    const listing = [summary('a', '/1')];
    expect(findListedSession(listing, 'a')?.cwd).toBe('/1');
    listing[0] = summary('a', '/2');
    expect(findListedSession(listing, 'a')?.cwd).toBe('/2');
    const halfFrozen = Object.freeze([{ id: 'b', createdAt: 0, cwd: '/x' }]);
    expect(findListedSession(halfFrozen, 'b')?.cwd).toBe('/x');
    (halfFrozen[0] as { id: string }).id = 'c';
    expect(findListedSession(halfFrozen, 'c')?.cwd).toBe('/x');
  });
});

describe('toMentionCandidate', () => {
  it('is the candidate with its mention, same keys in the same order', () => {
    const summary = fc.record(
      {
        id: fc.string({ minLength: 1 }),
        createdAt: fc.integer(),
        cwd: fc.string(),
        title: fc.string(),
        agent: fc.constantFrom('claude-code' as const, 'codex' as const),
      },
      { requiredKeys: ['id', 'createdAt'] },
    );
    fc.assert(
      fc.property(summary, (s: StoredSessionSummary) => {
        const candidate = toCandidate(s);
        const expected = {
          ...candidate,
          mention: formatSessionReferenceMention(
            candidate.agent === undefined
              ? { sessionId: candidate.sessionId, label: candidate.label }
              : { sessionId: candidate.sessionId, label: candidate.label, agent: candidate.agent },
          ),
        };
        expect(JSON.stringify(toMentionCandidate(s))).toBe(JSON.stringify(expected));
        expect(toMentionCandidate(s)).toStrictEqual(expected);
      }),
    );
  });
});

describe('writeMentionCandidate', () => {
  /** Text dense in what JSON or a mention label escapes. */
  const awkward = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'Z', '-', ' ', '"', '\\', ']', '[', '(', ')', '\n', '\u0000', '\u2028', 'é', '日', '\ud800', '\udc00', '😀') }),
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary' }),
  );
  const summary = fc.record(
    {
      id: fc.oneof(fc.uuid(), awkward.filter((id) => id.length > 0)),
      createdAt: fc.oneof(fc.integer(), fc.double()),
      cwd: awkward,
      title: awkward,
      agent: fc.constantFrom('claude-code' as const, 'codex' as const),
    },
    { requiredKeys: ['id', 'createdAt'] },
  );

  it('writes exactly the UTF-8 bytes of JSON.stringify(toMentionCandidate(summary)), row after row in one buffer', () => {
    fc.assert(
      fc.property(fc.array(summary, { minLength: 1, maxLength: 8 }), (summaries: StoredSessionSummary[]) => {
        const out = new JsonBytes(16);
        summaries.forEach((s, i) => {
          if (i > 0) out.byte(0x2c);
          writeMentionCandidate(out, s);
        });
        expect(out.copy().equals(Buffer.from(JSON.stringify(summaries.map(toMentionCandidate)).slice(1, -1), 'utf-8'))).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });

  it('is what a row made on write writes', () => {
    const s: StoredSessionSummary = { id: 'a]b', createdAt: 5, title: 'x\\y' };
    const out = new JsonBytes();
    new MentionCandidateOnWrite(s).writeJson(out);
    expect(out.copy().toString('utf-8')).toBe(JSON.stringify(new MentionCandidateOnWrite(s)));
  });
});
