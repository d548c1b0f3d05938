/**
 * The installable server: `npm run pack` writes a self-contained tarball (bundles, bin, editor
 * configurations, its own user README, LICENSE, no dependencies) that `npm install -g --offline`
 * installs into a scratch prefix outside the repository.
 * The installed `dsh-session-ls` on PATH, run from a temp directory with nothing of the clone copied,
 * answers `--version`, `candidates --json` and an LSP session exactly as the repository build does.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { DshSessionClient } from '../../server/src/client';
import { REPO_ROOT, fixtureStore } from '../support/conformance';
import { type InstalledServer, installedServer, installedServerEnv, serverVersion } from '../support/installedPackage';
import { SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_STORE, removeTemporary, temporaryDirectory } from './helpers';

/** The stores both builds are asked about: the example store, and dsh's raw fixture store. */
const STORES: Array<[string, string]> = [['example', EXAMPLE_STORE], ['dsh fixture', fixtureStore('raw')]];

let installed: InstalledServer;
let scratch: string;
/** The directory every run starts in: a temp directory with no repository around it. */
let cwd: string;

beforeAll(async () => {
  installed = await installedServer();
  scratch = temporaryDirectory('installed');
  cwd = path.join(scratch, 'cwd');
  mkdirSync(cwd);
}, 300_000);
afterAll(() => removeTemporary(scratch));

/** An environment with the installed bin first on PATH and a private cache and DSH_HOME. */
function userEnv(name: string): NodeJS.ProcessEnv {
  return { ...installedServerEnv(installed), XDG_CACHE_HOME: path.join(scratch, `${name}-cache`), DSH_HOME: path.join(scratch, 'no-dsh-home') };
}

/** Run the installed `dsh-session-ls` (found on PATH) or, with `repo`, the repository's bin. */
function run(which: 'installed' | 'repo', args: string[]) {
  const [command, argv] = which === 'installed' ? ['dsh-session-ls', args] : [process.execPath, [SERVER_BIN, ...args]];
  const result = spawnSync(command, argv, { cwd, env: userEnv(which), encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, error: result.error };
}

function allFiles(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? allFiles(file, base) : [path.relative(base, file)];
  });
}

describe('the packed tarball', () => {
  it('is named after the version and installs a package with no dependencies: bundles, bin, declarations, editor configurations, README and LICENSE only', () => {
    expect(path.basename(installed.tarball)).toBe(`dsh-session-ls-${serverVersion()}.tgz`);
    expect(path.dirname(installed.tarball)).toBe(REPO_ROOT);
    const manifest = JSON.parse(readFileSync(path.join(installed.packageDir, 'package.json'), 'utf8'));
    expect(manifest.name).toBe('dsh-session-ls');
    expect(manifest.private).toBeUndefined();
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'scripts', 'bundleDependencies']) expect(manifest[field]).toBeUndefined();
    expect(manifest.bin).toEqual({ 'dsh-session-ls': 'bin/dsh-session-ls.js' });
    // Less what the installed package's own runs (other tests') may have added: V8's code cache of its bundles.
    const files = allFiles(installed.packageDir)
      .filter((file) => !/^dist\/bundle\/code-cache\/\w+-v[\d.]+-\w+-[\w-]+\.v8$/.test(file))
      .sort();
    expect(files.filter((file) => !/^(dist\/types\/shared\/\w+\.d\.ts|editors\/.*)$/.test(file))).toEqual([
      'LICENSE',
      'README.md',
      'bin/dsh-session-ls.js',
      'dist/bundle/cliProcess.js',
      'dist/bundle/main.js',
      'dist/bundle/serverProcess.js',
      'dist/bundle/summarizeWorker.js',
      'dist/bundle/zstd.wasm',
      'dist/client.js',
      'dist/types/client/errors.d.ts',
      'dist/types/client/index.d.ts',
      'dist/types/client/positions.d.ts',
      'dist/types/client/types.d.ts',
      'package.json',
    ]);
    // Nothing in it points back into the clone it was built from.
    for (const file of files) expect(readFileSync(path.join(installed.packageDir, file), 'utf8')).not.toContain(REPO_ROOT);
  });

  it('ships every editor configuration of docs/editors/, byte for byte, in editors/', () => {
    const expected = readdirSync(path.join(REPO_ROOT, 'docs', 'editors'))
      .filter((name) => !name.endsWith('.md'))
      .sort();
    expect(expected.length).toBeGreaterThanOrEqual(7);
    expect(readdirSync(path.join(installed.packageDir, 'editors')).sort()).toEqual(expected);
    for (const name of expected) {
      expect(readFileSync(path.join(installed.packageDir, 'editors', name)), name).toEqual(readFileSync(path.join(REPO_ROOT, 'docs', 'editors', name)));
    }
  });
});

