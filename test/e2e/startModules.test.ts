// The Node modules a start loads, seen from outside. Each costs start time. The server's bundle
// requires the language server library, whose `files.js` would load `child_process` (and `net`
// and `dgram` behind it) for helpers the server never calls. server/esbuild.mjs swaps in a
// stand-in that loads it on first use.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionCommands } from '@dsh-session-ls/shared';
import { SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_STORE, removeTemporary, startServer, temporaryDirectory } from './helpers';

const scratch = temporaryDirectory('start-modules');
afterAll(() => removeTemporary(scratch));

const recorder = path.join(scratch, 'record-modules.cjs');
writeFileSync(recorder, "process.on('exit', () => require('node:fs').writeFileSync(process.env.RECORD_MODULES_TO, process.moduleLoadList.join('\\n')));\n");

/** The environment that makes a Node process write its loaded modules to `file` at exit. */
function recording(file: string): NodeJS.ProcessEnv {
  return { NODE_OPTIONS: `--require ${recorder}`, RECORD_MODULES_TO: file, XDG_CACHE_HOME: path.join(scratch, 'cache') };
}

function nodeModules(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((entry) => entry.startsWith('NativeModule '))
    .map((entry) => entry.slice('NativeModule '.length));
}

describe('what a start loads', () => {
  it('the server answers over stdio without loading child_process', async () => {
    const file = path.join(scratch, 'server.txt');
    const { client } = await startServer({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } }, { env: recording(file) });
    expect(((await client.executeCommand(SessionCommands.candidates, { query: '', limit: 100 })) as unknown[]).length).toBeGreaterThan(0);
    expect(await client.shutdown()).toBe(0);
    const loaded = nodeModules(file);
    // The list is the real one: stdio itself needs net, and the index its worker-pool module.
    expect(loaded).toEqual(expect.arrayContaining(['net', 'worker_threads']));
    expect(loaded).not.toContain('child_process');
  });

  it('the CLI lists without loading child_process', () => {
    const file = path.join(scratch, 'cli.txt');
    const result = spawnSync(process.execPath, [SERVER_BIN, 'candidates', '--root', EXAMPLE_STORE, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, ...recording(file) },
      timeout: 60_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as unknown[]).length).toBeGreaterThan(0);
    const loaded = nodeModules(file);
    expect(loaded).toContain('worker_threads');
    expect(loaded).not.toContain('child_process');
  });
});
