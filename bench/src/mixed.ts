/**
 * `node bench/dist/mixed.js [--sessions 5000] [--foreign 5000] [--seed 1] [--out FILE]` (after
 * `tsc -b bench/tsconfig.json`): `@` completion latency on a mixed store — a synthetic dsh store of
 * `--sessions` sessions plus `--foreign` other agents' sessions (split evenly between Claude Code,
 * Codex, Qwen Code, Gemini CLI and, with node:sqlite, opencode; made from the real fixture files) — against the same dsh store served alone. Both servers start cold on a fresh
 * cache; completion is measured once the first complete listing is answered, as `npm run bench`
 * does (20 warm-up, 200 measured requests per query kind). Writes bench/RESULTS-mixed.md.
 * `--before-bin PATH`: also the mixed store served by another build (e.g. one without the foreign
 * listing cache), for a before/after figure. Each server is then restarted on the cache its first run
 * left (the persistent index caches), and the time to its complete listing is measured again.
 * `--profile`: V8 CPU profiles of each server (cold and restarted) under the work folder's
 * `profile-mixed/`, and their hot spots in the log.
 * The floor (read every byte of the dsh store and of every agent home) gives `npm run bench`'s
 * budgets for the mixed store: cold index ≤ 2× floor, restart ≥ 5× faster, warm p95 ≤ 10 ms.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds, describeMachine } from './machine';
import { hotSpots } from './profile';
import { ensureForeignHomes, foreignAgentArgs, type ForeignHomes } from './generate/foreignSessions';
import { ensureStore, readExpectedLabels } from './generate/store';
import { measureCompletion, measureIdleCpu, waitForCompleteAnswer, waitForListedCount, type LatencyFigure } from './server/measure';
import { makeQueries } from './server/queries';
import { REPO_ROOT, startServer, type RunningServer } from './server/serverProcess';
import { runFloor, WholeFileReader } from './baselines/floor';
import { decodedLength, initFrameDecoding } from './zstd/frames';

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}


/** Every file under `dir` whose name passes `keep`, found by a walk that never follows a link. */
function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const found: string[] = [];
  for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(full, keep));
    else if (entry.isFile() && keep(entry.name)) found.push(full);
  }
  return found;
}

/**
 * The floor of the other agents' homes (bench/README.md's floor, for their layouts): list their
 * transcripts, read every byte, decompress Codex's `.jsonl.zst` with the store's frame decoder,
 * as the dsh floor does (baselines/floor.ts).
 */
function foreignFloorMs(homes: ForeignHomes): { ms: number; plaintextBytes: number } {
  const started = performance.now();
  let plaintextBytes = 0;
  const files = [
    ...filesUnder(path.join(homes.claudeHome, 'projects'), (name) => name.endsWith('.jsonl')),
    ...filesUnder(path.join(homes.codexHome, 'sessions'), (name) => name.endsWith('.jsonl') || name.endsWith('.jsonl.zst')),
    ...filesUnder(path.join(homes.qwenHome, 'projects'), (name) => name.endsWith('.jsonl')),
    ...filesUnder(path.join(homes.geminiHome, 'tmp'), (name) => name.startsWith('session-') && name.endsWith('.jsonl')),
    // opencode's database is read whole (copied) once per change.
    ...(homes.opencodeHome === undefined ? [] : [path.join(homes.opencodeHome, 'opencode.db')]),
  ];
  const reader = new WholeFileReader();
  for (const file of files) {
    const bytes = reader.read(file);
    plaintextBytes += file.endsWith('.zst') ? decodedLength(bytes) : bytes.length;
  }
  return { ms: performance.now() - started, plaintextBytes };
}

/** A budget verdict: `met`, or `**missed**`. */
const verdict = (met: boolean): string => (met ? 'met' : '**missed**');

