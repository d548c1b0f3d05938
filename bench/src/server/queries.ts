/** Completion queries per kind, drawn from the store's own labels, cwds and ids (what users type). */
import { Random } from '../generate/random';

/** The query kinds the figures are reported for. */
export const QUERY_KINDS = ['empty', '1-char', '3-char', '8-char'] as const;
/** One query kind. */
export type QueryKind = (typeof QUERY_KINDS)[number];

const LENGTH: Record<QueryKind, number> = { empty: 0, '1-char': 1, '3-char': 3, '8-char': 8 };

/**
 * `count` distinct-ish queries of each kind. A query is an `@` token, so it never holds whitespace;
 * most are substrings of real labels, cwds or ids, a few match nothing.
 */
export function makeQueries(labels: ReadonlyMap<string, string>, cwds: readonly string[], seed: number, count: number): Record<QueryKind, string[]> {
  const random = new Random(seed ^ 0x0ae7);
  const words: string[] = [];
  for (const [id, label] of labels) {
    for (const word of label.split(/\s+/)) if (word.length > 0) words.push(word);
    if (random.chance(0.02)) words.push(id);
  }
  for (const cwd of cwds) words.push(...cwd.split(/\s+/).filter((w) => w.length > 0));
  const queries = {} as Record<QueryKind, string[]>;
  for (const kind of QUERY_KINDS) {
    const length = LENGTH[kind];
    const list: string[] = [];
    for (let i = 0; i < count; i++) {
      if (length === 0) {
        list.push('');
        continue;
      }
      if (random.chance(0.05)) {
        list.push('zqxj#'.repeat(2).slice(0, length));
        continue;
      }
      let word = random.pick(words);
      for (let tries = 0; word.length < length && tries < 50; tries++) word = random.pick(words);
      const start = word.length > length ? random.int(0, word.length - length) : 0;
      const query = word.slice(start, start + length);
      // Users type in any case; matching is case-insensitive.
      list.push(random.chance(0.2) ? query.toUpperCase() : query);
    }
    queries[kind] = list;
  }
  return queries;
}
