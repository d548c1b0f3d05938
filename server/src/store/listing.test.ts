import { describe, expect, it } from 'vitest';
import { LISTING_REASONS } from './layout';
import { buildListing, patchListing } from './listing';
import type { TranscriptEncoding } from './layout';
import type { IndexedTranscript } from './transcriptIndex';
import type { TranscriptSummary } from './transcriptSummary';

function transcript(
  projectDir: string,
  sessionDir: string,
  summary?: Partial<TranscriptSummary>,
  encoding: TranscriptEncoding = 'raw',
): IndexedTranscript {
  const file = encoding === 'raw' ? 'session.jsonl' : 'session.jsonl.zstd';
  return {
    location: { key: `${projectDir}/${sessionDir}/${file}`, projectDir, sessionDir },
    summary: summary && { capturedThroughSeq: null, eventCount: 0, ...summary },
  };
}

const ok = (id: string, createdAt: number, extra: Partial<TranscriptSummary> = {}, cwd: string | null = '/p') =>
  ({ header: cwd === null ? { id, createdAt } : { id, createdAt, cwd }, ...extra });

describe('buildListing', () => {
  it('orders by createdAt descending, then id with localeCompare', () => {
    const listing = buildListing([
      transcript('--p--', 'b', ok('b', 5)),
      transcript('--p--', 'a', ok('a', 5)),
      transcript('--p--', 'old', ok('old', 1)),
      transcript('--p--', 'new', ok('new', 9)),
      transcript('--p--', 'B', ok('B', 5)),
    ]);
    expect(listing.sessions.map((s) => s.id)).toEqual(['new', 'a', 'b', 'B', 'old']);
    expect(listing.problems).toEqual([]);
  });

  it('carries the title, and omits cwd and title keys when absent', () => {
    const listing = buildListing([
      transcript('_no-cwd', 'x', ok('x', 1, {}, null)),
      transcript('--p--', 'y', ok('y', 2, { title: 'Y title' })),
    ]);
    expect(listing.sessions).toEqual([{ id: 'y', createdAt: 2, cwd: '/p', title: 'Y title' }, { id: 'x', createdAt: 1 }]);
    expect(Object.keys(listing.sessions[1])).toEqual(['id', 'createdAt']);
  });

  it('lists body-level damage with no title', () => {
    const listing = buildListing([transcript('--p--', 'bad', ok('bad', 1, { bodyError: { reason: 'corrupt', message: 'x' } }))]);
    expect(listing.sessions).toEqual([{ id: 'bad', createdAt: 1, cwd: '/p' }]);
  });

  it('skips and reports header-level damage, keeping the rest', () => {
    const listing = buildListing([
      transcript('--p--', 'torn', { headerProblem: 'no complete header line or frame' }),
      transcript('--p--', 'moved', ok('moved', 1, { headerProblem: 'does not identify' })),
      transcript('--p--', 'fine', ok('fine', 1)),
    ]);
    expect(listing.sessions.map((s) => s.id)).toEqual(['fine']);
    expect(listing.problems).toEqual([
      { key: '--p--/torn/session.jsonl', reason: 'no complete header line or frame' },
      { key: '--p--/moved/session.jsonl', reason: 'does not identify' },
    ]);
  });

  it('skips both transcripts of a session directory holding both encodings', () => {
    const listing = buildListing([
      transcript('--p--', 'both', ok('both', 1), 'raw'),
      transcript('--p--', 'both', ok('both', 1), 'zstd'),
      transcript('--q--', 'other', ok('other', 1), 'zstd'),
      transcript('--q--', 'raw-one', ok('raw-one', 1), 'raw'),
    ]);
    expect(listing.sessions.map((s) => s.id)).toEqual(['other', 'raw-one']);
    expect(listing.problems).toEqual([
      { key: '--p--/both/session.jsonl', reason: LISTING_REASONS.bothEncodings },
      { key: '--p--/both/session.jsonl.zstd', reason: LISTING_REASONS.bothEncodings },
    ]);
  });

  it('skips every copy of an id found in more than one project directory', () => {
    const listing = buildListing([
      transcript('--p--', 'dup', ok('dup', 1)),
      transcript('--q--', 'dup', ok('dup', 1, {}, '/q')),
      transcript('--q--', 'solo', ok('solo', 1, {}, '/q')),
    ]);
    expect(listing.sessions.map((s) => s.id)).toEqual(['solo']);
    expect(listing.problems).toEqual([
      { key: '--p--/dup/session.jsonl', reason: LISTING_REASONS.ambiguous(2) },
      { key: '--q--/dup/session.jsonl', reason: LISTING_REASONS.ambiguous(2) },
    ]);
  });

  it('does not list a transcript before it is summarized', () => {
    expect(buildListing([transcript('--p--', 'pending')]).sessions).toEqual([]);
  });
});

describe('patchListing', () => {
  const base = () => [
    transcript('--p--', 'b', ok('b', 5, { title: 'B' })),
    transcript('--p--', 'a', ok('a', 5)),
    transcript('--q--', 'old', ok('old', 1, { title: 'Old' })),
    transcript('--p--', 'new', ok('new', 9, { title: 'New' }, null)),
  ];

  it('gives what a rebuild gives when listed transcripts only got new titles', () => {
    const before = buildListing(base());
    const after = base();
    after[1] = transcript('--p--', 'a', ok('a', 5, { title: 'A now' }));
    after[3] = transcript('--p--', 'new', ok('new', 9, {}, null));
    const patched = patchListing(before, [after[1], after[3]]);
    expect(patched).toEqual(buildListing(after));
    expect(Object.isFrozen(patched?.sessions)).toBe(true);
    expect(before.sessions.map((s) => s.title)).toEqual(['New', undefined, 'B', 'Old']);
  });

  it('returns the same listing when no title changed', () => {
    const before = buildListing(base());
    expect(patchListing(before, [base()[0]])).toBe(before);
  });

  it('gives up (a rebuild is needed) when a header changed, a problem appeared or the transcript was not listed', () => {
    const before = buildListing(base());
    expect(patchListing(before, [transcript('--p--', 'a', ok('a', 6))])).toBeUndefined();
    expect(patchListing(before, [transcript('--p--', 'a', ok('a', 5, {}, '/elsewhere'))])).toBeUndefined();
    expect(patchListing(before, [transcript('--p--', 'a', ok('a', 5, { headerProblem: 'unbound' }))])).toBeUndefined();
    expect(patchListing(before, [transcript('--p--', 'zz', ok('zz', 5))])).toBeUndefined();
    expect(patchListing(before, [transcript('--p--', 'a')])).toBeUndefined();
  });
});
