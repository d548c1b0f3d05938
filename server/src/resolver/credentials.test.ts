import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPUS_FAMILIES, credentialCorpus, lookAlikeLines } from '../testing/credentialCorpus';
import { describeCredentialTally, detectCredentials, mergeCredentialSpans, tallyCredentials } from './credentials';

const REPO = path.resolve(__dirname, '..', '..', '..');
/** The real session fixtures: dsh's recorded store, the example store and the other agents' stores. */
const FIXTURE_FOLDERS = ['test/conformance/dsh-store/raw', 'examples/store', 'test/agent-stores/fixtures'];
const CORPUS_SEED = 20260101;
const CORPUS_SIZE = 1500;

function textFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) found.push(...textFiles(full));
    else if (/\.(jsonl|json|txt|md)$/.test(name)) found.push(full);
  }
  return found;
}

describe('detectCredentials over the labelled corpus', () => {
  it('finds at least 99 % of the corpus credentials, of every family, each covered whole', async () => {
    const corpus = credentialCorpus(CORPUS_SEED, CORPUS_SIZE);
    const missed = new Map<string, number>();
    let found = 0;
    let rightKind = 0;
    for (const item of corpus) {
      const spans = await detectCredentials(item.text);
      const covering = spans.find((span) => span.start <= item.start && span.end >= item.end);
      if (covering === undefined) missed.set(item.family, (missed.get(item.family) ?? 0) + 1);
      else {
        found++;
        if (covering.kind === item.kind) rightKind++;
      }
    }
    const recall = found / corpus.length;
    console.log(`credential recall: ${found} of ${corpus.length} (${(recall * 100).toFixed(2)} %), right kind ${rightKind}; missed by family: ${JSON.stringify([...missed])}`);
    expect(new Set(corpus.map((item) => item.family)).size).toBe(CORPUS_FAMILIES.length);
    expect(corpus.length).toBeGreaterThanOrEqual(1000);
    expect(recall).toBeGreaterThanOrEqual(0.99);
    // No family is left behind by the average.
    for (const family of CORPUS_FAMILIES) expect(missed.get(family) ?? 0, family).toBeLessThanOrEqual((CORPUS_SIZE / CORPUS_FAMILIES.length) * 0.05);
  });

  it('finds at most 1 per 10,000 lines in the real session fixtures and the look-alikes', async () => {
    let lines = 0;
    const positives: string[] = [];
    for (const folder of FIXTURE_FOLDERS) {
      for (const file of textFiles(path.join(REPO, folder))) {
        const text = readFileSync(file, 'utf8');
        lines += text.split('\n').length;
        for (const span of await detectCredentials(text)) positives.push(`${span.kind} in ${path.relative(REPO, file)}`);
      }
    }
    const fixtureLines = lines;
    const lookAlikes = lookAlikeLines(CORPUS_SEED, 20_000);
    lines += lookAlikes.length;
    for (const span of await detectCredentials(lookAlikes.join('\n'))) positives.push(`${span.kind} in the look-alikes`);
    const perTenThousand = (positives.length / lines) * 10_000;
    console.log(`credential false positives: ${positives.length} in ${lines} lines (${fixtureLines} of fixtures), ${perTenThousand.toFixed(2)} per 10,000 lines ${JSON.stringify(positives)}`);
    expect(lines).toBeGreaterThan(20_000);
    expect(perTenThousand).toBeLessThanOrEqual(1);
  });
});

describe('credential spans and tallies', () => {
  it('merges overlapping spans, keeping the kind of the longest part', () => {
    expect(
      mergeCredentialSpans([
        { start: 10, end: 20, kind: 'b' },
        { start: 0, end: 5, kind: 'a' },
        { start: 12, end: 40, kind: 'c' },
        { start: 40, end: 45, kind: 'd' },
      ]),
    ).toEqual([
      { start: 0, end: 5, kind: 'a' },
      { start: 10, end: 40, kind: 'c' },
      { start: 40, end: 45, kind: 'd' },
    ]);
  });

  it('reports the value of an assignment, not the name before it', async () => {
    const value = 'Zx9/Qw8+Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9Xc8Vb';
    const text = `aws_secret_access_key = "${value}"`;
    expect(await detectCredentials(text)).toEqual([{ start: text.indexOf(value), end: text.indexOf(value) + value.length, kind: 'aws-secret-access-key' }]);
  });

  it('leaves placeholders in connection URLs alone', async () => {
    expect(await detectCredentials('postgres://${DB_USER}:${DB_PASSWORD}@localhost:5432/app and redis://:<password>@cache:6379')).toEqual([]);
  });

  it('counts by kind in a stable order, in words without values', () => {
    const tally = tallyCredentials(['github-token', 'aws-access-key-id', 'github-token']);
    expect(tally).toEqual({ total: 3, byKind: [{ kind: 'aws-access-key-id', count: 1 }, { kind: 'github-token', count: 2 }] });
    expect(describeCredentialTally(tally)).toBe('1 aws-access-key-id, 2 github-token');
  });
});
