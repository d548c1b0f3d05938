/** The language server process (`dsh-session-ls --stdio` and the other transports); main.ts requires it only then. */
// First: takes --clientProcessId off the command line before vscode-languageserver loads and acts on it.
import { CLIENT_PROCESS_ID } from './wiring/clientProcessIdArgument';
import { format } from 'node:util';
import { createConnection } from 'vscode-languageserver/node';
import { agentSettingsOfFlags, type Invocation } from './cli/commandLine';
import { logToStderr, openAgentStore, openStore } from './processStore';
import { startSessionLanguageServer } from './server';
import { absoluteSessionsRoot } from './settings/settings';
import { cacheWritesSettled, defaultSessionsRoot, type SessionStoreService } from './store';
import { workingDirectory } from './store/defaultRoot';
import { foregroundRequests } from './store/concurrency';
import { LifecycleGate } from './wiring/lifecycle';
import { ParentWatchdog } from './wiring/parentWatchdog';
import { openServerTransport } from './wiring/transport';
import { SERVER_VERSION } from './version';
import { setRuntimeV8Flag, withStartupV8Flags } from './store/runtimeV8Flags';

/**
 * How much V8 lets the old generation grow past what the last full collection kept, in percent.
 * Its own factor lets a 100,000-session index (~130 MB live) grow the heap to 2–3× that before
 * collecting. Set at run time because the server is started without NODE_OPTIONS (the bin, and
 * the VS Code extension running the bundle with `node`); V8 reads this flag at every limit
 * computation, so it applies after start (measured; the semi-space size, read once at heap
 * set-up, would not). A worker's start resets it: the index pool sets it again (`store/runtimeV8Flags.ts`).
 */
export const HEAP_GROWING_PERCENT = 25;

/**
 * The same once the first index is built: the heap then holds the index and grows only with bursts
 * (a rescan's garbage, a long answer), and at 25 % each burst let a 100,000-session heap (~135 MB
 * live) grow to ~170 MB before a full collection, the server's peak resident memory.
 */
export const HEAP_GROWING_PERCENT_INDEXED = 10;

/**
 * How long after the first index the heap's growth is tightened: setting a V8 flag right away
 * held the first answer at start ~40 ms (a 20-session store, measured), and the bursts it is
 * for (the catch-up rescan, a cache write) come later.
 */
const HEAP_TIGHTEN_AFTER_INDEX_MS = 2000;

/**
 * The young generation keeps its start-up size (1 MB semi-spaces) instead of growing to 16 MB
 * ones under the index's allocation rate: the grown one was ~28 MiB of the process's resident
 * memory for the whole life of the server. The main thread allocates little that lives long
 * enough for the difference in scavenges to show (its CPU time to a cold 10k index was the same).
 */
export const YOUNG_GENERATION_FIXED = '--semi-space-growth-factor=1';

/** How long a stopping server waits for an index-cache write to finish or be removed before it exits anyway. */
const STOP_GRACE_MS = 5000;

/** How long after its first index the server makes its bundle's code cache (when main.js asks it to). */
const CODE_CACHE_AFTER_INDEX_MS = 2000;

/** What main.js hands the server. */
export interface ServerStartOptions {
  /**
   * Makes the bundle's V8 code cache (codeCache.ts), when it was missing or rejected: called once,
   * with the start-up V8 flags, after the first index (what the start compiled by then) or at stop.
   */
  makeCodeCache?: () => void;
  /** Opens the store of a sessions root (default: `openStore` of processStore.ts, with the persistent cache). */
  openStore?: (root: string) => SessionStoreService;
}

