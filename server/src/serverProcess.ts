/** The language server process (`dsh-session-ls --stdio` and the other transports); main.ts requires it only then. */
import v8 from 'node:v8';
import { createConnection } from 'vscode-languageserver/node';
import type { Invocation } from './cli/commandLine';
import { logToStderr, openStore } from './processStore';
import { startSessionLanguageServer } from './server';
import { absoluteSessionsRoot } from './settings/settings';
import { defaultSessionsRoot } from './store';
import { SERVER_VERSION } from './version';

/**
 * How much V8 lets the old generation grow past what the last full collection kept, in percent.
 * Its own factor lets a 100,000-session index (~130 MB live) grow the heap to 2–3× that before
 * collecting. Set at run time because the server is started without NODE_OPTIONS (the bin, and
 * the VS Code extension running the bundle with `node`); V8 reads this flag at every limit
 * computation, so it applies after start (measured; the semi-space size, read once at heap
 * set-up, would not).
 */
export const HEAP_GROWING_PERCENT = 25;

/** Starts the language server on the transport named in process.argv. */
export function startServer(invocation: Extract<Invocation, { kind: 'server' }>): void {
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
