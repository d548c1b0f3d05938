// No test hooks in the product: tests inject what they need (a store double, a worker script) through
// ordinary options, so no production source of shared/, server/, client-vscode/ or bench/ reads an
// environment variable named like a test hook, carries a `testHook`, or keeps more than a few members
// that exist only for tests (`@forTests`, see test/unusedCode.test.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';

/** The production folders, as test/unusedCode.test.ts reads them. */
const PRODUCTION_DIRS = ['shared/src', 'server/src', 'client-vscode/src', 'bench/src'];

/** The most members tagged `@forTests` the production sources may keep. */
const MAX_FOR_TESTS = 5;

interface Source {
  /** Relative to the repository, with `/`. */
  file: string;
  text: string;
}

function productionSources(): Source[] {
  const found: Source[] = [];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name !== 'node_modules' && name !== 'dist' && name !== 'testing') visit(full);
      } else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts')) {
        found.push({ file: path.relative(REPO_ROOT, full).split(path.sep).join('/'), text: readFileSync(full, 'utf8') });
      }
    }
  };
  for (const dir of PRODUCTION_DIRS) visit(path.join(REPO_ROOT, dir));
  return found;
}

/** What the rule finds in `sources`: each hook with its file and line, and the `@forTests` count when over the limit. */
function testHooksIn(sources: readonly Source[]): string[] {
  const findings: string[] = [];
  let forTests = 0;
  for (const { file, text } of sources) {
    text.split('\n').forEach((line, index) => {
      const at = `${file}:${index + 1}`;
      for (const name of line.match(/\b\w*_TEST_\w*\b/g) ?? []) findings.push(`${at} names ${name}`);
      if (/testHook/i.test(line)) findings.push(`${at} has a testHook`);
      forTests += (line.match(/@forTests\b/g) ?? []).length;
    });
  }
  if (forTests > MAX_FOR_TESTS) findings.push(`${forTests} members tagged @forTests (at most ${MAX_FOR_TESTS})`);
  return findings;
}

describe('test hooks in production code', () => {
  it('finds none in the repository, and at most a few @forTests members', () => {
    const sources = productionSources();
    expect(sources.length).toBeGreaterThan(100);
    expect(testHooksIn(sources)).toEqual([]);
  });

  it('reports an environment variable named like a test hook, a testHook, and too many @forTests members', () => {
    const tagged = Array.from({ length: MAX_FOR_TESTS + 1 }, (_, i) => `/** @forTests */ export const x${i} = ${i};`).join('\n');
    expect(
      testHooksIn([
        { file: 'server/src/a.ts', text: "const held = process.env.DSH_SESSION_LS_TEST_HOLD;\nconst other = process.env['MY_TEST_SWITCH'];" },
        { file: 'server/src/b.ts', text: "interface Request { testHook?: 'hang' }" },
        { file: 'server/src/c.ts', text: tagged },
      ]),
    ).toEqual([
      'server/src/a.ts:1 names DSH_SESSION_LS_TEST_HOLD',
      'server/src/a.ts:2 names MY_TEST_SWITCH',
      'server/src/b.ts:1 has a testHook',
      `${MAX_FOR_TESTS + 1} members tagged @forTests (at most ${MAX_FOR_TESTS})`,
    ]);
    expect(testHooksIn([{ file: 'server/src/c.ts', text: tagged.split('\n').slice(1).join('\n') }])).toEqual([]);
  });
});
