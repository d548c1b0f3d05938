import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, nearestWord } from './suggest';

describe('editDistance', () => {
  it('counts the fewest insertions, deletions, substitutions and swaps of neighbours', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('', 'ab')).toBe(2);
    expect(editDistance('--roott', '--root')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('flaw', 'lawn')).toBe(2);
    expect(editDistance('--txet', '--text')).toBe(1);
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('ca', 'abc')).toBe(3);
  });
});

describe('nearestWord', () => {
  const options = ['--root', '--sessions-root', '--cwd', '--target', '--limit', '--json', '--jsonl', '--max-reference-bytes'];

  it('finds a near misspelling, another case, or the one option a prefix begins', () => {
    expect(nearestWord('--roott', options)).toBe('--root');
    expect(nearestWord('--limt', options)).toBe('--limit');
    expect(nearestWord('--targte', options)).toBe('--target');
    expect(nearestWord('--cdw', options)).toBe('--cwd');
    expect(nearestWord('--ROOT', options)).toBe('--root');
    expect(nearestWord('--max', options)).toBe('--max-reference-bytes');
  });

  it('suggests nothing far away, nor between two equally near words', () => {
    expect(nearestWord('--frobnicate', options)).toBeUndefined();
    expect(nearestWord('--x', options)).toBeUndefined();
    // One edit from --json and from --jsonl alike.
    expect(nearestWord('--jsonx', options)).toBeUndefined();
    expect(didYouMean('--roott', options)).toBe(' (did you mean --root?)');
    expect(didYouMean('--frobnicate', options)).toBe('');
  });
});
