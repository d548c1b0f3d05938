/**
 * One round of the A/B's figures for one build, with the bench's own measurements: the start
 * (start.ts: the CLI and the stdio server on the 20-session store, fresh caches), a dsh store's
 * cold index, cached restart and warm completion (server/measure.ts). Each time comes with the process CPU (user + system of every
 * thread) it took, which other load on the machine distorts less than wall time.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { timeProcess, timeStdio } from '../start';
import { measureCompletion, processCpuMs, waitForCompleteAnswer } from '../server/measure';
import type { QueryKind } from '../server/queries';
import { startServer, type RunningServer } from '../server/serverProcess';
import type { GeneratedStore } from '../generate/store';

/** Samples of named figures (ms, or MiB for peak RSS), one per round. */
export type Samples = Map<string, number[]>;

function add(samples: Samples, figure: string, value: number | undefined): void {
  if (value === undefined || !Number.isFinite(value)) return;
  const list = samples.get(figure) ?? [];
  list.push(value);
  samples.set(figure, list);
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** User + system CPU (ms) of this process's exited and reaped children, from /proc/self/stat. */
function childrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / USER_HZ;
  } catch {
    return undefined;
  }
}

/** The start's figures of `bin`: the CLI listing (spawn to exit) and the stdio server (spawn to its complete answer). */
export async function startRound(bin: string, store: GeneratedStore, expected: ReadonlyMap<string, string>, workDir: string, samples: Samples): Promise<void> {
  const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-ab-cache-'));
  try {
    const before = childrenCpuMs();
    const listed = await timeProcess([bin, 'candidates', '--root', store.root, '--json', '--limit', String(expected.size + 1)], { XDG_CACHE_HOME: cacheHome });
    const after = childrenCpuMs();
    if (listed.code !== 0 || (JSON.parse(listed.stdout) as unknown[]).length !== expected.size) throw new Error(`${bin}: the CLI did not list every session`);
    add(samples, 'start: CLI', listed.ms);
    add(samples, 'start: CLI, CPU', before === undefined || after === undefined ? undefined : after - before);
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
  const answered = await timeStdio(store, expected, bin, workDir);
  add(samples, 'start: stdio', answered.ms);
  add(samples, 'start: stdio, CPU', answered.cpuMs);
}

/**
 * The untimed round before the start's: `bin`'s code caches made as after an upgrade, by a CLI
 * call and a server that answered from their index caches and so decoded no log (a cache made
 * by a cold run holds the decoding too).
 */
export async function codeCacheOnRestart(bin: string, store: GeneratedStore, expected: ReadonlyMap<string, string>, workDir: string): Promise<void> {
  const cliCache = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-ab-cache-'));
  const stdioCache = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-ab-cache-'));
  const cli = () => timeProcess([bin, 'candidates', '--root', store.root, '--json', '--limit', String(expected.size + 1)], { XDG_CACHE_HOME: cliCache });
  try {
    await cli();
    await timeStdio(store, expected, bin, workDir, { cacheHome: stdioCache });
    rmSync(path.join(path.dirname(bin), 'code-cache'), { recursive: true, force: true });
    await cli();
    await timeStdio(store, expected, bin, workDir, { cacheHome: stdioCache });
  } finally {
    rmSync(cliCache, { recursive: true, force: true });
    rmSync(stdioCache, { recursive: true, force: true });
  }
}

/** The worst kind's p50 and p95 of warm completion round trips. */
async function warmCompletion(server: RunningServer, queries: Record<QueryKind, string[]>, requests: number): Promise<{ p50: number; p95: number }> {
  const figures = await measureCompletion(server, queries, 20, requests);
  return { p50: Math.max(...figures.map((f) => f.roundTrip.p50)), p95: Math.max(...figures.map((f) => f.roundTrip.p95)) };
}

/** How a store round starts the server and knows its listing complete. */
export interface StoreLaunch {
  label: string;
  root: string;
  /** dsh's expected labels: the answer must match them. */
  expected: ReadonlyMap<string, string>;
  /** Warm completion after the cold index: measured requests per query kind (0: none). */
  completion?: { queries: Record<QueryKind, string[]>; requests: number };
  workDir: string;
}

async function untilListed(server: RunningServer, launch: StoreLaunch): Promise<number> {
  return (await waitForCompleteAnswer(server, launch.expected, 600_000)).ms;
}

/** A cold index on a fresh cache (then warm completion), and the cached restart after it. */
export async function storeRound(bin: string, launch: StoreLaunch, samples: Samples): Promise<void> {
  const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-ab-cache-'));
  const logFile = path.join(launch.workDir, 'server-ab.log');
  const start = () => startServer({ root: launch.root, serverBin: bin, env: { XDG_CACHE_HOME: cacheHome }, logFile });
  try {
    for (const phase of ['cold', 'restart'] as const) {
      const server = await start();
      let exitCode: number | null = 0;
      try {
        add(samples, `${launch.label} ${phase}`, await untilListed(server, launch));
        add(samples, `${launch.label} ${phase}, CPU`, processCpuMs(server.pid));
        if (phase === 'cold' && launch.completion && launch.completion.requests > 0) {
          const warm = await warmCompletion(server, launch.completion.queries, launch.completion.requests);
          add(samples, `${launch.label} warm p50`, warm.p50);
          add(samples, `${launch.label} warm p95`, warm.p95);
        }
      } finally {
        const stopped = await server.stop();
        if (phase === 'cold') add(samples, `${launch.label} cold, peak RSS (MiB)`, stopped.peakRssBytes === undefined ? undefined : stopped.peakRssBytes / 2 ** 20);
        exitCode = stopped.exitCode;
      }
      if (exitCode !== 0) throw new Error(`${bin} (${launch.label} ${phase}) exited with ${exitCode}`);
    }
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
}
