/**
 * Lifecycle and parent watch, against the built server process:
 *
 * - the client's `processId` (or `--clientProcessId`) that the server may not signal (EPERM: the server
 *   runs as another user) or cannot see (ESRCH: another pid namespace) does not stop it: it serves past
 *   the 3 s at which vscode-languageserver's own watchdog used to exit, until its input closes; a parent
 *   that was seen alive and then died does stop it;
 * - requests before `initialize` answer ServerNotInitialized (-32002), after `shutdown` InvalidRequest
 *   (-32600); nothing hangs after an early `shutdown`; `exit` exits 0 after `shutdown`, 1 without;
 * - SIGTERM and SIGINT exit 0 after disposing the store: killed while the first index and its cache are
 *   written, the server leaves no `.tmp` file in the cache directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionCommands } from '@dsh-session-ls/shared';
import { LspTestClient, REPO_ROOT, SERVER_BIN, pollUntil } from '../support/lspClient';
import { IN_CI, findProgram } from '../support/conformance';
import { recordFigure, scaled } from './support/scale';
import { TemporaryDirectories, writeSession } from './support/stores';

const temporary = new TemporaryDirectories();
const running: ChildProcess[] = [];
// afterAll, not afterEach: the parent-watch tests run concurrently.
afterAll(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  temporary.removeAll();
});

const EXAMPLE_STORE = path.join(REPO_ROOT, 'examples', 'store');
const SERVER_NOT_INITIALIZED = -32002;
const INVALID_REQUEST = -32600;
/** Past the library's 3 s watchdog tick, with margin: the server must still serve after this. */
const BEYOND_LIBRARY_WATCHDOG_MS = 5_500;

interface Spawned {
  client: LspTestClient;
  child: ChildProcess;
  exited: Promise<number | string | null>;
  log(): string;
  /** Close the server's input, as a client that went away does (the process end stays open here). */
  closeInput(): void;
}

/** Start the built server over stdio, optionally through a wrapper command (setpriv), with a private cache. */
function spawnServer(options: { wrapper?: string[]; args?: string[]; cacheHome?: string; cwd?: string } = {}): Spawned {
  const home = temporary.make('lifecycle-home');
  chmodSync(home, 0o777);
  const command = [...(options.wrapper ?? []), process.execPath, SERVER_BIN, '--stdio', ...(options.args ?? [])];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, XDG_CACHE_HOME: options.cacheHome ?? path.join(home, 'cache'), DSH_HOME: path.join(home, 'dsh') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.push(child);
  let log = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (log += chunk));
  child.stdin!.on('error', () => undefined);
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const client = LspTestClient.overStreams(child.stdout!, child.stdin!);
  return { client, child, exited, log: () => log, closeInput: () => child.stdin!.end() };
}

function initialize(server: Spawned, processId: number | null, sessionsRoot = EXAMPLE_STORE) {
  return server.client.initialize({ processId, initializationOptions: { sessionsRoot }, capabilities: {} });
}

/** The candidates the server lists once its first index has some (a generous deadline). */
function exampleSessions(server: Spawned): Promise<unknown[]> {
  return pollUntil(async () => {
    const listed = await server.client.executeCommand<unknown[]>(SessionCommands.candidates, {});
    return listed.length > 0 ? listed : undefined;
  }, 20_000, 'the example sessions');
}

