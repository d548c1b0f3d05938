/**
 * A sessions root that is a regular file. The built server tells the editor (a
 * `window/showMessage` warning once, and `rootProblem: 'not-a-directory'` in `dshSession/status`),
 * keeps answering, and picks the root up once it is a directory; the CLI says the root is not a
 * directory (not that it "does not exist yet") and warns on stderr. A missing root stays quiet.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SESSION_STATUS_NOTIFICATION, SessionCommands, describeSessionsRootProblem, type SessionStoreStatus } from '@dsh-session-ls/shared';
import { SERVER_BIN, pollUntil } from '../support/lspClient';
import { recordFigure } from './support/scale';
import { escapedFaults, startMeasuredServer, type MeasuredServer } from './support/serverProcess';
import { TemporaryDirectories, writeSession } from './support/stores';

const temporary = new TemporaryDirectories();
const servers: MeasuredServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.kill();
});
afterAll(() => temporary.removeAll());

const SHOW_MESSAGE = 'window/showMessage';
const WARNING = 2;

function statuses(server: MeasuredServer): SessionStoreStatus[] {
  return server.client.messages(SESSION_STATUS_NOTIFICATION).map((message) => message.params as SessionStoreStatus);
}

function warnings(server: MeasuredServer): string[] {
  return server.client
    .messages(SHOW_MESSAGE)
    .map((message) => message.params as { type: number; message: string })
    .filter((params) => params.type === WARNING)
    .map((params) => params.message);
}

function cli(args: string[]) {
  const home = temporary.make('cli-home');
  const result = spawnSync(process.execPath, [SERVER_BIN, ...args], {
    cwd: home,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: path.join(home, 'cache'), DSH_HOME: path.join(home, 'dsh') },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('a sessions root that is a regular file', () => {
  it('the server warns once, reports not-a-directory in its status, keeps serving, and picks the fixed root up', async () => {
    const root = path.join(temporary.make('root-file'), 'sessions');
    writeFileSync(root, 'I am a file, not a sessions root\n');
    const server = await startMeasuredServer(temporary, root);
    servers.push(server);

    const problem = await server.client.waitForMessage(SESSION_STATUS_NOTIFICATION, (params: SessionStoreStatus) => params.rootProblem !== undefined, 30_000);
    expect(problem.params).toEqual({ root, indexed: 0, indexing: false, discovered: 0, rootProblem: 'not-a-directory' });
    await pollUntil(() => (warnings(server).length > 0 ? true : undefined), 30_000, 'a showMessage warning');
    expect(warnings(server)).toEqual([describeSessionsRootProblem(root, 'not-a-directory')]);
    expect(warnings(server)[0]).toContain('is not a directory');
    // Still serving: nothing listed, no crash.
    expect(await server.client.executeCommand(SessionCommands.candidates, {})).toEqual([]);

    // Fixed: the file becomes a directory with a session; the status drops the problem and counts it.
    rmSync(root);
    writeSession(root, { id: 'fixed', cwd: '/home/alice/proj', createdAt: 1, turns: [{ prompt: 'hi', answer: 'hello', title: 'Fixed' }] }, 'raw');
    await server.client.waitForMessage(
      SESSION_STATUS_NOTIFICATION,
      (params: SessionStoreStatus) => params.rootProblem === undefined && params.indexed === 1 && !params.indexing,
      30_000,
    );
    const rows = await server.client.executeCommand<Array<{ sessionId: string }>>(SessionCommands.candidates, {});
    expect(rows.map((row) => row.sessionId)).toEqual(['fixed']);
    // Warned once for the whole time the root was a file.
    expect(warnings(server)).toHaveLength(1);
    recordFigure('root-not-a-directory', 'status notifications until fixed', statuses(server).length);
    expect(escapedFaults(server.stderr())).toEqual([]);
  }, 120_000);

  it('a missing root is reported as missing in the status, without a warning', async () => {
    const root = path.join(temporary.make('root-missing'), 'not-yet', 'sessions');
    const server = await startMeasuredServer(temporary, root);
    servers.push(server);
    const status = await server.client.waitForMessage(SESSION_STATUS_NOTIFICATION, (params: SessionStoreStatus) => params.rootProblem !== undefined, 30_000);
    expect(status.params).toMatchObject({ root, rootProblem: 'missing' });
    // Give a warning every chance to arrive after the status: a candidates round trip orders after it.
    await server.client.executeCommand(SessionCommands.candidates, {});
    expect(warnings(server)).toEqual([]);
  }, 120_000);

  it('the CLI says the root is not a directory, on stdout and as a warning on stderr', () => {
    const root = path.join(temporary.make('cli-root-file'), 'sessions');
    writeFileSync(root, 'x');
    const listed = cli(['candidates', '--root', root]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(`No sessions found in ${root} (it is not a directory).\n`);
    expect(listed.stdout).not.toContain('does not exist');
    expect(listed.stderr).toBe(`warning: ${describeSessionsRootProblem(root, 'not-a-directory')}\n`);
    const prepared = cli(['prepare', '--text', 'no mentions here', '--root', root]);
    expect(prepared.code).toBe(0);
    expect(prepared.stderr).toBe(`warning: ${describeSessionsRootProblem(root, 'not-a-directory')}\n`);
    // A missing root is still "does not exist yet", with nothing on stderr.
    const missing = path.join(path.dirname(root), 'missing');
    const empty = cli(['candidates', '--root', missing]);
    expect(empty.stdout).toBe(`No sessions found in ${missing} (it does not exist yet).\n`);
    expect(empty.stderr).toBe('');
    // The file was only looked at.
    expect(readFileSync(root, 'utf8')).toBe('x');
  }, 120_000);
});
