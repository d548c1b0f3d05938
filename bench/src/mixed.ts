/**
 * `node bench/dist/mixed.js [--sessions 5000] [--foreign 5000] [--seed 1] [--out FILE]` (after
 * `tsc -b bench/tsconfig.json`): `@` completion latency on a mixed store — a synthetic dsh store of
 * `--sessions` sessions plus `--foreign` Claude Code and Codex sessions (half each, made from the
 * real fixture files) — against the same dsh store served alone. Both servers start cold on a fresh
 * cache; completion is measured once the first complete listing is answered, as `npm run bench`
 * does (20 warm-up, 200 measured requests per query kind). Writes bench/RESULTS-mixed.md.
 * `--before-bin PATH`: also the mixed store served by another build (e.g. one without the foreign
 * listing cache), for a before/after figure.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeMachine } from './machine';
import { ensureForeignHomes } from './generate/foreignSessions';
import { ensureStore, readExpectedLabels } from './generate/store';
import { measureCompletion, waitForCompleteAnswer, type LatencyFigure } from './server/measure';
import { makeQueries } from './server/queries';
import { REPO_ROOT, startServer, type RunningServer } from './server/serverProcess';

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

/** Wait until the candidates list holds every expected session (dsh's and the other agents'). */
async function waitForMixedListing(server: RunningServer, total: number, deadlineMs: number): Promise<number> {
  for (;;) {
    const rows = (await server.connection.sendRequest('workspace/executeCommand', {
      command: 'dshSession.candidates',
      arguments: [{ query: '', limit: total + 1 }],
    })) as unknown[];
    const elapsed = performance.now() - server.spawnedAt;
    if (rows.length === total && server.activeProgress.size === 0) return elapsed;
    if (elapsed > deadlineMs) throw new Error(`mixed listing has ${rows.length} of ${total} sessions after ${(elapsed / 1000).toFixed(0)} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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
  const agentArgs = ['--agents', 'dsh,claude-code,codex', '--claude-code-home', homes.claudeHome, '--codex-home', homes.codexHome];

  const beforeBin = flag(argv, '--before-bin');
  const runs: Array<{ label: string; extraArgs: string[]; serverBin?: string }> = [
    { label: 'dsh alone', extraArgs: [] },
    { label: 'dsh + Claude Code + Codex', extraArgs: agentArgs },
    ...(beforeBin === undefined ? [] : [{ label: `dsh + Claude Code + Codex, ${beforeBin}`, extraArgs: agentArgs, serverBin: beforeBin }]),
  ];
  const results: Array<{ label: string; readyMs: number; figures: LatencyFigure[]; peakRss?: number }> = [];
  for (const { label, extraArgs, serverBin } of runs) {
    const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-cache-'));
    const server = await startServer({
      root: store.root,
      extraArgs,
      env: { XDG_CACHE_HOME: cacheHome },
      logFile: path.join(workDir, 'mixed-server.log'),
      ...(serverBin === undefined ? {} : { serverBin }),
    });
    try {
      const readyMs = extraArgs.length === 0 ? (await waitForCompleteAnswer(server, dshLabels, 600_000)).ms : await waitForMixedListing(server, allLabels.size, 600_000);
      log(`${label}: complete listing after ${(readyMs / 1000).toFixed(1)} s`);
      const figures = await measureCompletion(server, queries, 20, 200);
      results.push({ label, readyMs, figures });
    } finally {
      const stopped = await server.stop();
      const last = results.at(-1);
      if (last !== undefined && last.label === label && stopped.peakRssBytes !== undefined) last.peakRss = stopped.peakRssBytes;
      rmSync(cacheHome, { recursive: true, force: true });
    }
  }

  const machine = describeMachine();
  const lines = [
    '# Mixed-store completion (dsh + Claude Code + Codex)',
    '',
    `Command: \`node bench/dist/mixed.js ${argv.join(' ')}\`; machine: ${JSON.stringify(machine)}.`,
    '',
    `${sessions} dsh sessions; ${homes.perAgent} Claude Code and ${homes.perAgent} Codex sessions made from the real fixture files. Round trips of \`textDocument/completion\` in ms (20 warm-up, 200 measured per kind, sequential).`,
    '',
    '| server | cold: complete listing (s) | peak RSS (MB) |',
    '|---|---|---|',
    ...results.map((r) => `| ${r.label} | ${(r.readyMs / 1000).toFixed(1)} | ${r.peakRss === undefined ? '—' : (r.peakRss / 2 ** 20).toFixed(0)} |`),
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
