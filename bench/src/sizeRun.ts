/** Every figure for one store size, in one pass: store, baselines, then the real server twice. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listTranscripts, nativeZstdVersion, runFloor, runNativeFloor, type FloorResult, type NativeFloorResult } from './baselines/floor';
import { frameDecoderName } from './zstd/frames';
import { measureDecodeParse, type DecodeParseResult } from './baselines/decodeParse';
import { runNaiveQuery, type NaiveDecoder } from './baselines/naive';
import { ensureStore, readExpectedLabels, type GeneratedStore } from './generate/store';
import {
  measureCompletion,
  measureEarlyAnswer,
  measureIdleCpu,
  measurePrepare,
  measurePreview,
  waitForCompleteAnswer,
  type CompleteAnswer,
  type EarlyAnswer,
  type IdleCpuFigure,
  type LatencyFigure,
  type PrepareFigure,
} from './server/measure';
import { makeQueries } from './server/queries';
import { startServer, type RunningServer } from './server/serverProcess';
import { hotSpots, type HotSpot } from './profile';
import { median } from './stats';

/** Everything measured at one size. */
export interface SizeResult {
  sessions: number;
  store: GeneratedStore & { reused: boolean };
  /** The floor with the project's own zstd decoder, in this process. */
  floor: FloorResult & { runs: number[]; median: number; decoder: string };
  /** The floor with the native `zstd` CLI; undefined when it is not on PATH. */
  nativeFloor?: NativeFloorResult & { runs: number[]; median: number };
  /** The faster floor's median: what the cold-index budget is against. */
  fastestFloor: { median: number; by: string };
  naive?: { queries: string[]; runs: number[]; median: number };
  cold?: CompleteAnswer;
  /** A completion answered while the cold index was being built. */
  early?: EarlyAnswer;
  restart?: CompleteAnswer;
  /**
   * Every cold index and cached restart timed (ms), the measured pair's first: the budgets are
   * against their medians, as one run moves by ±15 % on a shared machine.
   */
  coldRuns?: number[];
  restartRuns?: number[];
  /** CPU of the restarted server while idle, after its index settled. */
  idle?: IdleCpuFigure;
  warmup: number;
  latency?: LatencyFigure[];
  prepare?: { '1MB': PrepareFigure; '10MB': PrepareFigure };
  /** `dshSession.preview` of the 3 × 10 MB sessions: prepare plus the credential check of its context. */
  preview10MB?: { runs: number[]; median: number };
  decodeParse?: { '1MB': DecodeParseResult; '10MB': DecodeParseResult };
  peakRss?: { cold?: number; restart?: number };
  /** The cold server's peak RSS so far at the end of each phase (VmHWM only grows), to see which phase set it. */
  peakRssAfter?: { index?: number; completion?: number; prepare?: number };
  cacheBytes?: number;
  /** Hot spots of the cold run's server CPU profile (with --profile). */
  coldProfile?: { totalMs: number; spots: HotSpot[]; dir: string };
  ratios: {
    /** Cold index ÷ the faster floor. */
    coldOverFloor?: number;
    coldOverInProcessFloor?: number;
    coldOverNativeFloor?: number;
    naiveOverWarm?: number;
    naiveOverWarm1?: number;
    naiveOverWarm8?: number;
    warmQueryP50?: number;
    restartSpeedup?: number;
    prepare1OverDecode?: number;
    prepare10OverDecode?: number;
  };
  errors: string[];
  wallMs: number;
}

/** Knobs of one size's run. */
export interface SizeRunOptions {
  sessions: number;
  seed: number;
  /** Share of zstd transcripts in a generated store (default the generator's, 0.9; 0: a raw store). */
  zstdShare?: number;
  naiveQueries: number;
  floorRuns: number;
  /** Cold index and cached restart pairs (the first also measures completion, prepare and idle CPU). */
  coldRuns: number;
  warmup: number;
  requests: number;
  prepareRuns: number;
  decoder?: NaiveDecoder;
  cpuProfileDir?: string;
  serverBin?: string;
  /** Idle-CPU window (0: not measured) and the quiet time before it. */
  idleWindowMs?: number;
  idleSettleMs?: number;
  workDir: string;
  log: (message: string) => void;
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? dirBytes(full) : statSync(full).size;
  }
  return total;
}

/**
 * One more cold index (a fresh cache) and the cached restart after it, each timed to the first
 * complete answer; nothing else is measured. An error says which step failed.
 */
