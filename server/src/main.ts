import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { createConnection } from 'vscode-languageserver/node';
import { runCli } from './cli/cli';
import { HELP_TEXT, UsageError, parseInvocation, type Invocation } from './cli/commandLine';
import { startSessionLanguageServer } from './server';
import { absoluteSessionsRoot } from './settings/settings';
import { defaultSessionsRoot, openSessionStore } from './store';
import { HOLD_FIRST_INDEX_ENV, holdFirstIndex } from './store/heldIndex';
import { SERVER_VERSION } from './version';

// Never stdout: in stdio mode it carries the protocol.
function logToStderr(message: string): void {
  process.stderr.write(`[dsh-session-ls] ${message}\n`);
}

/** Where a persistent index cache may live: the OS cache directory, never under a sessions root. */
function cacheDirectory(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'dsh-session-ls');
}

function openStore(root: string) {
  const store = openSessionStore({ root, cacheDir: cacheDirectory(process.env), log: logToStderr });
  // A test hook only: end-to-end tests hold the first index open while a file exists.
  const holdFile = process.env[HOLD_FIRST_INDEX_ENV];
  return holdFile === undefined || holdFile === '' ? store : holdFirstIndex(store, holdFile, logToStderr);
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/**
 * How much V8 lets the old generation grow past what the last full collection kept, in percent.
 * Its own factor lets a 100,000-session index (~130 MB live) grow the heap to 2–3× that before
 * collecting. Set at run time because the server is started without NODE_OPTIONS (the bin, and
 * the VS Code extension running the bundle with `node`); V8 reads this flag at every limit
 * computation, so it applies after start (measured; the semi-space size, read once at heap
 * set-up, would not).
 */
export const HEAP_GROWING_PERCENT = 25;

function startServer(invocation: Extract<Invocation, { kind: 'server' }>): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  // Nothing a client sends may stop the server: a stray rejection or exception is logged, not fatal.
  process.on('unhandledRejection', (reason) => logToStderr(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
  process.on('uncaughtException', (error) => logToStderr(`uncaught exception: ${error.stack ?? error.message}`));
  // vscode-languageserver reads the transport (--stdio, --node-ipc, --socket, --pipe) from process.argv.
  const connection = createConnection();
  startSessionLanguageServer(connection, {
    openStore,
    defaultSessionsRoot,
    env: process.env,
    commandLine: invocation.sessionsRoot === undefined ? {} : { sessionsRoot: absoluteSessionsRoot(invocation.sessionsRoot) },
    log: logToStderr,
    version: SERVER_VERSION,
  });
}

/** The process entry of `dsh-session-ls`: the language server, the CLI, or help/version. */
export function main(args: readonly string[] = process.argv.slice(2)): void {
  let invocation: Invocation;
  try {
    invocation = parseInvocation(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`USAGE: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
  switch (invocation.kind) {
    case 'help':
      process.stdout.write(HELP_TEXT + '\n');
      return;
    case 'version':
      process.stdout.write(SERVER_VERSION + '\n');
      return;
    case 'server':
      startServer(invocation);
      return;
    default:
      void runCli(
        invocation,
        { stdout: process.stdout, stderr: process.stderr, readStdin, env: process.env, cwd: process.cwd() },
        { openStore, defaultSessionsRoot },
      ).then((code) => {
        // Exit once the output is flushed, whatever store watchers are still winding down.
        process.stdout.write('', () => process.exit(code));
      });
  }
}

if (require.main === module) main();
