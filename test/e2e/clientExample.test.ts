/**
 * `dsh-session-ls/client` as a library user has it: the tarball installed with `npm install <tgz>` into a
 * project of their own (test/support/installedPackage.ts), no `dsh-session-ls` on PATH. The README's
 * example (examples/client.mjs) is type-checked against the installed declarations and run with Node
 * from that project; what it prints is checked against the repository build's answers. The package's
 * entry points resolve, a failed start prints one short error, and `await using` shuts the server down.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DshSessionClient, formatSessionReferenceMention } from '../../server/src/client';
import { REPO_ROOT } from '../support/conformance';
import { type InstalledServer, installedServer, noServerOnPathEnv } from '../support/installedPackage';
import { SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_STORE, removeTemporary, temporaryDirectory } from './helpers';

/** The README's client example, as a file. */
const EXAMPLE = path.join(REPO_ROOT, 'examples', 'client.mjs');

let installed: InstalledServer;
let scratch: string;
/** The user's project: its node_modules holds the locally installed package and nothing else. */
let project: string;

beforeAll(async () => {
  installed = await installedServer();
  project = installed.projectDir;
  scratch = temporaryDirectory('client-example');
}, 300_000);
afterAll(() => removeTemporary(scratch));

/** A user's environment: nothing on PATH is a `dsh-session-ls`; a private cache and DSH_HOME. */
function userEnv(name: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...noServerOnPathEnv(), XDG_CACHE_HOME: path.join(scratch, `${name}-cache`), DSH_HOME: path.join(scratch, 'no-dsh-home'), ...extra };
}

/** Run a script file of the project with this Node, from the project. */
function runInProject(file: string, env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000, env });
}

