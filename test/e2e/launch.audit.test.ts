// Spec audit (docs/traceability.md): lsp-contract.md "Launch" — `npx dsh-session-ls` runs the link `npm ci`
// made, which must point at the small committed bin that loads the built server; and "Where sessions come
// from" step 5 — with DSH_HOME unset or blank, the server and the CLI read `~/.dsh/sessions`.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';
import type { InitializeResult } from 'vscode-languageserver-protocol';
import { REPO_ROOT, SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, removeTemporary, startServer, temporaryDirectory, waitForSessions } from './helpers';

/** What `npx dsh-session-ls` runs inside the repository. */
const LINK = path.join(REPO_ROOT, 'node_modules', '.bin', 'dsh-session-ls');
const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'server', 'package.json'), 'utf8')) as { version: string }).version;
const COUNT = Object.keys(EXAMPLE_SESSIONS).length;

const scratch = temporaryDirectory('launch-audit');
afterAll(() => removeTemporary(scratch));

describe('the dsh-session-ls bin', () => {
  it('is the small committed JavaScript file that loads the built server, and the npm link points at it', () => {
    const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'server', 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(path.join(REPO_ROOT, 'server', manifest.bin['dsh-session-ls']!)).toBe(SERVER_BIN);
    expect(execFileSync('git', ['ls-files', '--error-unmatch', path.relative(REPO_ROOT, SERVER_BIN)], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()).toBe(
      'server/bin/dsh-session-ls.js',
    );
    const source = readFileSync(SERVER_BIN, 'utf8');
    expect(source.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(source).toMatch(/require\('\.\.\/dist\/[\w/]+\.js'\)/);
    expect(source.split('\n').length).toBeLessThan(20);
    expect(realpathSync(LINK)).toBe(realpathSync(SERVER_BIN));
  });

  it('answers --version, the CLI and an LSP session over --stdio through the link', async () => {
    expect(execFileSync(LINK, ['--version'], { encoding: 'utf8' })).toBe(`${VERSION}\n`);
    const rows = JSON.parse(execFileSync(LINK, ['candidates', '--root', EXAMPLE_STORE, '--json'], { encoding: 'utf8' })) as unknown[];
    expect(rows).toHaveLength(COUNT);

    const child = spawn(LINK, ['--stdio', '--sessions-root', EXAMPLE_STORE], {
      env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    connection.listen();
    try {
      const result = await connection.sendRequest<InitializeResult>('initialize', { processId: null, rootUri: null, capabilities: {}, workspaceFolders: null });
      expect(result.serverInfo).toEqual({ name: 'dsh-session-ls', version: VERSION });
      await connection.sendRequest('shutdown');
      await connection.sendNotification('exit');
      expect(await exited).toBe(0);
    } finally {
      connection.dispose();
      if (child.exitCode === null) child.kill();
    }
  });
});

describe('the default root ~/.dsh/sessions', () => {
  const home = path.join(scratch, 'home');
  cpSync(EXAMPLE_STORE, path.join(home, '.dsh', 'sessions'), { recursive: true });

  it.each([['unset', undefined], ['blank', ' ']])('is where the server looks when DSH_HOME is %s', async (_what, dshHome) => {
    const env: NodeJS.ProcessEnv = { HOME: home, XDG_CACHE_HOME: path.join(scratch, 'cache') };
    const { client, cleanup } = await startServer({}, { env: dshHome === undefined ? { ...env, DSH_HOME: undefined } : { ...env, DSH_HOME: dshHome } });
    try {
      await waitForSessions(client, COUNT);
      expect(client.stderr).toContain(path.join(home, '.dsh', 'sessions'));
    } finally {
      await cleanup();
    }
  });

  it('is where the CLI looks when DSH_HOME is unset', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CACHE_HOME: path.join(scratch, 'cache') };
    delete env.DSH_HOME;
    const rows = JSON.parse(execFileSync(process.execPath, [SERVER_BIN, 'candidates', '--json'], { env, encoding: 'utf8' })) as unknown[];
    expect(rows).toHaveLength(COUNT);
  });
});
