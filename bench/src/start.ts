/**
 * The start figures: how long the bin takes to be useful, as ratios to `node -e 0` measured in
 * the same run, on a small zstd store (what a user's first `@` or a script's first call meets).
 * Rounds are interleaved (one run of each command per round) so that other load on the machine
 * weighs on every figure alike; each figure is the median of its runs.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureStore, readExpectedLabels, type GeneratedStore } from './generate/store';
import { hotSpots, type HotSpot } from './profile';
import { processCpuMs } from './server/measure';
import { SERVER_BIN, startServer } from './server/serverProcess';
import { median } from './stats';

/** Sessions in the start store: a small store, all zstd (dsh's default encoding). */
export const START_SESSIONS = 20;

/** The start goals, as ratios to `node -e 0`. */
export const START_GOALS = { version: 1.5, cli: 2.5, stdio: 2.5 } as const;

/** One command's runs. */
export interface StartFigure {
  runs: number[];
  median: number;
}

/** Every start figure of one run. */
export interface StartResult {
  store: GeneratedStore & { reused: boolean };
  rounds: number;
  node: StartFigure;
  /** `dsh-session-ls --version`, spawn to exit. */
  version: StartFigure;
  /** `dsh-session-ls candidates --root <store> --json`, spawn to exit, with a fresh cache directory. */
  cli: StartFigure;
  /** The same again in the cache directory the first call left (its persistent index cache). */
  cliCached?: StartFigure;
  /** Spawn `--stdio` → initialize → the first `dshSession.candidates` answer listing every session, fresh cache directory. */
  stdio: StartFigure & { requests: number[] };
  /** The same again in the cache directory the first server left (a user's every start after the first). */
  stdioCached?: StartFigure;
  ratios: { version: number; cli: number; stdio: number; cliCached?: number; stdioCached?: number };
  /**
   * When the bench's environment sets variables that make every Node start pay for them (see
   * {@link STARTUP_COST_VARIABLES}): `node -e 0` and the CLI call again without them, in the same
   * rounds, so the report shows both what the goals are measured under and what a start costs
   * without the environment's extra work.
   */
  withoutVariables?: { variables: string[]; node: StartFigure; cli: StartFigure; ratio: number };
  /** Hot spots of one profiled CLI run and one profiled stdio run (with --profile). */
  profiles?: { cli?: { totalMs: number; spots: HotSpot[]; dir: string }; stdio?: { totalMs: number; spots: HotSpot[]; dir: string } };
  loadAverage: { start: number; end: number };
  date: string;
  errors: string[];
}

/** Options of the start run. */
export interface StartOptions {
  seed: number;
  rounds: number;
  serverBin?: string;
  profile: boolean;
  workDir: string;
  log: (message: string) => void;
}

/**
 * Environment variables that add work to every Node start: Node 20 reads and parses the
 * certificates of `NODE_EXTRA_CA_CERTS` at start-up (~70 ms of CPU for a 220 KB system bundle on
 * the bench machine, where `node -e 0` takes ~26 ms without it); Node 22 and 24 read them only
 * when TLS first needs them.
 */
export const STARTUP_COST_VARIABLES = ['NODE_EXTRA_CA_CERTS'] as const;

/** Runs `args` with this Node; resolves with the milliseconds from spawn to exit and its stdout. */
export function timeProcess(
  args: string[],
  env: Record<string, string> = {},
  unset: readonly string[] = [],
): Promise<{ ms: number; stdout: string; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const name of unset) delete childEnv[name];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ ms: performance.now() - started, stdout: Buffer.concat(out).toString('utf8'), code, stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

interface WireCandidate {
  sessionId: string;
  label: string;
}

function complete(candidates: readonly WireCandidate[], expected: ReadonlyMap<string, string>): boolean {
  return candidates.length === expected.size && candidates.every((c) => expected.get(c.sessionId) === c.label);
}

/**
 * Spawn → initialize → `dshSession.candidates` until it lists every session; the ms from spawn, the
 * requests it took and the server's CPU time (user + system, every thread) by then.
 */
