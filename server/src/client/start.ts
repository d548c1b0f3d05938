import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';
import { SessionReferenceError } from '@dsh-session-ls/shared';
import { ServerConnection, isConnectionErrorCode } from './connection';
import { DshSessionRequestError, DshSessionStartError } from './errors';
import type { DshSessionClientOptions } from './types';

/** How long a start that failed waits for the server process to end on its own, to report how it ended. */
const STOPPING_SERVER_WAIT_MS = 2000;

/** The name of this package, whose bin the client starts by default. */
const PACKAGE_NAME = 'dsh-session-ls';

/**
 * The bin of the package this module belongs to: the nearest package.json above this file (the
 * published package's root above dist/client.js; server/ in the repository), when it is this package's.
 */
function packageServerBin(): string | undefined {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const { name, bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; bin?: unknown };
        const file = typeof bin === 'string' ? bin : (bin as Record<string, unknown> | undefined)?.[PACKAGE_NAME];
        return name === PACKAGE_NAME && typeof file === 'string' ? path.join(dir, file) : undefined;
      } catch {
        return undefined;
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** A command line as one would type it (arguments with spaces or quotes quoted). */
function commandLine(command: readonly string[]): string {
  return command.map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
}

/** The line of a server's stderr that says why it stopped: the last `CODE: message` or `…Error: message` line, else the last line. */
function stderrReason(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^Node\.js v\d/.test(line));
  const reason = [...lines].reverse().find((line) => /^(?:[A-Z][A-Z_]*|\w*Error): /.test(line)) ?? lines.at(-1);
  return reason === undefined ? undefined : reason.length > 300 ? `${reason.slice(0, 299)}…` : reason;
}

const CLIENT_CAPABILITIES = {
  workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: false }, workspaceFolders: true },
  textDocument: {
    synchronization: { dynamicRegistration: false },
    completion: { contextSupport: true, completionItem: { labelDetailsSupport: true, snippetSupport: false } },
    hover: { contentFormat: ['markdown', 'plaintext'] },
    codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'refactor', 'refactor.rewrite'] } }, isPreferredSupport: true },
    publishDiagnostics: { versionSupport: true },
  },
};

/**
 * Start the server and initialize it; resolves once `initialized` is sent. A server that cannot be
 * started, or stops before it answers `initialize`, rejects with a `DshSessionStartError` naming the
 * cause and the command run.
 */
export async function startServer(options: DshSessionClientOptions): Promise<ServerConnection> {
  const args = ['--stdio', ...(options.args ?? [])];
  const server = options.server ?? packageServerBin();
  if (server === undefined) {
    throw new DshSessionStartError(
      `cannot start ${PACKAGE_NAME}: no ${PACKAGE_NAME} package with a bin was found above ${__dirname}; pass the \`server\` option`,
      [],
    );
  }
  const runWithNode = /\.[cm]?js$/.test(server);
  const command = runWithNode ? [process.execPath, server, ...args] : [server, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    shell: !runWithNode && process.platform === 'win32',
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.stdin!.on('error', () => undefined);
  const connection = new ServerConnection(createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!)), child, exit, options);
  connection.listen();
  let started = false;
  try {
    await spawned;
    started = true;
    await initialize(connection, options);
  } catch (error) {
    // Unless the server answered with an error, it is going away (a write to it failed, its output
    // closed): its exit code and last words tell why better than the pipe does.
    if (started && !answeredByServer(error)) {
      await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, STOPPING_SERVER_WAIT_MS).unref())]);
    }
    connection.dispose();
    const problem = started ? initializeProblem(connection, error) : spawnProblem(error, options.server !== undefined);
    throw new DshSessionStartError(`cannot start ${PACKAGE_NAME} (\`${commandLine(command)}\`): ${problem}`, command);
  }
  return connection;
}

/** `initialize` with the client's capabilities, settings and workspace folder, then `initialized`. */
async function initialize(connection: ServerConnection, options: DshSessionClientOptions): Promise<void> {
  const folder = options.workspaceFolder === undefined ? undefined : path.resolve(options.workspaceFolder);
  const folderUri = folder === undefined ? null : pathToFileURL(folder).href;
  await connection.request('initialize', {
    processId: process.pid,
    clientInfo: { name: 'dsh-session-ls/client' },
    rootUri: folderUri,
    workspaceFolders: folder === undefined ? null : [{ uri: folderUri, name: path.basename(folder) || folder }],
    capabilities: CLIENT_CAPABILITIES,
    initializationOptions: options.settings ?? {},
  });
  await connection.notify('initialized', {});
}

/** True for an error the server answered with (not one the connection raised: a failed write, a closed pipe). */
function answeredByServer(error: unknown): boolean {
  return error instanceof SessionReferenceError || (error instanceof DshSessionRequestError && !isConnectionErrorCode(error.code));
}

/** Why the process could not be spawned (e.g. `spawn dsh-session-ls ENOENT`), with a hint for a command not found. */
function spawnProblem(error: unknown, serverGiven: boolean): string {
  const message = error instanceof Error ? error.message : String(error);
  const notFound = (error as { code?: unknown } | undefined)?.code === 'ENOENT';
  return notFound && serverGiven ? `${message} (no such command; without the \`server\` option the client starts its own package's server)` : message;
}

/** Why a started server did not answer `initialize`: it stopped (and what it said last), or it answered an error. */
function initializeProblem(connection: ServerConnection, error: unknown): string {
  const { exitCode, signalCode } = connection.child;
  if (exitCode !== null || signalCode !== null) {
    const reason = stderrReason(connection.stderrText);
    const how = exitCode !== null ? `exited with code ${exitCode}` : `was killed by ${signalCode}`;
    return `the server ${how} before it answered initialize${reason === undefined ? '' : `: ${reason}`}`;
  }
  return `initialize failed: ${error instanceof Error ? error.message : String(error)}`;
}
