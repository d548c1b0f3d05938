// The repository speaks of the project only: a reader has never seen the tracker or the history of
// how it was built, so no file names a work session, an issue or pull request number, or a commit.
// (The bench notes have their own, stricter check in benchNotes.test.ts.)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';

/** Data, not prose: recorded stores and generated or binary files. */
const DATA = /^(test\/conformance\/dsh-store|examples\/store|test\/agent-stores\/fixtures)\/|package-lock\.json$|\.(png|wasm|zstd|jsonl|gz)$/;

const HISTORY: Array<[string, RegExp]> = [
  ['a work session', /\bSessions? \d+/],
  ['an issue or pull request', /\b(?:[Ii]ssues?|PRs?|[Pp]ull requests?) #?\d+/],
  ['a commit', /\b(?:commit|at|since|before|after|reverted|in) `?[0-9a-f]{7,40}`?\b|\(`?[0-9a-f]{7,12}`?\)/],
];

/** `file:line: text` for every line of the tracked prose and code that names `what` matches. */
function historyReferences(files: Array<{ file: string; text: string }>): string[] {
  const found: string[] = [];
  for (const { file, text } of files) {
    text.split('\n').forEach((line, index) => {
      for (const [what, pattern] of HISTORY) if (pattern.test(line)) found.push(`${file}:${index + 1}: names ${what}: ${line.trim()}`);
    });
  }
  return found;
}

describe('the repository names no history', () => {
  it('finds each kind of reference it looks for', () => {
    expect(
      historyReferences([
        // Built from pieces, so that this file does not name what it looks for.
        { file: 'a.ts', text: ['// measured in Sess' + 'ion 19', '// see iss' + 'ue 13', 'fixed (' + '556de82)', '// the previous build (`main` a' + 't 20565f2)', 'fine: distinct sess' + 'ion 2'].join('\n') },
      ]).map((line) => line.split(': names ')[1]!.split(':')[0]),
    ).toEqual(['a work session', 'an issue or pull request', 'a commit', 'a commit']);
  });

  it('in any tracked file', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    const files = tracked.filter((file) => !DATA.test(file)).map((file) => ({ file, text: readFileSync(path.join(REPO_ROOT, file), 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    expect(historyReferences(files)).toEqual([]);
  });
});