async function timeColdAndRestart(
  root: string,
  expected: ReturnType<typeof readExpectedLabels>,
  serverBin: string | undefined,
  logFile: string,
  deadline: number,
  log: (message: string) => void,
): Promise<{ coldMs: number; restartMs: number } | { error: string }> {
  const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-cache-'));
  try {
    const times: number[] = [];
    for (const step of ['cold start', 'restart with the cache']) {
      log(`server: ${step}`);
      const server = await startServer({ root, serverBin, env: { XDG_CACHE_HOME: cacheHome }, logFile });
      let failure: string | undefined;
      try {
        times.push((await waitForCompleteAnswer(server, expected, deadline)).ms);
      } catch (error) {
        failure = `server (${step}, a repeated pair): ${(error as Error).message}`;
      }
      const stopped = await server.stop();
      if (failure === undefined && stopped.exitCode !== 0) failure = `server (${step}, a repeated pair) exited with ${stopped.exitCode}`;
      if (failure !== undefined) return { error: failure };
    }
    return { coldMs: times[0], restartMs: times[1] };
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
}

/** Run every measurement for one size; a failing step is recorded and the others still run. */
export async function runSize(options: SizeRunOptions): Promise<SizeResult> {
  const started = performance.now();
  const { log } = options;
  const errors: string[] = [];
  log(`[${options.sessions}] store`);
  const store = await ensureStore({ sessions: options.sessions, seed: options.seed, ...(options.zstdShare === undefined ? {} : { zstdShare: options.zstdShare }), log });
  log(`[${options.sessions}] store ${store.reused ? 'reused' : 'generated'} at ${store.root}`);
  const expected = readExpectedLabels(store);

  // The first pass warms the page cache so that every later figure reads from memory alike.
  log(`[${options.sessions}] floor`);
  listTranscripts(store.root).forEach((file) => readFileSync(file.path));
  const floorRuns = Array.from({ length: options.floorRuns }, () => runFloor(store.root));
  if (floorRuns[0].transcripts !== options.sessions) errors.push(`floor found ${floorRuns[0].transcripts} transcripts, expected ${options.sessions}`);
  const floor = { ...floorRuns[0], runs: floorRuns.map((f) => f.ms), median: median(floorRuns.map((f) => f.ms)), decoder: frameDecoderName() };
  let nativeFloor: SizeResult['nativeFloor'];
  const tool = nativeZstdVersion();
  if (tool === undefined) errors.push('native floor: the zstd CLI is not on PATH');
  else {
    log(`[${options.sessions}] native floor`);
    const nativeRuns: NativeFloorResult[] = [];
    for (let run = 0; run < options.floorRuns; run++) nativeRuns.push(await runNativeFloor(store.root, tool));
    nativeFloor = { ...nativeRuns[0], runs: nativeRuns.map((f) => f.ms), median: median(nativeRuns.map((f) => f.ms)) };
    if (nativeFloor.plaintextBytes !== floor.plaintextBytes) {
      errors.push(`native floor decoded ${nativeFloor.plaintextBytes} bytes, the in-process floor ${floor.plaintextBytes}`);
    }
  }
  const fastestFloor =
    nativeFloor && nativeFloor.median < floor.median ? { median: nativeFloor.median, by: 'native zstd' } : { median: floor.median, by: floor.decoder };

  const queries = makeQueries(expected, store.cwds, options.seed, 60);
  const result: SizeResult = { sessions: options.sessions, store, floor, nativeFloor, fastestFloor, warmup: options.warmup, ratios: {}, errors, wallMs: 0 };

  if (options.decoder && options.naiveQueries > 0) {
    const naiveQueries = queries['3-char'].slice(0, options.naiveQueries);
    const runs: number[] = [];
    for (const query of naiveQueries) {
      log(`[${options.sessions}] naive query ${JSON.stringify(query)}`);
      const naive = runNaiveQuery(store.root, query, 50, options.decoder);
      if (naive.listed !== options.sessions) errors.push(`naive listed ${naive.listed} sessions, expected ${options.sessions}`);
      runs.push(naive.ms);
    }
    result.naive = { queries: naiveQueries, runs, median: median(runs) };
  }

  const files = (size: '1MB' | '10MB') => store.preparePaths[size].map((p) => ({ path: p, encoding: p.endsWith('.zstd') ? ('zstd' as const) : ('raw' as const) }));
  result.decodeParse = { '1MB': measureDecodeParse(files('1MB'), options.prepareRuns), '10MB': measureDecodeParse(files('10MB'), options.prepareRuns) };

  // XDG_CACHE_HOME is where the server keeps its persistent cache: fresh for the cold run, kept for the restart.
  const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-cache-'));
  const logFile = path.join(options.workDir, `server-${options.sessions}.log`);
  // Generous: a slow decoder is a finding to report, not a reason to give up.
  const deadline = Math.max(600_000, options.sessions * 100);
  let server: RunningServer | undefined;
  try {
    log(`[${options.sessions}] server: cold start`);
    server = await startServer({ root: store.root, serverBin: options.serverBin, env: { XDG_CACHE_HOME: cacheHome }, logFile, cpuProfileDir: options.cpuProfileDir });
    result.early = await measureEarlyAnswer(server);
    result.cold = await waitForCompleteAnswer(server, expected, deadline);
    result.peakRssAfter = { index: server.peakRssBytes() };
    log(`[${options.sessions}] cold ${result.cold.ms.toFixed(0)} ms; warm completion`);
    result.latency = await measureCompletion(server, queries, options.warmup, options.requests);
    result.peakRssAfter.completion = server.peakRssBytes();
    log(`[${options.sessions}] prepare`);
    result.prepare = {
      '1MB': await measurePrepare(server, store.prepare['1MB'], options.prepareRuns),
      '10MB': await measurePrepare(server, store.prepare['10MB'], options.prepareRuns),
    };
    result.preview10MB = await measurePreview(server, store.prepare['10MB'], options.prepareRuns);
    result.peakRssAfter.prepare = server.peakRssBytes();
  } catch (error) {
    errors.push(`server (cold run): ${(error as Error).message}`);
  } finally {
    if (server) {
      const stopped = await server.stop();
      result.peakRss = { cold: stopped.peakRssBytes };
      if (stopped.exitCode !== 0) errors.push(`server (cold run) exited with ${stopped.exitCode}`);
    }
  }

  if (options.cpuProfileDir) {
    const spots = hotSpots(options.cpuProfileDir);
    if (spots) result.coldProfile = { ...spots, dir: options.cpuProfileDir };
  }
  mkdirSync(cacheHome, { recursive: true });
  result.cacheBytes = dirBytes(cacheHome);
  if (result.cold && result.cacheBytes === 0) errors.push(`no persistent cache was written under XDG_CACHE_HOME=${cacheHome}`);
  if (result.cold) {
    let restarted: RunningServer | undefined;
    try {
      log(`[${options.sessions}] server: restart with the cache`);
      restarted = await startServer({ root: store.root, serverBin: options.serverBin, env: { XDG_CACHE_HOME: cacheHome }, logFile });
      result.restart = await waitForCompleteAnswer(restarted, expected, deadline);
      const idleWindowMs = options.idleWindowMs ?? 60_000;
      if (idleWindowMs > 0) {
        log(`[${options.sessions}] idle CPU over ${(idleWindowMs / 1000).toFixed(0)} s`);
        result.idle = await measureIdleCpu(restarted, options.idleSettleMs ?? 10_000, idleWindowMs);
      }
    } catch (error) {
      errors.push(`server (restart): ${(error as Error).message}`);
    } finally {
      if (restarted) {
        const stopped = await restarted.stop();
        result.peakRss = { ...result.peakRss, restart: stopped.peakRssBytes };
        if (stopped.exitCode !== 0) errors.push(`server (restart) exited with ${stopped.exitCode}`);
      }
    }
  }
  rmSync(cacheHome, { recursive: true, force: true });
  if (result.cold) {
    result.coldRuns = [result.cold.ms];
    if (result.restart) result.restartRuns = [result.restart.ms];
    for (let run = 1; run < options.coldRuns; run++) {
      const pair = await timeColdAndRestart(store.root, expected, options.serverBin, logFile, deadline, (message) => log(`[${options.sessions}] ${message} (pair ${run + 1} of ${options.coldRuns})`));
      if ('error' in pair) {
        errors.push(pair.error);
        break;
      }
      result.coldRuns.push(pair.coldMs);
      result.restartRuns?.push(pair.restartMs);
    }
  }
  const coldMs = result.coldRuns ? median(result.coldRuns) : undefined;
  const restartMs = result.restartRuns ? median(result.restartRuns) : undefined;

  const byKind = (kind: string) => result.latency?.find((f) => f.kind === kind)?.roundTrip.p50;
  result.ratios = {
    coldOverFloor: coldMs !== undefined ? coldMs / fastestFloor.median : undefined,
    coldOverInProcessFloor: coldMs !== undefined ? coldMs / floor.median : undefined,
    coldOverNativeFloor: coldMs !== undefined && nativeFloor ? coldMs / nativeFloor.median : undefined,
    warmQueryP50: byKind('3-char'),
    naiveOverWarm: result.naive && byKind('3-char') ? result.naive.median / byKind('3-char')! : undefined,
    naiveOverWarm1: result.naive && byKind('1-char') ? result.naive.median / byKind('1-char')! : undefined,
    naiveOverWarm8: result.naive && byKind('8-char') ? result.naive.median / byKind('8-char')! : undefined,
    restartSpeedup: coldMs !== undefined && restartMs !== undefined ? coldMs / restartMs : undefined,
    prepare1OverDecode: result.prepare ? result.prepare['1MB'].median / result.decodeParse['1MB'].median : undefined,
    prepare10OverDecode: result.prepare ? result.prepare['10MB'].median / result.decodeParse['10MB'].median : undefined,
  };
  result.wallMs = performance.now() - started;
  return result;
}