/** The JSON-RPC error code a request answered with, or 'result'. */
async function answerCode(promise: Promise<unknown>): Promise<number | 'result'> {
  try {
    await promise;
    return 'result';
  } catch (error) {
    return (error as { code: number }).code;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Exit code once the process ended (a generous deadline, never a timing claim). */
async function exitCode(server: Spawned, deadlineMs = 20_000): Promise<number | string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still running after ${deadlineMs} ms; log:\n${server.log()}`)), deadlineMs)));
  try {
    return await Promise.race([server.exited, late]);
  } finally {
    clearTimeout(timer);
    server.client.connection.dispose();
  }
}

/** A pid no process can have: above the kernel's pid_max, so `kill(pid, 0)` is ESRCH. */
function invisiblePid(): number {
  const max = existsSync('/proc/sys/kernel/pid_max') ? Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) : 4_194_304;
  return max + 1;
}

const setpriv = findProgram('setpriv', ['--version']);
const asRoot = process.getuid?.() === 0;
const otherUserReason = !setpriv.found ? setpriv.reason : !asRoot ? 'running the server as another user needs root (setpriv)' : undefined;
if (IN_CI && otherUserReason !== undefined) throw new Error(`CI=true: ${otherUserReason}`);

describe('the parent watch', () => {
  it.skipIf(otherUserReason !== undefined).concurrent(
    `keeps serving a live client it may not signal (EPERM: the server runs as nobody), from initialize and from --clientProcessId${otherUserReason ? ` [skipped: ${otherUserReason}]` : ''}`,
    async () => {
      const nobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
      const servers = [spawnServer({ wrapper: nobody }), spawnServer({ wrapper: nobody, args: [`--clientProcessId=${process.pid}`] })];
      await initialize(servers[0]!, process.pid);
      await initialize(servers[1]!, null);
      await sleep(BEYOND_LIBRARY_WATCHDOG_MS);
      for (const server of servers) {
        expect(server.child.exitCode, server.log()).toBeNull();
        expect(await server.client.executeCommand(SessionCommands.formatMention, { sessionId: 's' })).toBe('@[s](dsh-session:InMi)');
        server.closeInput();
        expect(await exitCode(server)).toBe(1);
      }
      recordFigure('lifecycle', 'EPERM parent: still serving after (ms)', BEYOND_LIBRARY_WATCHDOG_MS);
    },
    60_000,
  );

  it.concurrent('keeps serving when the client pid is not visible (ESRCH from the start), until its input closes', async () => {
    const server = spawnServer();
    await initialize(server, invisiblePid());
    await sleep(BEYOND_LIBRARY_WATCHDOG_MS);
    expect(server.child.exitCode, server.log()).toBeNull();
    expect(server.log()).toContain('not visible');
    expect(await server.client.executeCommand(SessionCommands.formatMention, { sessionId: 's' })).toBe('@[s](dsh-session:InMi)');
    // The parent is not there and the input closes: a genuinely dead client still ends the server.
    server.closeInput();
    expect(await exitCode(server)).toBe(1);
  }, 60_000);

  it('exits when a client it saw alive dies while nobody reads its log any more (stderr broken)', async () => {
    const parent = spawn('sleep', ['600'], { stdio: 'ignore' });
    running.push(parent);
    const server = spawnServer();
    await initialize(server, parent.pid!);
    // The reader of its stderr is gone: each log line fails with EPIPE, which once became an
    // uncaught exception whose own log line failed again, a busy loop that never let it exit.
    server.child.stderr!.destroy();
    parent.kill('SIGKILL');
    expect(await exitCode(server)).toBe(1);
  }, 60_000);

  it('exits when a client it saw alive dies, though its input stays open', async () => {
    const parent = spawn('sleep', ['600'], { stdio: 'ignore' });
    running.push(parent);
    const server = spawnServer();
    await initialize(server, parent.pid!);
    parent.kill('SIGKILL');
    expect(await exitCode(server)).toBe(1);
    expect(server.log()).toContain(`client process ${parent.pid} is gone`);
  }, 60_000);
});

describe('the lifecycle (LSP)', () => {
  it('serves when started in a directory that was removed since', async () => {
    const gone = temporary.make('removed-cwd');
    const server = spawnServer({ cwd: gone });
    rmSync(gone, { recursive: true });
    await initialize(server, null);
    expect((await exampleSessions(server)).length).toBeGreaterThan(0);
    expect(server.log()).not.toContain('uncaught exception');
    await server.client.connection.sendRequest('shutdown');
    await server.client.connection.sendNotification('exit');
    expect(await exitCode(server)).toBe(0);
  }, 60_000);

  it('stops, saying why, when a header breaks the framing (no later message could be read)', async () => {
    for (const bad of ['X-Foo: bar\r\n\r\n{}', 'Content-Length: -5\r\n\r\n{}', 'Content-Length: abc\r\n\r\n{}']) {
      const server = spawnServer();
      await initialize(server, null);
      server.child.stdin!.write(bad);
      // Before, the reader ate every later message as a broken header: alive, answering nothing.
      expect(await exitCode(server), bad).toBe(1);
      expect(server.log()).toContain("the client's message framing is broken");
    }
  }, 90_000);

  it('answers ServerNotInitialized before initialize, drops notifications, then serves', async () => {
    const server = spawnServer();
    const { connection } = server.client;
    const early = await Promise.all([
      answerCode(connection.sendRequest('workspace/executeCommand', { command: SessionCommands.candidates, arguments: [{}] })),
      answerCode(connection.sendRequest('textDocument/completion', { textDocument: { uri: 'file:///a.md' }, position: { line: 0, character: 0 } })),
      answerCode(connection.sendRequest('no/suchMethod', {})),
      answerCode(connection.sendRequest('shutdown')),
    ]);
    expect(early).toEqual([SERVER_NOT_INITIALIZED, SERVER_NOT_INITIALIZED, SERVER_NOT_INITIALIZED, SERVER_NOT_INITIALIZED]);
    await server.client.openDocument('file:///early.md', 'dropped before initialize');
    await initialize(server, null);
    expect((await exampleSessions(server)).length).toBeGreaterThan(0);
    // The document opened before initialize was dropped: the server does not know it.
    expect((await server.client.completion('file:///early.md', { line: 0, character: 0 })).items).toEqual([]);
    expect(await answerCode(connection.sendRequest('initialize', { processId: null, capabilities: {}, rootUri: null }))).toBe(INVALID_REQUEST);
    await connection.sendRequest('shutdown');
    await connection.sendNotification('exit');
    expect(await exitCode(server)).toBe(0);
  }, 60_000);

  it('after an early shutdown nothing hangs: pending requests settle, later ones answer InvalidRequest, exit is 0', async () => {
    const store = temporary.make('early-shutdown');
    for (let i = 0; i < 300; i++) writeSession(store, { id: `s-${i}`, createdAt: 1_767_225_600_000 + i, turns: [{ prompt: `p ${i}`, title: `t ${i}` }] }, 'raw');
    const server = spawnServer();
    const { connection } = server.client;
    // No `initialized` yet and the first index under way: shutdown at once.
    const init = connection.sendRequest('initialize', { processId: null, capabilities: { workspace: { configuration: true } }, rootUri: null, initializationOptions: { sessionsRoot: store } });
    const pending = answerCode(connection.sendRequest('workspace/executeCommand', { command: SessionCommands.candidates, arguments: [{}] }));
    await init;
    await connection.sendNotification('initialized', {});
    await connection.sendRequest('shutdown');
    expect(await pending).not.toBe(SERVER_NOT_INITIALIZED);
    const late = await Promise.all([
      answerCode(connection.sendRequest('workspace/executeCommand', { command: SessionCommands.candidates, arguments: [{}] })),
      answerCode(connection.sendRequest('textDocument/hover', { textDocument: { uri: 'file:///a.md' }, position: { line: 0, character: 0 } })),
      answerCode(connection.sendRequest('shutdown')),
    ]);
    expect(late).toEqual([INVALID_REQUEST, INVALID_REQUEST, INVALID_REQUEST]);
    await connection.sendNotification('exit');
    expect(await exitCode(server)).toBe(0);
  }, 60_000);

  it('exit without shutdown exits 1', async () => {
    const server = spawnServer();
    await initialize(server, null);
    await server.client.connection.sendNotification('exit');
    expect(await exitCode(server)).toBe(1);
  }, 30_000);

  it.each(['SIGTERM', 'SIGINT'] as const)('%s exits 0 after stopping the server', async (signal) => {
    const server = spawnServer();
    await initialize(server, null);
    await server.client.executeCommand(SessionCommands.candidates, {});
    server.child.kill(signal);
    expect(await exitCode(server)).toBe(0);
    expect(server.log()).toContain(`stopping (${signal})`);
  }, 30_000);
});

describe('SIGTERM while the first index and its cache are written', () => {
  const SESSIONS = scaled(3_000, 10_000);
  const TRIES = scaled(8, 40);

  it(`leaves no .tmp file in the cache directory (${TRIES} kills over ${SESSIONS} sessions)`, async () => {
    const store = temporary.make('sigterm-store');
    for (let i = 0; i < SESSIONS; i++) {
      writeSession(
        store,
        { id: `session-${i}`, cwd: `/home/alice/p${i % 7}`, createdAt: 1_767_225_600_000 + i, turns: [{ prompt: `question ${i} ${'x'.repeat(200)}`, title: `title ${i}` }] },
        'raw',
      );
    }
    const cacheFiles = (cacheHome: string): string[] => {
      const dir = path.join(cacheHome, 'dsh-session-ls');
      return existsSync(dir) ? readdirSync(dir) : [];
    };
    // First: how long from initialize until the cache is written (the window the kills are spread over).
    const probeCache = temporary.make('sigterm-cache');
    const probe = spawnServer({ cacheHome: probeCache });
    const started = Date.now();
    await initialize(probe, null, store);
    await pollUntil(() => (cacheFiles(probeCache).some((name) => name.endsWith('.json') || name.endsWith('.jsonl')) ? true : undefined), 120_000, 'the index cache');
    const windowMs = Date.now() - started;
    probe.child.kill('SIGTERM');
    expect(await exitCode(probe)).toBe(0);

    let caughtWriting = 0;
    let orphans = 0;
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const cacheHome = temporary.make('sigterm-cache');
      const server = spawnServer({ cacheHome });
      const began = Date.now();
      await initialize(server, null, store);
      // Half the kills spread over the window, half the moment a temp file shows up.
      if (attempt % 2 === 0) {
        await sleep(Math.max(0, ((attempt + 1) / TRIES) * windowMs * 1.2 - (Date.now() - began)));
      } else {
        await pollUntil(() => (cacheFiles(cacheHome).some((name) => name.endsWith('.tmp')) || server.child.exitCode !== null || Date.now() - began > windowMs * 3 ? true : undefined), 120_000, 'a temp file');
      }
      if (cacheFiles(cacheHome).some((name) => name.endsWith('.tmp'))) caughtWriting++;
      server.child.kill('SIGTERM');
      expect(await exitCode(server)).toBe(0);
      const left = cacheFiles(cacheHome).filter((name) => name.endsWith('.tmp'));
      orphans += left.length;
      expect(left, server.log()).toEqual([]);
    }
    recordFigure('lifecycle', 'SIGTERM during first index: sessions / tries / killed while a .tmp existed / orphan .tmp', `${SESSIONS} / ${TRIES} / ${caughtWriting} / ${orphans}`);
    recordFigure('lifecycle', 'first index + cache written (ms)', windowMs);
  }, 600_000);
});
