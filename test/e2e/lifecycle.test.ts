import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionCommands } from '@dsh-session-ls/shared';
import { LspTestClient, REPO_ROOT, SERVER_BIN, pollUntil } from '../support/lspClient';
import { EXAMPLE_STORE, removeTemporary, startServer, temporaryDirectory } from './helpers';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/**
 * The built server over `--socket`, connected to a listener of this test's own, so that the test can
 * write raw bytes and reset the connection; `initialize` is answered before it returns.
 */
async function overOwnSocket() {
  const scratch = temporaryDirectory('own-socket');
  const listener = createServer();
  const connected = new Promise<Socket>((resolve) => listener.once('connection', resolve));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  const child = spawn(process.execPath, [SERVER_BIN, `--socket=${port}`, '--sessions-root', EXAMPLE_STORE], {
    env: { ...process.env, XDG_CACHE_HOME: scratch },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const socket = await connected;
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });
  let answered = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (answered += chunk));
  socket.on('error', () => undefined);
  socket.write(`Content-Length: ${Buffer.byteLength(initialize)}\r\n\r\n${initialize}`);
  await pollUntil(() => (answered.includes('"id":1') ? true : undefined), 20_000, 'the answer to initialize');
  return {
    socket,
    log: () => log,
    /** The exit code, or a note that it still runs after a generous deadline. */
    exitCode: () => Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000).unref())]),
    dispose: () => {
      child.kill('SIGKILL');
      listener.close();
      removeTemporary(scratch);
    },
  };
}

describe('the built server: launch and lifecycle', () => {
  it('answers initialize with the contract capabilities', async () => {
    const { client, initialized: result, cleanup } = await startServer({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } });
    cleanups.push(cleanup);
    expect(result.serverInfo).toEqual({ name: 'dsh-session-ls', version: JSON.parse(readFileSync(path.join(REPO_ROOT, 'server', 'package.json'), 'utf8')).version });
    const capabilities = result.capabilities;
    expect(capabilities.completionProvider).toMatchObject({ resolveProvider: true });
    expect(capabilities.completionProvider?.triggerCharacters).toEqual(['@', '/']);
    expect([...capabilities.executeCommandProvider!.commands].sort()).toEqual(Object.values(SessionCommands).sort());
    expect(capabilities.executeCommandProvider?.commands).toEqual(
      expect.arrayContaining([SessionCommands.candidates, SessionCommands.prepare, SessionCommands.parse, SessionCommands.formatMention]),
    );
    expect(capabilities.textDocumentSync).toBeDefined();
    expect(capabilities.workspace?.workspaceFolders).toEqual({ supported: true, changeNotifications: true });
    expect(client.running).toBe(true);
  });

  it('writes nothing but protocol to stdout, and exits 0 after shutdown and exit', async () => {
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } });
    cleanups.push(cleanup);
    await client.executeCommand(SessionCommands.candidates, {});
    expect(await client.shutdown()).toBe(0);
    expect(client.protocolErrors).toEqual([]);
    expect(client.stderr).toContain('sessions root:');
  });

  it('writes the persistent index cache on shutdown, so a start right after adopts it', async () => {
    const cache = path.join(temporaryDirectory('shutdown-cache'), 'cache');
    cleanups.push(async () => removeTemporary(path.dirname(cache)));
    const env = { XDG_CACHE_HOME: cache };
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } }, { env });
    cleanups.push(cleanup);
    const listed = await client.executeCommand(SessionCommands.candidates, { query: '', limit: 100 });
    // Well before the 5 s after the first index at which a running server writes it.
    expect(existsSync(path.join(cache, 'dsh-session-ls')) ? readdirSync(path.join(cache, 'dsh-session-ls')) : []).toEqual([]);
    expect(await client.shutdown()).toBe(0);
    const [cacheFile, ...others] = readdirSync(path.join(cache, 'dsh-session-ls'));
    expect(others).toEqual([]);
    const lines = readFileSync(path.join(cache, 'dsh-session-ls', cacheFile!), 'utf8').trimEnd().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ end: true, entries: (listed as unknown[]).length });
    const again = await startServer({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } }, { env });
    cleanups.push(again.cleanup);
    expect(await again.client.executeCommand(SessionCommands.candidates, { query: '', limit: 100 })).toEqual(listed);
  });

  it.each(['node-ipc', 'pipe', 'socket'] as const)('serves over --%s too', async (transport) => {
    const scratch = temporaryDirectory('transport');
    const client = await LspTestClient.startOver(transport, { env: { XDG_CACHE_HOME: scratch }, args: ['--sessions-root', EXAMPLE_STORE] });
    try {
      const result = await client.initialize();
      expect(result.serverInfo?.name).toBe('dsh-session-ls');
      expect(await client.executeCommand(SessionCommands.formatMention, { sessionId: 'source' })).toBe('@[source](dsh-session:InNvdXJjZSI)');
      expect(await client.shutdown()).toBe(0);
    } finally {
      client.dispose();
      removeTemporary(scratch);
    }
  });

  it('stops, saying why, when a header breaks the framing over --socket', async () => {
    const server = await overOwnSocket();
    try {
      server.socket.write('Content-Length: -1\r\n\r\n{}');
      expect(await server.exitCode()).toBe(1);
      expect(server.log()).toContain("the client's message framing is broken");
    } finally {
      server.dispose();
    }
  });

  it('stops as when its client goes away when the client resets the --socket connection', async () => {
    const server = await overOwnSocket();
    try {
      server.socket.resetAndDestroy();
      // Before, the input never ended: the process idled out with exit code 0 and no cleanup.
      expect(await server.exitCode()).toBe(1);
      expect(server.log()).toContain('stopping (the input closed)');
    } finally {
      server.dispose();
    }
  });

  it('prints the version and the help, and the help without a subcommand', () => {
    const version = JSON.parse(readFileSync(path.join(REPO_ROOT, 'server', 'package.json'), 'utf8')).version as string;
    expect(execFileSync(process.execPath, [SERVER_BIN, '--version'], { encoding: 'utf8' })).toBe(`${version}\n`);
    const help = execFileSync(process.execPath, [SERVER_BIN, '--help'], { encoding: 'utf8' });
    expect(help).toContain('dsh-session-ls candidates');
    expect(help).toContain('--stdio');
    expect(execFileSync(process.execPath, [SERVER_BIN], { encoding: 'utf8' })).toBe(help);
  });
});
