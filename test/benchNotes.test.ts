// The benchmark notes (bench/*.md) stay short enough to read, organised by topic, and speak of the
// project only: no journal headings, no issue or pull-request numbers, no commit hashes, no dates
// in the hand-written notes, and no pointer to a results file or prototype that is not there.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';

const BENCH = path.join(REPO_ROOT, 'bench');
const MAX_LINES = 900;
const notes = readdirSync(BENCH)
  .filter((name) => name.endsWith('.md') && name !== 'RESULTS-quick.md')
  .sort()
  .map((name) => ({ name, text: readFileSync(path.join(BENCH, name), 'utf8') }));
/** Written by hand; the RESULTS files are written by `npm run bench` and carry their run's date. */
const HAND_WRITTEN = ['ANALYSIS.md', 'README.md'];

const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Each offending match in every note, as "file: match", so a failure names what to reword. */
function offences(pattern: RegExp, names?: readonly string[]): string[] {
  const found: string[] = [];
  for (const note of notes) {
    if (names && !names.includes(note.name)) continue;
    for (const match of note.text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))) found.push(`${note.name}: ${match[0]}`);
  }
  return found;
}

describe('the benchmark notes', () => {
  it('are the notes and results this test expects', () => {
    expect(notes.map((note) => note.name)).toEqual(expect.arrayContaining(['ANALYSIS.md', 'README.md', 'RESULTS.md']));
  });

  it(`are at most ${MAX_LINES} lines in all`, () => {
    const counts = Object.fromEntries(notes.map((note) => [note.name, lineCount(note.text)]));
    const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
    expect(total, JSON.stringify(counts)).toBeLessThanOrEqual(MAX_LINES);
  });

  it('name no journal sessions', () => {
    // "--sessions 5000" is a flag, not a session of work.
    expect(offences(/(?<![-\w])sessions? \d+/i)).toEqual([]);
  });

  it('name no issue or pull-request numbers', () => {
    expect(offences(/\b(?:issues?|PR|pull request) #?\d+/i)).toEqual([]);
    expect(offences(/(?<![\w&/])#\d+/)).toEqual([]);
  });

  it('name no commit hashes', () => {
    // 7 to 40 hex digits with at least one letter and one digit: a hash, not a number or a word.
    expect(offences(/\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/)).toEqual([]);
  });

  it('say what was measured, not when: no dates or branch names in the hand-written notes', () => {
    expect(offences(/\b20\d\d-\d\d-\d\d\b/, HAND_WRITTEN)).toEqual([]);
    expect(offences(/\bbranch [\w-]+/i, HAND_WRITTEN)).toEqual([]);
  });

  it('point only at results files and prototypes that exist', () => {
    const named = new Set<string>();
    for (const note of notes) {
      for (const [file] of note.text.matchAll(/\bRESULTS[\w-]*\.md\b/g)) if (file !== 'RESULTS-quick.md') named.add(file);
      for (const [, file] of note.text.matchAll(/bench\/prototypes\/([\w.-]+\.\w+)/g)) named.add(path.join('prototypes', file!));
    }
    expect([...named].filter((file) => !existsSync(path.join(BENCH, file)))).toEqual([]);
  });
});
