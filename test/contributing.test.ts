// The engineers' guide cannot silently rot: every repository path CONTRIBUTING.md names, in backticks
// or as a link, is there. A path without a top folder (`store/log/`) means one under server/src/, as
// the guide says; build output (a `dist` folder) is not in a clone and is not checked.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';

const GUIDE = 'CONTRIBUTING.md';
const guide = readFileSync(path.join(REPO_ROOT, GUIDE), 'utf8');

/** The repository's top folders, and server/src's, whose names open a path without a file extension. */
const FOLDERS = new Set(['shared', 'server', 'client-vscode', 'bench', 'test', 'docs', 'examples', '.ci', 'resolver', 'store', 'features', 'settings', 'wiring', 'cli', 'client', 'demo', 'testing']);
/** Extensions of the files the guide may name. */
const FILE = /\.(?:ts|mts|mjs|cjs|js|json|md|c|sh|el|lua|vim|toml|txt|png)$/;

/**
 * The repository paths a Markdown text names: link targets inside the repository, and the words of
 * backticked spans that read as a path (a file with a known extension, or a known folder then more).
 * Words with placeholders, globs or `=` are patterns or settings, and `textDocument/completion` or
 * `assistant/chunk` are names, not paths.
 */
function namedPaths(text: string): string[] {
  const found = new Set<string>();
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!) || target!.startsWith('#')) continue;
    found.add(target!.replace(/#.*$/, ''));
  }
  const prose = text.replace(/^```[\s\S]*?^```$/gm, '');
  for (const [, span] of prose.matchAll(/`([^`\n]+)`/g)) {
    // A command's words too: `node server/wasm/build.mjs` names a file.
    for (const word of span!.split(/\s+/)) {
      if (!/^[\w.@/-]+$/.test(word) || word.startsWith('@') || word.split('/').includes('dist')) continue;
      if (FILE.test(word) || (word.includes('/') && FOLDERS.has(word.split('/')[0]!))) found.add(word);
    }
  }
  return [...found];
}

/** Where a named path is: from the repository root, else under server/src/; undefined when nowhere. */
function locate(named: string): string | undefined {
  for (const base of ['', 'server/src/']) {
    if (existsSync(path.join(REPO_ROOT, base + named))) return base + named;
  }
  return undefined;
}

describe(GUIDE, () => {
  it('reads links, files and folders as paths, and commands, protocol names and build output as none', () => {
    const sample = [
      'See [the protocol](docs/protocol.md#errors), [npm](https://www.npmjs.com/) and [above](#code-map).',
      '`store/log/lineSkim.ts`, `test/e2e/`, `.ci/run`, `README.md`, `server/wasm/`',
      '`textDocument/completion`, `assistant/chunk`, `dsh-session-ls/client`, `npm test`, `*.test.ts`,',
      '`dsh-session-ls-<version>.tgz`, `server/dist/demo/demo.js`, `tuning.clock`, `@bokuweb/zstd-wasm`,',
      '`node server/wasm/build.mjs --fast`, `DSH_CONFORMANCE_DIR=/path/to/store npm test`',
      '```sh\nnode nowhere/at/all.mjs\n```',
    ].join('\n');
    expect(namedPaths(sample).sort()).toEqual(['.ci/run', 'README.md', 'docs/protocol.md', 'server/wasm/', 'server/wasm/build.mjs', 'store/log/lineSkim.ts', 'test/e2e/'].sort());
  });

  it('finds a named path that is not there, at the root or under server/src/', () => {
    expect(locate('store/log/lineSkim.ts')).toBe('server/src/store/log/lineSkim.ts');
    expect(locate('test/architecture.test.ts')).toBe('test/architecture.test.ts');
    expect(locate('store/log/lineSkimmer.ts')).toBeUndefined();
    expect(locate('server/src/features/nothing/')).toBeUndefined();
  });

  it('names only paths that are in the repository', () => {
    const named = namedPaths(guide);
    // The code map alone names far more; fewer means the extraction broke, not that all is well.
    expect(named.length).toBeGreaterThan(80);
    expect(named.filter((file) => locate(file) === undefined)).toEqual([]);
  });
});
