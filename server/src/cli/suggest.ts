/**
 * The nearest of a few known words to a mistyped one (`--roott` → `--root`), for usage errors.
 * Imports nothing: the command line is parsed before the CLI's bundle is loaded.
 */

/**
 * Edit distance with transpositions (optimal string alignment): the fewest single-character
 * insertions, deletions, substitutions and swaps of two neighbours from `a` to `b`, so the common
 * typo `--txet` is one edit from `--text`.
 */
export function editDistance(a: string, b: string): number {
  // Three rows of the table: row[j] is the distance between the prefix of `a` read so far and b[0..j).
  let before: number[] = [];
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      let distance = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, before[j - 2]! + 1);
      next.push(distance);
    }
    before = row;
    row = next;
  }
  return row[b.length]!;
}

/**
 * The known word `word` most likely stands for, or undefined when none is close: the same word in
 * another case, the one known word it begins (`--max` → `--max-reference-bytes`), or the nearest by
 * edit distance when that is at most a third of its length (at least 1, at most 3). A tie between
 * two equally near words suggests neither.
 */
export function nearestWord(word: string, known: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const sameLetters = known.find((candidate) => candidate.toLowerCase() === lower);
  if (sameLetters !== undefined) return sameLetters;
  // A prefix long enough to mean something besides its dashes.
  if (lower.replace(/^-+/, '').length >= 3) {
    const extended = known.filter((candidate) => candidate.toLowerCase().startsWith(lower));
    if (extended.length === 1) return extended[0];
  }
  const limit = Math.min(3, Math.max(1, Math.floor(lower.replace(/^-+/, '').length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  let tied = false;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tied = false;
    } else if (distance === bestDistance && candidate !== best) {
      tied = true;
    }
  }
  return bestDistance <= limit && !tied ? best : undefined;
}

/** ` (did you mean X?)` for the nearest known word, else an empty string. */
export function didYouMean(word: string, known: readonly string[]): string {
  const nearest = nearestWord(word, known);
  return nearest === undefined ? '' : ` (did you mean ${nearest}?)`;
}