export async function timeStdio(
  store: GeneratedStore,
  expected: ReadonlyMap<string, string>,
  serverBin: string | undefined,
  workDir: string,
  options: { cpuProfileDir?: string; cacheHome?: string } = {},
): Promise<{ ms: number; requests: number; cpuMs?: number }> {
  const { cpuProfileDir } = options;
  const cacheHome = options.cacheHome ?? mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-start-cache-'));
  const server = await startServer({ root: store.root, serverBin, env: { XDG_CACHE_HOME: cacheHome }, logFile: path.join(workDir, 'server-start.log'), cpuProfileDir });
  try {
    const deadline = server.spawnedAt + 60_000;
    for (let requests = 1; ; requests++) {
      const answer = (await server.connection.sendRequest('workspace/executeCommand', {
        command: 'dshSession.candidates',
        arguments: [{ query: '', limit: expected.size + 1 }],
      })) as WireCandidate[];
      const now = performance.now();
      if (complete(answer, expected)) return { ms: now - server.spawnedAt, requests, cpuMs: processCpuMs(server.pid) };
      if (now > deadline) throw new Error(`no complete candidates answer after 60 s (${answer.length} of ${expected.size} listed)`);
      // A server that answers before its first index is complete is polled closely: the figure is when it first could answer in full.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    await server.stop();
    if (options.cacheHome === undefined) rmSync(cacheHome, { recursive: true, force: true });
  }
}

/** `node -e 0` and the CLI call of `cliArgs` (fresh cache directory) with `variables` unset. */
async function timeWithout(variables: readonly string[], cliArgs: string[]): Promise<{ node: { ms: number }; cli: Awaited<ReturnType<typeof timeProcess>> }> {
  const node = await timeProcess(['-e', '0'], {}, variables);
  const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-start-cache-'));
  try {
    return { node, cli: await timeProcess(cliArgs, { XDG_CACHE_HOME: cacheHome }, variables) };
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
}

/** Runs the start figures: one untimed warm-up round (page cache), then `rounds` interleaved rounds. */
export async function runStart(options: StartOptions): Promise<StartResult> {
  const { log } = options;
  const loadAtStart = os.loadavg()[0];
  const date = new Date().toISOString();
  const errors: string[] = [];
  const store = await ensureStore({ sessions: START_SESSIONS, seed: options.seed, zstdShare: 1, prepareLogs: false, log });
  const expected = readExpectedLabels(store);
  const bin = options.serverBin ?? SERVER_BIN;
  const node: number[] = [];
  const version: number[] = [];
  const cli: number[] = [];
  const cliCached: number[] = [];
  const stdio: number[] = [];
  const stdioCached: number[] = [];
  const requests: number[] = [];
  const costly = STARTUP_COST_VARIABLES.filter((name) => (process.env[name] ?? '') !== '');
  const bareNode: number[] = [];
  const bareCli: number[] = [];
  log(`[start] ${options.rounds} rounds on ${store.root}`);
  for (let round = 0; round <= options.rounds; round++) {
    const timed = round > 0;
    const baseline = await timeProcess(['-e', '0']);
    const shown = await timeProcess([bin, '--version']);
    if (shown.stdout.trim() === '' || shown.code !== 0) errors.push(`--version printed ${JSON.stringify(shown.stdout)} (exit ${shown.code})`);
    const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-start-cache-'));
    const cliArgs = [bin, 'candidates', '--root', store.root, '--json', '--limit', String(expected.size + 1)];
    const listed = await timeProcess(cliArgs, { XDG_CACHE_HOME: cacheHome });
    // The second call finds the persistent cache the first one left.
    const relisted = await timeProcess(cliArgs, { XDG_CACHE_HOME: cacheHome });
    rmSync(cacheHome, { recursive: true, force: true });
    const bare = costly.length === 0 ? undefined : await timeWithout(costly, cliArgs);
    for (const [which, run] of [['CLI candidates', listed], ['CLI candidates (second call)', relisted], ...(bare ? [['CLI candidates (without ' + costly.join(', ') + ')', bare.cli] as const] : [])] as const) {
      try {
        const rows = JSON.parse(run.stdout) as WireCandidate[];
        if (!complete(rows, expected)) errors.push(`${which} listed ${rows.length} of ${expected.size} sessions or other labels`);
      } catch {
        errors.push(`${which} printed no JSON (exit ${run.code}): ${run.stderr.slice(0, 200)}`);
      }
    }
    // The server writes its cache seconds after its first index, and when it stops: the second start finds it.
    const stdioCache = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-start-cache-'));
    const answered = await timeStdio(store, expected, options.serverBin, options.workDir, { cacheHome: stdioCache });
    const reanswered = await timeStdio(store, expected, options.serverBin, options.workDir, { cacheHome: stdioCache });
    rmSync(stdioCache, { recursive: true, force: true });
    if (timed) {
      node.push(baseline.ms);
      version.push(shown.ms);
      cli.push(listed.ms);
      cliCached.push(relisted.ms);
      stdio.push(answered.ms);
      stdioCached.push(reanswered.ms);
      requests.push(answered.requests);
      if (bare) {
        bareNode.push(bare.node.ms);
        bareCli.push(bare.cli.ms);
      }
    }
  }
  const figure = (runs: number[]): StartFigure => ({ runs, median: median(runs) });
  const result: StartResult = {
    store,
    rounds: options.rounds,
    node: figure(node),
    version: figure(version),
    cli: figure(cli),
    cliCached: figure(cliCached),
    stdio: { ...figure(stdio), requests },
    stdioCached: figure(stdioCached),
    ratios: {
      version: median(version) / median(node),
      cli: median(cli) / median(node),
      stdio: median(stdio) / median(node),
      cliCached: median(cliCached) / median(node),
      stdioCached: median(stdioCached) / median(node),
    },
    ...(costly.length === 0
      ? {}
      : { withoutVariables: { variables: costly, node: figure(bareNode), cli: figure(bareCli), ratio: median(bareCli) / median(bareNode) } }),
    loadAverage: { start: loadAtStart, end: os.loadavg()[0] },
    date,
    errors: [...new Set(errors)],
  };
  if (options.profile) {
    const cliDir = path.join(options.workDir, 'profile-start-cli');
    const stdioDir = path.join(options.workDir, 'profile-start-stdio');
    for (const dir of [cliDir, stdioDir]) rmSync(dir, { recursive: true, force: true });
    const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-start-cache-'));
    await timeProcess(['--cpu-prof', `--cpu-prof-dir=${cliDir}`, bin, 'candidates', '--root', store.root, '--json'], { XDG_CACHE_HOME: cacheHome });
    rmSync(cacheHome, { recursive: true, force: true });
    await timeStdio(store, expected, options.serverBin, options.workDir, { cpuProfileDir: stdioDir });
    const cliSpots = hotSpots(cliDir);
    const stdioSpots = hotSpots(stdioDir);
    result.profiles = {
      ...(cliSpots ? { cli: { ...cliSpots, dir: cliDir } } : {}),
      ...(stdioSpots ? { stdio: { ...stdioSpots, dir: stdioDir } } : {}),
    };
  }
  log(`[start] --version ${result.ratios.version.toFixed(2)}×, CLI ${result.ratios.cli.toFixed(2)}×, stdio ${result.ratios.stdio.toFixed(2)}× of node -e 0 (${result.node.median.toFixed(0)} ms)`);
  return result;
}
