/**
 * `npm run bench [-- --quick]`: generate (or reuse) synthetic dsh stores of 1,000 / 10,000 /
 * 100,000 sessions, measure the baselines and the real server over stdio on each, and write
 * bench/RESULTS.md (--quick: 1k and 10k, bench/RESULTS-quick.md).
 *
 * Both begin with the start figures (start.ts: --version, the CLI and the stdio server on a
 * 20-session store, as ratios to `node -e 0`).
 *
 * Other flags, for investigating: --sizes 1000,10000 (writes RESULTS-quick.md), --seed N,
 * --profile (V8 CPU profiles of the cold server and of the starts, hot spots in the results),
 * --no-naive, --server-bin PATH (measure another build, e.g. a candidate fix), --out FILE,
 * --start-only (only the start figures: rewrites the "## Start" section of the results file and
 * leaves the rest as it is), --start-rounds N (default 9), --zstd-share X (share of zstd
 * transcripts in the generated stores, default 0.9; 0 measures an all-raw store).
 *
 * `--ab`: the speed devices' A/B instead (ab/run.ts): each device on and off, in one run.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeMachine } from './machine';
import { renderResults, renderStart, withStartSection } from './report';
import { runStart, type StartResult } from './start';
import { runAb } from './ab/run';
import { REPO_ROOT } from './server/serverProcess';
import { runSize, type SizeResult } from './sizeRun';
import { projectDecoder } from './baselines/projectTitleReader';
import { initFrameDecoding } from './zstd/frames';
import { measureBoundCost, renderBoundCost, type BoundCost } from './zstd/bomb';

interface RunOptions {
  quick: boolean;
  sizes: number[];
  seed: number;
  profile: boolean;
  naive: boolean;
  serverBin?: string;
  out: string;
  startOnly: boolean;
  startRounds: number;
  zstdShare?: number;
}

function parseArgs(argv: readonly string[]): RunOptions {
  const quick = argv.includes('--quick');
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  };
  const sizes = value('--sizes')?.split(',').map(Number) ?? (quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]);
  if (sizes.some((n) => !Number.isSafeInteger(n) || n < 10)) throw new Error(`bad --sizes ${value('--sizes')}`);
  const zstdShare = value('--zstd-share') === undefined ? undefined : Number(value('--zstd-share'));
  if (zstdShare !== undefined && !(zstdShare >= 0 && zstdShare <= 1)) throw new Error(`bad --zstd-share ${value('--zstd-share')}`);
  const custom = value('--sizes') !== undefined || zstdShare !== undefined;
  const out = value('--out') ?? path.join(REPO_ROOT, 'bench', quick || custom ? 'RESULTS-quick.md' : 'RESULTS.md');
  const startRounds = Number(value('--start-rounds') ?? 9);
  if (!Number.isSafeInteger(startRounds) || startRounds < 1) throw new Error(`bad --start-rounds ${value('--start-rounds')}`);
  return {
    quick,
    sizes,
    seed: Number(value('--seed') ?? 1),
    profile: argv.includes('--profile'),
    naive: !argv.includes('--no-naive'),
    serverBin: value('--server-bin'),
    out,
    startOnly: argv.includes('--start-only'),
    startRounds,
    ...(zstdShare === undefined ? {} : { zstdShare }),
  };
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const log = (message: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
  const workDir = path.join(os.tmpdir(), 'dsh-bench-work');
  mkdirSync(workDir, { recursive: true });
  const machine = describeMachine();
  const flags = process.argv.slice(2).join(' ');
  const command = `npm run bench${flags ? ` -- ${flags}` : ''}`;
  const start: StartResult = await runStart({ seed: options.seed, rounds: options.startRounds, serverBin: options.serverBin, profile: options.profile, workDir, log });
  if (options.startOnly) {
    const previous = existsSync(options.out) ? readFileSync(options.out, 'utf8') : '# Benchmark results\n';
    writeFileSync(options.out, withStartSection(previous, renderStart(start, command)));
    log(`wrote the start section of ${options.out}`);
    return;
  }
  await initFrameDecoding();
  const decoder = await projectDecoder();
  log('the bound on a zstd log\'s plaintext: a zstd bomb and an ordinary log');
  const boundCost: BoundCost = await measureBoundCost();
  const results: SizeResult[] = [];
  for (const sessions of options.sizes) {
    const profileDir = options.profile ? path.join(workDir, `profile-${sessions}`) : undefined;
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    results.push(
      await runSize({
        sessions,
        seed: options.seed,
        ...(options.zstdShare === undefined ? {} : { zstdShare: options.zstdShare }),
        // The naive figure is the median of 3 queries at 10,000; quick mode and 100k run one (each costs minutes).
        naiveQueries: !options.naive ? 0 : sessions >= 100_000 || (options.quick && sessions >= 10_000) ? 1 : 3,
        // Medians of 3 up to 10,000 sessions (one run moves by ±15 % on a shared machine); 100,000 runs once (each costs a minute).
        floorRuns: sessions <= 10_000 ? 3 : 1,
        coldRuns: sessions <= 10_000 ? 3 : 1,
        warmup: 20,
        requests: 200,
        prepareRuns: 5,
        decoder,
        cpuProfileDir: profileDir,
        serverBin: options.serverBin,
        workDir,
        log,
      }),
    );
    if (profileDir) log(`server CPU profile of the cold run: ${profileDir}`);
    // Write after every size, so a long full run leaves its figures even if stopped later.
    writeFileSync(
      options.out,
      renderResults(machine, results, { quick: options.quick, seed: options.seed, command, totalMs: performance.now() - started }, start) + renderBoundCost(boundCost),
    );
    writeFileSync(path.join(workDir, `${path.basename(options.out, '.md')}.json`), JSON.stringify({ machine, results }, null, 1));
    log(`wrote ${options.out}; server logs in ${workDir}`);
  }
}

(process.argv.includes('--ab') ? runAb(process.argv.slice(2).filter((arg) => arg !== '--ab')) : main()).catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