function row(label: string, figures: readonly LatencyFigure[]): string[] {
  return figures.map((f) => `| ${label} | ${f.kind} | ${f.roundTrip.p50.toFixed(2)} | ${f.roundTrip.p95.toFixed(2)} | ${f.roundTrip.max.toFixed(2)} | ${f.meanItems.toFixed(1)} |`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const sessions = Number(flag(argv, '--sessions') ?? 5000);
  const foreign = Number(flag(argv, '--foreign') ?? 5000);
  const seed = Number(flag(argv, '--seed') ?? 1);
  const out = flag(argv, '--out') ?? path.join(REPO_ROOT, 'bench', 'RESULTS-mixed.md');
  const log = (message: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
  // Its own folder: other bench runs may be using (or regenerating) the shared ones.
  const workDir = path.join(os.tmpdir(), 'dsh-bench-mixed');
  mkdirSync(workDir, { recursive: true });

  const store = await ensureStore({ sessions, seed, log, baseDir: workDir, prepareLogs: false });
  const homes = ensureForeignHomes(path.join(workDir, `foreign-${foreign}-seed-${seed}`), foreign, seed, log);
  const dshLabels = readExpectedLabels(store);
  const allLabels = new Map([...dshLabels, ...homes.labels]);
  const queries = makeQueries(allLabels, [...store.cwds, ...homes.cwds], seed, 60);
  const agentArgs = foreignAgentArgs(homes);

  // The floors (npm run bench's budgets hold for the mixed store too): one warm-up pass for the page cache, then the median of 3.
  await initFrameDecoding();
  const floors = { dsh: [] as number[], mixed: [] as number[] };
  for (let pass = 0; pass <= 3; pass++) {
    const dsh = runFloor(store.root).ms;
    const foreignMs = foreignFloorMs(homes).ms;
    if (pass === 0) continue;
    floors.dsh.push(dsh);
    floors.mixed.push(dsh + foreignMs);
  }
  const medianOf = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const floorMs = { dsh: medianOf(floors.dsh), mixed: medianOf(floors.mixed) };
  log(`floor: dsh ${floorMs.dsh.toFixed(0)} ms, dsh + other agents ${floorMs.mixed.toFixed(0)} ms`);

  const beforeBin = flag(argv, '--before-bin');
  const runs: Array<{ label: string; extraArgs: string[]; serverBin?: string }> = [
    { label: 'dsh alone', extraArgs: [] },
    { label: 'dsh + other agents', extraArgs: agentArgs },
    ...(beforeBin === undefined ? [] : [{ label: `dsh + other agents, ${beforeBin}`, extraArgs: agentArgs, serverBin: beforeBin }]),
  ];
  const results: Array<{ label: string; readyMs: number; figures: LatencyFigure[]; peakRss?: number; cpuS?: number; restartMs?: number; idlePercent?: number }> = [];
  const profileRoot = argv.includes('--profile') ? path.join(workDir, 'profile-mixed') : undefined;
  if (profileRoot !== undefined) rmSync(profileRoot, { recursive: true, force: true });
  for (const [runIndex, { label, extraArgs, serverBin }] of runs.entries()) {
    const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-cache-'));
    const profileDir = (phase: string): string | undefined => (profileRoot === undefined ? undefined : path.join(profileRoot, `${runIndex}-${phase}`));
    const baseLaunch = {
      root: store.root,
      extraArgs,
      env: { XDG_CACHE_HOME: cacheHome },
      logFile: path.join(workDir, 'mixed-server.log'),
      ...(serverBin === undefined ? {} : { serverBin }),
    };
    const launchFor = (phase: string) => {
      const dir = profileDir(phase);
      return dir === undefined ? baseLaunch : { ...baseLaunch, cpuProfileDir: dir };
    };
    const logProfile = (phase: string): void => {
      const dir = profileDir(phase);
      const spots = dir === undefined || !existsSync(dir) ? undefined : hotSpots(dir);
      if (spots === undefined) return;
      log(`${label} (${phase}) profile ${dir}: ${spots.totalMs.toFixed(0)} ms busy (its newest profile file); ${spots.spots.slice(0, 8).map((s) => `${s.name} ${s.selfMs.toFixed(0)}`).join(', ')}`);
    };
    const ready = (server: RunningServer): Promise<number> =>
      extraArgs.length === 0 ? waitForCompleteAnswer(server, dshLabels, 600_000).then((answer) => answer.ms) : waitForListedCount(server, allLabels.size, 600_000);
    try {
      const server = await startServer(launchFor('cold'));
      try {
        const readyMs = await ready(server);
        log(`${label}: complete listing after ${(readyMs / 1000).toFixed(1)} s`);
        const cpuBefore = cpuSeconds(server.pid);
        const figures = await measureCompletion(server, queries, 20, 200);
        const cpuAfter = cpuSeconds(server.pid);
        results.push({ label, readyMs, figures, ...(cpuBefore === undefined || cpuAfter === undefined ? {} : { cpuS: cpuAfter - cpuBefore }) });
        // A restart is measured on complete caches: dsh's index (written a few seconds after a change),
        // and this build's caches of the other agents' homes (a build without them writes none).
        const cacheDir = path.join(cacheHome, 'dsh-session-ls');
        // dsh's and one per home of session files (Claude Code, Codex, Qwen Code, Gemini CLI; opencode's database has none).
        const expected = extraArgs.length === 0 || serverBin !== undefined ? 1 : 5;
        const cached = (): number => (existsSync(cacheDir) ? readdirSync(cacheDir).filter((name) => /^session-index-[0-9a-f]+\.jsonl$/.test(name)).length : 0);
        const deadline = performance.now() + 60_000;
        while (cached() < expected && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
        log(`${label}: ${cached()} cache files before the restart`);
      } finally {
        const stopped = await server.stop();
        const last = results.at(-1);
        if (last !== undefined && last.label === label && stopped.peakRssBytes !== undefined) last.peakRss = stopped.peakRssBytes;
      }
      // The same server started again on the caches its first run wrote (the dsh index, other agents' summaries).
      logProfile('cold');
      const restarted = await startServer(launchFor('restart'));
      try {
        const restartMs = await ready(restarted);
        log(`${label}: restarted on its cache, complete listing after ${(restartMs / 1000).toFixed(1)} s`);
        const last = results.at(-1);
        if (last !== undefined && last.label === label) last.restartMs = restartMs;
        // As the bench's idle figure: 10 s after the listing, 60 s with nobody asking.
        const idle = await measureIdleCpu(restarted, 10_000, 60_000);
        log(`${label}: idle CPU ${idle.percentOfCore.toFixed(2)} % of a core over 60 s`);
        if (last !== undefined && last.label === label) last.idlePercent = idle.percentOfCore;
      } finally {
        await restarted.stop();
      }
      logProfile('restart');
    } finally {
      rmSync(cacheHome, { recursive: true, force: true });
    }
  }

  const machine = describeMachine();
  const lines = [
    `# Mixed-store completion (dsh + Claude Code + Codex + Qwen Code + Gemini CLI${homes.opencodeHome === undefined ? '' : ' + opencode'})`,
    '',
    `Command: \`node bench/dist/mixed.js ${argv.join(' ')}\`; machine: ${JSON.stringify(machine)}.`,
    '',
    `${sessions} dsh sessions; ${homes.perAgent} Claude Code, ${homes.perAgent} Codex, ${homes.perAgent} Qwen Code${homes.opencodeHome === undefined ? ' and' : ','} ${homes.perAgent} Gemini CLI${homes.opencodeHome === undefined ? '' : ` and ${homes.perAgent} opencode`} sessions made from the real fixture files. Round trips of \`textDocument/completion\` in ms (20 warm-up, 200 measured per kind, sequential). Restarted: the same server started again on the caches its first run wrote. Load average at the end: ${os.loadavg().map((load) => load.toFixed(2)).join(', ')}.`,
    '',
    '| server | cold: complete listing (s) | restarted: complete listing (s) | peak RSS (MB) | server CPU during the 880 completions (s) | restarted, idle CPU over 60 s (% of a core) |',
    '|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.label} | ${(r.readyMs / 1000).toFixed(1)} | ${r.restartMs === undefined ? '—' : (r.restartMs / 1000).toFixed(1)} | ${r.peakRss === undefined ? '—' : (r.peakRss / 2 ** 20).toFixed(0)} | ${r.cpuS === undefined ? '—' : r.cpuS.toFixed(2)} | ${r.idlePercent === undefined ? '—' : `${r.idlePercent.toFixed(2)} ${verdict(r.idlePercent < 0.5)}`} |`,
    ),
    '',
    `Floor (list, read every byte, decompress zstd, no parsing; median of 3 after a warm-up pass): dsh store ${floorMs.dsh.toFixed(0)} ms, dsh store + every agent home ${floorMs.mixed.toFixed(0)} ms.`,
    '',
    '| server | cold ÷ floor ≤ 2× | restart ≥ 5× faster than cold | warm completion p95 ≤ 10 ms (worst kind) |',
    '|---|---|---|---|',
    ...results.map((r) => {
      const floor = r.label === 'dsh alone' ? floorMs.dsh : floorMs.mixed;
      const cold = r.readyMs / floor;
      const speedUp = r.restartMs === undefined ? undefined : r.readyMs / r.restartMs;
      const worst = Math.max(...r.figures.map((f) => f.roundTrip.p95));
      return (
        `| ${r.label} | ${cold.toFixed(2)}× ${verdict(cold <= 2)} | ` +
        `${speedUp === undefined ? 'not measured' : `${speedUp.toFixed(2)}× ${verdict(speedUp >= 5)}`} | ${worst.toFixed(2)} ms ${verdict(worst <= 10)} |`
      );
    }),
    '',
    '| server | query | p50 | p95 | max | items |',
    '|---|---|---|---|---|---|',
    ...results.flatMap((r) => row(r.label, r.figures)),
    '',
  ];
  writeFileSync(out, lines.join('\n'));
  log(`wrote ${out}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