/** Starts the language server on the transport named in `args`. */
export function startServer(invocation: Extract<Invocation, { kind: 'server' }>, args: readonly string[], options: ServerStartOptions = {}): void {
  const transport = openServerTransport(args, logToStderr);
  if (transport === undefined) {
    process.stderr.write('USAGE: give --stdio, --node-ipc, --socket=PORT or --pipe=NAME\n');
    process.exitCode = 2;
    return;
  }
  setRuntimeV8Flag(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--heap-growing-percent=0');
  setRuntimeV8Flag(YOUNG_GENERATION_FIXED, '--semi-space-growth-factor=2');
  const codeCache = new CodeCacheMaker(options.makeCodeCache);
  keepRunningOnStrayErrors(transport.stdio);

  let stopping = false;
  /**
   * Whether the first index is built: only then has the start compiled what every later start
   * runs. A server stopped before it (a client that gave up, a test) makes no code cache, since
   * a cache is kept for as long as the bundle is unchanged and one made that early left later
   * starts compiling the rest lazily (~30 ms of a stdio start, measured).
   */
  let indexed = false;
  /** Dispose the store (its workers, watches and any half-written cache file), then exit with `code`. */
  const stop = (code: number, why: string): void => {
    if (stopping) return;
    stopping = true;
    logToStderr(`stopping (${why})`);
    if (indexed) codeCache.makeNow();
    watchdog.dispose();
    try {
      server.dispose();
    } catch (error) {
      logToStderr(`stopping: ${error instanceof Error ? error.message : String(error)}`);
    }
    const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
    void Promise.race([cacheWritesSettled(), grace]).finally(() => process.exit(code));
  };
  const watchdog = new ParentWatchdog({
    onParentGone: () => stop(gate.state === 'shut down' ? 0 : 1, 'the client process is gone'),
    log: logToStderr,
  });
  const gate = new LifecycleGate(transport.reader, transport.writer, {
    onInitialize: (processId) => watchdog.watch(processId),
    onExit: (code) => stop(code, 'exit'),
    // Background store work gives way from the moment a message is read (store/concurrency.ts).
    onMessage: () => foregroundRequests.noteInput(),
    log: logToStderr,
  });
  // Exit codes as for `exit`: 0 once shut down, else 1 (LSP); a signal is a request to stop, so 0.
  transport.onClosed(() => stop(gate.state === 'shut down' ? 0 : 1, 'the input closed'));
  process.once('SIGTERM', () => stop(0, 'SIGTERM'));
  process.once('SIGINT', () => stop(0, 'SIGINT'));
  const connection = createConnection(gate, transport.writer);
  const server = startSessionLanguageServer(connection, {
    openStore: options.openStore ?? openStore,
    openForeignStore: openAgentStore,
    defaultSessionsRoot,
    env: process.env,
    commandLine: {
      ...(invocation.sessionsRoot === undefined ? {} : { sessionsRoot: absoluteSessionsRoot(invocation.sessionsRoot) }),
      ...agentSettingsOfFlags(invocation, workingDirectory(), absoluteSessionsRoot),
    },
    log: logToStderr,
    version: SERVER_VERSION,
  });
  if (CLIENT_PROCESS_ID !== undefined) watchdog.watch(CLIENT_PROCESS_ID);
  void server
    .whenIndexed()
    .then(() => {
      indexed = true;
      setTimeout(() => setRuntimeV8Flag(`--heap-growing-percent=${HEAP_GROWING_PERCENT_INDEXED}`, '--heap-growing-percent=0'), HEAP_TIGHTEN_AFTER_INDEX_MS).unref();
      if (codeCache.pending) setTimeout(() => codeCache.makeNow(), CODE_CACHE_AFTER_INDEX_MS).unref();
    })
    .catch(() => undefined);
}

/** Nothing a client sends may stop the server: a stray rejection or exception is logged, not fatal. */
function keepRunningOnStrayErrors(stdio: boolean): void {
  process.on('unhandledRejection', (reason) => logToStderr(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
  process.on('uncaughtException', (error) => logToStderr(`uncaught exception: ${error.stack ?? error.message}`));
  // stdout carries the protocol: a stray console.log of a dependency goes to the log instead.
  if (stdio) for (const level of ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir'] as const) console[level] = (...values: unknown[]) => logToStderr(format(...values));
}

/** Makes the bundle's code cache once, when main.js asked for one (`ServerStartOptions.makeCodeCache`). */
class CodeCacheMaker {
  constructor(private make: (() => void) | undefined) {
    // A code cache holds what the run compiled and V8 still kept: while one is to be made, V8 keeps
    // the bytecode of functions that ran once (a long first index's collections would otherwise
    // drop most of the start-up's before the cache is made; bench/ANALYSIS.md, "Start").
    if (make) setRuntimeV8Flag('--no-flush-bytecode', '--flush-bytecode');
  }

  /** Whether a cache is still to be made. */
  get pending(): boolean {
    return this.make !== undefined;
  }

  makeNow(): void {
    const make = this.make;
    this.make = undefined;
    if (!make) return;
    withStartupV8Flags(make);
    setRuntimeV8Flag('--flush-bytecode', '--flush-bytecode');
  }
}
