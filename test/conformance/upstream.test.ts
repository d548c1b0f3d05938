// The conformance data kept in this repository is a copy of what was recorded from dsh. Where the
// conformance source it was copied from sits beside the repository (`../shared`, as on the project's
// own machines), the copy must still equal it, so that a change there is taken up here, not drifted from.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, REPOSITORY_CONFORMANCE_STORE } from '../support/conformance';

const SOURCE = path.resolve(REPO_ROOT, '..', 'shared');
const SOURCE_STORE = path.join(SOURCE, 'fixtures', 'dsh-store');
const SOURCE_CONTRACT = path.join(SOURCE, 'docs', 'lsp-contract.md');
const present = existsSync(SOURCE_STORE) && existsSync(SOURCE_CONTRACT);

/** Every file under `dir` (relative paths, sorted), leaving out the folder's own README. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .filter((file) => file !== 'README.md')
    .sort();
}

/** The settings table of the LSP contract: key, type and default (a number, or null for "none"). */
function contractSettingsTable(markdown: string): Array<{ key: string; type: string; default: number | null }> {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Settings'));
  if (!section) throw new Error(`${SOURCE_CONTRACT} has no Settings section`);
  return [...section.matchAll(/^\| `(\w+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((row) => ({
    key: row[1]!,
    type: row[2]!.trim(),
    default: /^\d+$/.test(row[3]!.trim()) ? Number(row[3]!.trim()) : null,
  }));
}

describe.skipIf(!present)(`the conformance copy against its source${present ? '' : ` (skipped: no source at ${SOURCE})`}`, () => {
  it('holds the same store files, byte for byte', () => {
    const ours = files(REPOSITORY_CONFORMANCE_STORE);
    expect(ours).toEqual(files(SOURCE_STORE));
    for (const file of ours) {
      expect(readFileSync(path.join(REPOSITORY_CONFORMANCE_STORE, file)).equals(readFileSync(path.join(SOURCE_STORE, file))), file).toBe(true);
    }
  });

  it('records the settings table of the LSP contract', () => {
    const recorded = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'conformance', 'contract-settings.json'), 'utf8'));
    expect(recorded).toEqual(contractSettingsTable(readFileSync(SOURCE_CONTRACT, 'utf8')));
  });
});

describe('the conformance copy', () => {
  it('holds both encodings of the same sessions and dsh’s answers', () => {
    const sessions = (encoding: string) =>
      files(path.join(REPOSITORY_CONFORMANCE_STORE, encoding)).map((file) => path.dirname(file));
    expect(sessions('raw').length).toBeGreaterThan(0);
    expect(sessions('zstd')).toEqual(sessions('raw'));
    const answers = readFileSync(path.join(REPOSITORY_CONFORMANCE_STORE, 'expected', 'dsh-answers.jsonl'), 'utf8').split('\n').filter(Boolean);
    expect(answers.length).toBeGreaterThan(50);
    for (const line of answers) expect(JSON.parse(line)).toHaveProperty('response');
  });
});

describe('a clone of the repository alone', () => {
  it('has everything the tests read: no other test looks beside the repository', () => {
    const outside = /'\.\.', 'shared'|\.\.\/shared\//;
    const offenders = ['shared/src', 'server/src', 'client-vscode/src', 'bench/src', 'test']
      .flatMap((dir) => readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' }).map((file) => path.join(dir, file)))
      .filter((file) => file.endsWith('.ts') && file !== path.join('test', 'conformance', 'upstream.test.ts'))
      .filter((file) => outside.test(readFileSync(path.join(REPO_ROOT, file), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
