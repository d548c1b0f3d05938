/**
 * The built server as a child process we can measure: the headless client of test/support talks to
 * it, and the process itself is observed through /proc (resident memory, open file descriptors).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { InitializeResult } from 'vscode-languageserver-protocol';
import { SessionCommands } from '@dsh-session-ls/shared';
import { LspTestClient, REPO_ROOT, SERVER_BIN, fileUri, pollUntil } from '../../support/lspClient';
import type { TemporaryDirectories } from './stores';

/** A running server process with its client. */
export interface MeasuredServer {
  client: LspTestClient;
  /** The server's answer to `initialize`. */
  initialized: InitializeResult;
  pid: number;
  /** What the server wrote to stderr so far (its log). */
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process ended. */
  exited: Promise<number | string | null>;
  running(): boolean;
  /** Resident set size now, in KiB (VmRSS). */
  rssKb(): number;
  /** Peak resident set size so far, in KiB (VmHWM). */
  peakRssKb(): number;
  /** Open file descriptors now. */
  openFds(): number;
  /** Close the server's stdin, as an editor that went away does. */
  disconnect(): void;
  /** Kill it if it still runs. */
  kill(): void;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

/**
 * Start `node server/bin/dsh-session-ls.js --stdio` with a private DSH_HOME and cache (never the user's),
 * initialise it with `sessionsRoot` and a workspace folder, and return it once it answers.
 */
export async function startMeasuredServer(
  temporary: TemporaryDirectories,
  sessionsRoot: string,
  options: {
    folder?: string;
    nodeArgs?: string[];
    initializationOptions?: Record<string, unknown>;
    /** The server's home (its cache under `cache/`): pass the same one to restart with the same cache. */
    home?: string;
    /** Run the server as this user (the test must be root to switch). */
    user?: { uid: number; gid: number };
  } = {},
): Promise<MeasuredServer> {
  const home = options.home ?? temporary.make('server-home');
  const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), SERVER_BIN, '--stdio'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, XDG_CACHE_HOME: path.join(home, 'cache'), DSH_HOME: path.join(home, 'dsh') },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.user ?? {}),
    },
  );
  let log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (log += chunk));
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const client = LspTestClient.overStreams(child.stdout, child.stdin);
  const pid = child.pid!;
  const folder = options.folder ?? '/home/alice/proj';
  const initialized = await client.initialize({
    initializationOptions: { sessionsRoot, ...options.initializationOptions },
    workspaceFolders: [{ uri: fileUri(folder), name: 'workspace' }],
    rootUri: fileUri(folder),
  });
  return {
    client,
    initialized,
    pid,
    stderr: () => log,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    rssKb: () => statusKb(pid, 'VmRSS'),
    peakRssKb: () => statusKb(pid, 'VmHWM'),
    openFds: () => readdirSync(`/proc/${pid}/fd`).length,
    disconnect: () => {
      client.connection.dispose();
      child.stdin.end();
    },
    kill: () => {
      client.connection.dispose();
      if (child.exitCode === null && child.signalCode === null) child.kill();
    },
  };
}

/** Wait (polling, generous deadline) until the server lists at least `count` sessions. */
export async function waitForListing(client: LspTestClient, count: number): Promise<void> {
  await pollUntil(async () => {
    const rows = await client.executeCommand<unknown[]>(SessionCommands.candidates, { limit: 100_000 });
    return rows.length >= count ? true : undefined;
  }, 60_000, `${count} sessions listed`);
}

/** Log lines that mean a fault escaped a handler (the process-level safety nets caught it). */
export function escapedFaults(log: string): string[] {
  return log.split('\n').filter((line) => /uncaught exception|unhandled rejection/i.test(line));
}

/** `shutdown` then `exit`, and the exit code, or a failure when the process outlives `deadlineMs`. */
export async function shutdownWithin(server: MeasuredServer, deadlineMs = 10_000): Promise<number | string | null> {
  await server.client.connection.sendRequest('shutdown');
  await server.client.connection.sendNotification('exit');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the server did not exit within ${deadlineMs} ms of exit`)), deadlineMs);
  });
  try {
    return await Promise.race([server.exited, late]);
  } finally {
    clearTimeout(timer);
    server.client.connection.dispose();
  }
}