/** Type-check `files` of the project against the installed declarations (strict, nothing but @types/node beside them); tsc's output. */
function typeCheck(files: string[], emit = false) {
  const config = path.join(project, `tsconfig.${files.map((file) => path.basename(file, path.extname(file))).join('-')}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        skipLibCheck: false,
        ...(emit ? { outDir: path.join(project, 'out') } : { noEmit: true }),
        types: ['node'],
        typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
      },
      files,
    }),
  );
  const tsc = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { cwd: project, encoding: 'utf8', timeout: 120_000 });
  return { output: tsc.stdout + tsc.stderr, status: tsc.status };
}

/** What the example prints, asked of the repository build through the repository's client. */
async function repositoryAnswers(): Promise<string> {
  const lines: string[] = [];
  const client = await DshSessionClient.start({ server: SERVER_BIN, settings: { sessionsRoot: EXAMPLE_STORE }, cwd: project, env: userEnv('repository') });
  try {
    const [session] = await client.candidates('cache');
    lines.push(session!.mention);
    const prepared = await client.prepare(`What did we decide in ${session!.mention}?`);
    lines.push(format(prepared.additionalContext?.source.references.map((reference) => reference.label)));
    const list = await client.completeAt('See @');
    lines.push(format(list.items.filter((item) => item.data?.kind === 'dsh-session').map((item) => item.label)));
    const message = `Compare ${session!.mention} with ${formatSessionReferenceMention({ sessionId: 'gone', label: 'Old work' })}`;
    for (const diagnostic of await client.diagnostics(message)) lines.push(String(diagnostic.code));
    lines.push((await client.hover(message, message.indexOf('@') + 1))!.contents.value.split('\n')[0]!);
    lines.push((await client.transcript(session!.sessionId)).split('\n')[0]!);
    lines.push('SESSION_REFERENCE_INVALID_CONFIG');
  } finally {
    await client.shutdown();
  }
  return lines.map((line) => line + '\n').join('');
}

describe('the package installed locally, in a project without dsh-session-ls on PATH', () => {
  it('has nothing on PATH that is a dsh-session-ls', () => {
    const which = spawnSync('sh', ['-c', 'command -v dsh-session-ls'], { cwd: project, env: userEnv('which'), encoding: 'utf8' });
    expect(which.stdout).toBe('');
    expect(which.status).not.toBe(0);
  });

  it('resolves the client as the package and as dsh-session-ls/client, its bin, and its package.json', () => {
    const script = path.join(project, 'resolve.cjs');
    writeFileSync(
      script,
      [
        "const paths = ['dsh-session-ls', 'dsh-session-ls/client', 'dsh-session-ls/bin/dsh-session-ls.js', 'dsh-session-ls/package.json'];",
        'console.log(JSON.stringify(paths.map((name) => require.resolve(name))));',
        "console.log(require('dsh-session-ls').DshSessionClient === require('dsh-session-ls/client').DshSessionClient);",
      ].join('\n'),
    );
    const result = runInProject(script, userEnv('resolve'));
    expect(result.stderr).toBe('');
    const packageDir = path.join(project, 'node_modules', 'dsh-session-ls');
    const [resolved, same] = result.stdout.trim().split('\n');
    expect(JSON.parse(resolved!)).toEqual([
      path.join(packageDir, 'dist', 'client.js'),
      path.join(packageDir, 'dist', 'client.js'),
      path.join(packageDir, 'bin', 'dsh-session-ls.js'),
      path.join(packageDir, 'package.json'),
    ]);
    expect(same).toBe('true');
  });

  it('type-checks the README example against the installed declarations (strict)', () => {
    writeFileSync(path.join(project, 'example.mts'), readFileSync(EXAMPLE, 'utf8'));
    expect(typeCheck(['example.mts'])).toEqual({ output: '', status: 0 });
  }, 120_000);

  it("runs the README example as written, on the package's own server, with the answers of the repository build", async () => {
    writeFileSync(path.join(project, 'example.mjs'), readFileSync(EXAMPLE, 'utf8'));
    const result = runInProject('example.mjs', userEnv('example', { DSH_SESSIONS_ROOT: EXAMPLE_STORE }));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(await repositoryAnswers());
  });

  it('prints one short error naming the cause and the command when the server cannot start', () => {
    const bin = path.join(project, 'node_modules', 'dsh-session-ls', 'bin', 'dsh-session-ls.js');
    const cases = [
      // The package's own server, stopping on a usage error before it answers.
      { options: "{ args: ['--sessions-root'] }", message: `\`${process.execPath} ${bin} --stdio --sessions-root\`): the server exited with code 2` },
      // A command that is not there.
      { options: "{ server: 'dsh-session-ls-not-installed' }", message: '`dsh-session-ls-not-installed --stdio`): spawn dsh-session-ls-not-installed ENOENT' },
    ];
    for (const [index, { options, message }] of cases.entries()) {
      const script = `failed-start-${index}.mjs`;
      writeFileSync(path.join(project, script), `import { DshSessionClient } from 'dsh-session-ls/client';\nawait DshSessionClient.start(${options});\n`);
      const result = runInProject(script, userEnv('failed'));
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`DshSessionStartError: cannot start dsh-session-ls (${message}`);
      // Node prints the source line of the throw site: one short line, never the bundle.
      expect(result.stderr.length).toBeLessThan(2048);
      expect(Math.max(...result.stderr.split('\n').map((line) => line.length))).toBeLessThan(400);
    }
  });

  it('shuts the server down at the end of an `await using` scope (TypeScript compiled for this Node)', () => {
    writeFileSync(
      path.join(project, 'using.mts'),
      [
        "import { DshSessionClient } from 'dsh-session-ls/client';",
        '',
        'let outside: DshSessionClient;',
        '{',
        '  await using client = await DshSessionClient.start();',
        '  outside = client;',
        "  console.log((await client.parse('hi')).text);",
        '}',
        "await outside.parse('hi').catch((error: Error) => console.log(error.message.split(':')[0]));",
        '',
      ].join('\n'),
    );
    expect(typeCheck(['using.mts'], true)).toEqual({ output: '', status: 0 });
    const result = runInProject(path.join('out', 'using.mjs'), userEnv('using'));
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('hi\ndsh-session-ls is not running (exit code 0)\n');
  }, 120_000);
});