describe("the packed tarball's README", () => {
  let readme: string;
  beforeAll(() => {
    readme = readFileSync(path.join(installed.packageDir, 'README.md'), 'utf8');
  });

  it('is for a user of the package: no clone, no tests, no benchmark, no links into a repository', () => {
    expect(readme).not.toMatch(/npm (test|ci|start)\b|npm run (test|bench|build|pack|package)\b|npx\b/);
    expect(readme).not.toMatch(/\bbench(mark)?\b|vitest|\bclone\b|CONTRIBUTING|docs\//i);
    // Relative links would point nowhere once the package is installed.
    expect([...readme.matchAll(/\]\((?![a-z][a-z0-9+.-]*:)[^)]*\)/gi)].map((match) => match[0])).toEqual([]);
  });

  it('has the sections a user needs: install, editors, command line, client, troubleshooting', () => {
    const headings = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map((match) => match[1]!);
    for (const heading of [/^Install/, /^Editors/, /^Command line/, /dsh-session-ls\/client/, /^Troubleshooting/]) {
      expect(headings.some((text) => heading.test(text)), String(heading)).toBe(true);
    }
    expect(readme).toContain(`npm install -g --offline ./dsh-session-ls-${serverVersion()}.tgz`);
    expect(readme).toMatch(/^dsh-session-ls candidates /m);
    expect(readme).toMatch(/^dsh-session-ls prepare /m);
  });

  it('names every editor configuration it ships', () => {
    for (const name of readdirSync(path.join(installed.packageDir, 'editors'))) expect(readme).toContain(`\`${name}\``);
  });

  it("gives the repository README's client example, unchanged", () => {
    const example = (text: string) => [...text.matchAll(/<!-- client example -->\n```js\n([\s\S]*?)```\n/g)].map(([, body]) => body);
    const fromRepository = example(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
    expect(fromRepository).toHaveLength(1);
    expect(example(readme)).toEqual(fromRepository);
  });
});

describe('the installed dsh-session-ls, from a directory outside the repository', () => {
  it('is the bin on PATH and answers --version as the repository build does', () => {
    const which = spawnSync('sh', ['-c', 'command -v dsh-session-ls'], { cwd, env: userEnv('which'), encoding: 'utf8' });
    expect(which.stdout.trim()).toBe(path.join(installed.binDir, 'dsh-session-ls'));
    const version = run('installed', ['--version']);
    expect(version.error).toBeUndefined();
    expect(version).toMatchObject({ code: 0, stderr: '' });
    expect(version.stdout).toBe(`${serverVersion()}\n`);
    expect(version.stdout).toBe(run('repo', ['--version']).stdout);
  });

  it.each(STORES)('answers candidates --json on the %s store as the repository build does', (_name, root) => {
    const installedAnswer = run('installed', ['candidates', '--root', root, '--json', '--limit', '1000']);
    expect(installedAnswer.stderr).toBe('');
    expect(installedAnswer.code).toBe(0);
    const rows = JSON.parse(installedAnswer.stdout) as SessionReferenceMentionCandidate[];
    expect(rows.length).toBeGreaterThan(0);
    const repoAnswer = run('repo', ['candidates', '--root', root, '--json', '--limit', '1000']);
    expect(repoAnswer.code).toBe(0);
    expect(rows).toEqual(JSON.parse(repoAnswer.stdout));
  });

  it.each(STORES)('serves an LSP session over stdio on the %s store with the answers of the repository build', async (_name, root) => {
    const session = async (which: 'installed' | 'repo') => {
      const client = await DshSessionClient.start({
        server: which === 'installed' ? 'dsh-session-ls' : SERVER_BIN,
        settings: { sessionsRoot: root },
        cwd,
        env: userEnv(`lsp-${which}`),
      });
      try {
        const status = await client.waitUntilIndexed();
        const candidates = await client.candidates('', { limit: 1000 });
        const prepared = await client.prepare(`Compare ${candidates.slice(0, 2).map((row) => row.mention).join(' and ')}.`);
        const completion = await client.completeAt('See @');
        return {
          status,
          candidates,
          content: prepared.content,
          // The snapshot's id is fresh each time, as dsh makes it.
          context: { ...prepared.additionalContext, id: typeof prepared.additionalContext?.id },
          completion: completion.items.filter((item) => item.data?.kind === 'dsh-session').map((item) => [item.label, item.textEdit?.newText]),
          exitCode: await client.shutdown(),
        };
      } finally {
        client.dispose();
      }
    };
    const fromInstalled = await session('installed');
    expect(fromInstalled.status).toMatchObject({ root, indexing: false });
    expect(fromInstalled.candidates.length).toBeGreaterThan(0);
    expect(fromInstalled.context.source?.references).toHaveLength(Math.min(2, fromInstalled.candidates.length));
    expect(fromInstalled.completion.length).toBe(Math.min(fromInstalled.candidates.length, 50));
    expect(fromInstalled.exitCode).toBe(0);
    expect(fromInstalled).toEqual(await session('repo'));
  });
});
