/**
 * The README's `dsh-session-ls/client` example, as written: taken from README.md, type-checked against
 * the installed package's declarations, and run with Node against the installed tarball from a
 * directory outside the repository. What it prints is checked against the repository CLI's answers.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { REPO_ROOT } from '../support/conformance';
import { type InstalledServer, installedServer, installedServerEnv } from '../support/installedPackage';
import { SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_STORE, removeTemporary, temporaryDirectory } from './helpers';

const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const examples = [...readme.matchAll(/<!-- client example -->\n```js\n([\s\S]*?)```\n/g)].map(([, body]) => body!);

let installed: InstalledServer;
let scratch: string;
/** Where the example lives, as in a user's project: its node_modules holds only the installed package. */
let project: string;

beforeAll(async () => {
  installed = await installedServer();
  scratch = temporaryDirectory('client-example');
  project = path.join(scratch, 'project');
  mkdirSync(path.join(project, 'node_modules'), { recursive: true });
  symlinkSync(installed.packageDir, path.join(project, 'node_modules', 'dsh-session-ls'), 'dir');
}, 300_000);
afterAll(() => removeTemporary(scratch));

/** The repository CLI's candidates for a query, ranked for the example's directory. */
function cliCandidates(query: string): SessionReferenceMentionCandidate[] {
  const result = spawnSync(process.execPath, [SERVER_BIN, 'candidates', query, '--root', EXAMPLE_STORE, '--json'], {
    cwd: project,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cli-cache'), DSH_HOME: path.join(scratch, 'no-dsh-home') },
  });
  if (result.status !== 0) throw new Error(`the CLI failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as SessionReferenceMentionCandidate[];
}

describe('the README client example', () => {
  it('is in the README once', () => {
    expect(examples).toHaveLength(1);
    expect(examples[0]).toContain("from 'dsh-session-ls/client'");
  });

  it('type-checks against the installed package (strict, its declarations need nothing else)', () => {
    writeFileSync(path.join(project, 'example.mts'), examples[0]!);
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
        },
        files: ['example.mts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 120_000);

  it('runs as written against the installed server and prints the answers of the repository build', () => {
    writeFileSync(path.join(project, 'example.mjs'), examples[0]!);
    const result = spawnSync(process.execPath, ['example.mjs'], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...installedServerEnv(installed), DSH_SESSIONS_ROOT: EXAMPLE_STORE, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home') },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const [first] = cliCandidates('cache');
    expect(first).toBeDefined();
    const everySession = cliCandidates('');
    // console.log prints a value as util.format does.
    expect(result.stdout).toBe(
      [first!.mention, format([first!.label]), format(everySession.map((candidate) => candidate.label)), 'SESSION_REFERENCE_INVALID_CONFIG', ''].join('\n'),
    );
  });
});
