/**
 * `node bench/dist/mixedRestart.js [--sessions 5000] [--foreign 5000] [--runs 5] [--before-bin PATH] [--dsh-alone] [--profile]`
 * (after `tsc -b bench/tsconfig.json`): only the restart of `mixed.js`, repeated, for an A/B of a
 * change to it. Each build (this checkout's bin, and `--before-bin`'s) first starts cold on a fresh
 * cache and is stopped once its caches are written; then the builds are restarted on their own
 * caches in turn, `--runs` times each, alternating, and each restart's time to the complete
 * mixed listing (polled as `mixed.js` does) and its process CPU (all threads, from /proc) at that
 * moment are printed. `--dsh-alone`: also dsh alone (this checkout's bin) in the rotation;
 * `--polls`: each restart's polls (how many rows each answer had, and when).
 * Writes nothing in the repository; the store is `mixed.js`'s (`/tmp/dsh-bench-mixed`).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds } from './machine';
import { ensureForeignHomes, foreignAgentArgs } from './generate/foreignSessions';
import { ensureStore, readExpectedLabels } from './generate/store';
import { waitForListedCount } from './server/measure';
import { startServer, type RunningServer, type ServerLaunch } from './server/serverProcess';

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}


/** Waits as `mixed.js` does for the complete listing; with `showPolls`, prints each poll. */
async function waitForListing(server: RunningServer, total: number, showPolls = false): Promise<number> {
  const polls: string[] = [];
  const elapsed = await waitForListedCount(server, total, 600_000, (rows, progress, ms) => polls.push(`${rows}${progress ? '+progress' : ''}@${ms.toFixed(0)}`));
  if (showPolls) process.stderr.write(`polls (rows, +progress while a progress was open, @ms): ${polls.join(' ')}\n`);
  return elapsed;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const sessions = Number(flag(argv, '--sessions') ?? 5000);
  const foreign = Number(flag(argv, '--foreign') ?? 5000);
  const runs = Number(flag(argv, '--runs') ?? 5);
  const beforeBin = flag(argv, '--before-bin');
  const log = (message: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
  const workDir = path.join(os.tmpdir(), 'dsh-bench-mixed');
  mkdirSync(workDir, { recursive: true });
  const store = await ensureStore({ sessions, seed: 1, log, baseDir: workDir, prepareLogs: false });
  const homes = ensureForeignHomes(path.join(workDir, `foreign-${foreign}-seed-1`), foreign, 1, log);
  const dshTotal = readExpectedLabels(store).size;
  const mixedTotal = dshTotal + homes.labels.length;
  const agentArgs = foreignAgentArgs(homes);
  const profileRoot = argv.includes('--profile') ? path.join(workDir, 'profile-restart') : undefined;
  if (profileRoot !== undefined) rmSync(profileRoot, { recursive: true, force: true });

  const builds: Array<{ label: string; extraArgs: string[]; total: number; serverBin?: string; cacheHome: string; wall: number[]; cpu: number[] }> = [
    { label: 'this checkout, mixed', extraArgs: agentArgs, total: mixedTotal, cacheHome: '', wall: [], cpu: [] },
    ...(beforeBin === undefined ? [] : [{ label: `${beforeBin}, mixed`, extraArgs: agentArgs, total: mixedTotal, serverBin: beforeBin, cacheHome: '', wall: [], cpu: [] }]),
    ...(argv.includes('--dsh-alone') ? [{ label: 'this checkout, dsh alone', extraArgs: [], total: dshTotal, cacheHome: '', wall: [], cpu: [] }] : []),
  ];
  const launch = (build: (typeof builds)[number], profile?: string): ServerLaunch => ({
    root: store.root,
    extraArgs: build.extraArgs,
    env: { XDG_CACHE_HOME: build.cacheHome },
    logFile: path.join(workDir, 'mixed-restart-server.log'),
    ...(build.serverBin === undefined ? {} : { serverBin: build.serverBin }),
    ...(profile === undefined ? {} : { cpuProfileDir: profile }),
  });
  try {
    for (const build of builds) {
      build.cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-cache-'));
      const server = await startServer(launch(build));
      try {
        const ms = await waitForListing(server, build.total);
        const cacheDir = path.join(build.cacheHome, 'dsh-session-ls');
        const expected = build.extraArgs.length === 0 ? 1 : 3;
        const cached = (): number => (existsSync(cacheDir) ? readdirSync(cacheDir).filter((name) => /^session-index-[0-9a-f]+\.jsonl$/.test(name)).length : 0);
        const deadline = performance.now() + 60_000;
        while (cached() < expected && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
        log(`${build.label}: cold ${(ms / 1000).toFixed(2)} s, ${cached()} cache files`);
      } finally {
        await server.stop();
      }
    }
    for (let run = 0; run < runs; run++) {
      for (const [index, build] of builds.entries()) {
        const profile = profileRoot === undefined ? undefined : path.join(profileRoot, `${index}-${run}`);
        const server = await startServer(launch(build, profile));
        try {
          const ms = await waitForListing(server, build.total, argv.includes('--polls'));
          const cpu = cpuSeconds(server.pid) ?? NaN;
          build.wall.push(ms / 1000);
          build.cpu.push(cpu);
          log(`${build.label}: restart ${(ms / 1000).toFixed(2)} s wall, ${cpu.toFixed(2)} s CPU (load ${os.loadavg()[0]!.toFixed(1)})`);
        } finally {
          await server.stop();
        }
      }
    }
  } finally {
    for (const build of builds) if (build.cacheHome !== '') rmSync(build.cacheHome, { recursive: true, force: true });
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  for (const build of builds) {
    process.stdout.write(
      `${build.label}: restart wall ${build.wall.map((v) => v.toFixed(2)).join(' / ')} s (median ${median(build.wall).toFixed(2)}), ` +
        `CPU ${build.cpu.map((v) => v.toFixed(2)).join(' / ')} s (median ${median(build.cpu).toFixed(2)})\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`mixedRestart failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
