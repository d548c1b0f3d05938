/**
 * The real server process over stdio, driven by a JSON-RPC client as an editor would: spawn,
 * initialize, answer the server's own requests, follow work-done progress, read its peak RSS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';

/** The repository root (this file is compiled to bench/dist/server/). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
/** The committed bin the benchmark measures. */
export const SERVER_BIN = path.join(REPO_ROOT, 'server', 'bin', 'dsh-session-ls.js');

/** How to start one server process. */
export interface ServerLaunch {
  root: string;
  /** Another build's bin (to compare a candidate change); default {@link SERVER_BIN}. */
  serverBin?: string;
  /** Arguments that point the server at a persistent cache directory (see `cacheArgs`). */
  extraArgs?: string[];
  /** Extra environment (e.g. a fresh XDG_CACHE_HOME so no default cache leaks into a cold start). */
  env?: Record<string, string>;
  /** Write a V8 CPU profile of the server to this directory. */
  cpuProfileDir?: string;
  /** Server stderr and logMessage notifications go here. */
  logFile: string;
}

/** A running server and the client connected to it. */
export interface RunningServer {
  readonly pid: number;
  readonly connection: MessageConnection;
  /** performance.now() just before spawning. */
  readonly spawnedAt: number;
  /** Work-done progress tokens begun and not yet ended. */
  readonly activeProgress: ReadonlySet<string | number>;
  /** Resolves at the next progress `end` (or after `ms`), whichever is first. */
  nextProgressEnd(ms: number): Promise<void>;
  /**
   * Server-reported durations of `method` from `$/logTrace` lines `<method> took 1.23 ms` (the server sends
   * one just before each answer, and only because initialize sets `trace`), drained by the caller.
   */
  takeServerTimes(method: string): number[];
  /** Peak resident set (VmHWM) in bytes, read from /proc while the process lives. */
  peakRssBytes(): number | undefined;
  /** Current resident set (VmRSS) in bytes. */
  rssBytes(): number | undefined;
  /** shutdown + exit, then wait for the process to end; returns the last peak RSS seen. */
  stop(): Promise<{ exitCode: number | null; peakRssBytes: number | undefined }>;
}

function procStatusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Spawn the server on stdio and complete the initialize handshake. */
export async function startServer(launch: ServerLaunch): Promise<RunningServer> {
  const nodeArgs = launch.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${launch.cpuProfileDir}`] : [];
  const log = createWriteStream(launch.logFile, { flags: 'a' });
  const spawnedAt = performance.now();
  const bin = launch.serverBin ?? SERVER_BIN;
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, bin, '--stdio', '--sessions-root', launch.root, ...(launch.extraArgs ?? [])], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...launch.env },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${bin}`);
  child.stderr!.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));

  const activeProgress = new Set<string | number>();
  let progressWaiters: (() => void)[] = [];
  let serverTimes: { method: string; ms: number }[] = [];
  let peak: number | undefined;

  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('client/unregisterCapability', () => null);
  connection.onRequest('window/showMessageRequest', () => null);
  connection.onRequest('workspace/configuration', (params: { items: unknown[] }) => params.items.map(() => null));
  connection.onRequest('workspace/workspaceFolders', () => null);
  connection.onNotification('$/progress', (params: { token: string | number; value: { kind?: string } }) => {
    if (params.value?.kind === 'begin') activeProgress.add(params.token);
    if (params.value?.kind === 'end') {
      activeProgress.delete(params.token);
      const waiters = progressWaiters;
      progressWaiters = [];
      for (const wake of waiters) wake();
    }
  });
  connection.onNotification('$/logTrace', (params: { message: string }) => {
    const match = /^(\S+) took ([\d.]+) ?ms$/.exec(params.message);
    if (match) serverTimes.push({ method: match[1], ms: Number(match[2]) });
  });
  connection.onNotification('window/logMessage', (params: { message: string }) => void log.write(`[logMessage] ${params.message}\n`));
  connection.onNotification('window/showMessage', (params: { message: string }) => void log.write(`[showMessage] ${params.message}\n`));
  connection.onNotification(() => undefined);
  connection.listen();

  const initialized = connection.sendRequest('initialize', {
    processId: process.pid,
    clientInfo: { name: 'dsh-session-ls-bench' },
    rootUri: null,
    workspaceFolders: null,
    trace: 'messages',
    capabilities: {
      window: { workDoneProgress: true },
      workspace: { configuration: true },
      textDocument: { completion: { completionItem: { snippetSupport: false } } },
    },
  });
  const exitedEarly = exited.then((code) => {
    throw new Error(`server exited with ${code} before answering initialize (see ${launch.logFile})`);
  });
  try {
    await Promise.race([initialized, exitedEarly]);
  } catch (error) {
    child.kill('SIGKILL');
    connection.dispose();
    throw error;
  }
  exitedEarly.catch(() => undefined);
  await connection.sendNotification('initialized', {});

  const samplePeak = (): number | undefined => {
    const value = procStatusBytes(pid, 'VmHWM');
    if (value !== undefined) peak = Math.max(peak ?? 0, value);
    return peak;
  };

  return {
    pid,
    connection,
    spawnedAt,
    activeProgress,
    nextProgressEnd: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        progressWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
    takeServerTimes: (method) => {
      const taken = serverTimes.filter((time) => time.method === method).map((time) => time.ms);
      serverTimes = [];
      return taken;
    },
    peakRssBytes: samplePeak,
    rssBytes: () => procStatusBytes(pid, 'VmRSS'),
    stop: async () => {
      samplePeak();
      try {
        await Promise.race([connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 30_000))]);
        samplePeak();
        await connection.sendNotification('exit');
      } catch {
        // The process may already be gone; the exit code says how it ended.
      }
      const timeout = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const exitCode = await exited;
      clearTimeout(timeout);
      connection.dispose();
      await new Promise<void>((resolve) => log.end(resolve));
      return { exitCode, peakRssBytes: peak };
    },
  };
}
