/** RESULTS.md: the machine, each figure, each ratio, and every budget with its verdict. */
import os from 'node:os';
import type { MachineInfo } from './machine';
import type { LatencyFigure } from './server/measure';
import type { SizeResult } from './sizeRun';
import { START_GOALS, type StartResult } from './start';
import { median } from './stats';

const ms = (value: number | undefined): string => (value === undefined || Number.isNaN(value) ? 'n/a' : value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(2)} ms`);
const mb = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${(bytes / 2 ** 20).toFixed(1)} MiB`);
/** Timed runs: their median, and each run when there are several ("median 3056 ms of 2981, 3056, 3120 ms"). */
const timed = (runs: readonly number[] | undefined): string =>
  runs === undefined || runs.length === 0 ? 'n/a' : runs.length === 1 ? ms(runs[0]) : `median ${ms(median(runs))} of ${runs.map((run) => run.toFixed(0)).join(', ')} ms`;
/** The runs after the measured one, for a details line ("; again 2981, 3120 ms: median 3056 ms"). */
const again = (runs: readonly number[] | undefined): string =>
  runs === undefined || runs.length < 2 ? '' : `; again ${runs.slice(1).map((run) => run.toFixed(0)).join(', ')} ms: median ${ms(median(runs))}`;
const ratio = (value: number | undefined): string => (value === undefined || !Number.isFinite(value) ? 'n/a' : `${value >= 10 ? value.toFixed(0) : value.toFixed(2)}×`);
const count = (n: number): string => n.toLocaleString('en-US');

/** One budget line: what was asked, what was measured, and the verdict (with the miss when missed). */
export interface BudgetLine {
  budget: string;
  measured: string;
  verdict: string;
}

function verdict(ok: boolean | undefined, miss: () => string): string {
  if (ok === undefined) return 'not measured';
  return ok ? 'met' : `**missed** (${miss()})`;
}

/** The project's performance budgets, checked against a run's figures. */
export function checkBudgets(results: readonly SizeResult[]): BudgetLine[] {
  const at = (n: number): SizeResult | undefined => results.find((r) => r.sessions === n);
  const lines: BudgetLine[] = [];
  for (const [n, limit] of [[10_000, 10], [100_000, 25]] as const) {
    const r = at(n);
    if (!r) continue;
    // The budget is stated on the server's own time; a client sees the round trip: both get a verdict.
    const sides = [
      { name: 'server side', p95: (f: LatencyFigure) => f.server?.p95 },
      { name: 'round trip', p95: (f: LatencyFigure) => f.roundTrip.p95 },
    ];
    for (const side of sides) {
      let worst: { kind: string; p95: number } | undefined;
      let unmeasured = r.latency === undefined || r.latency.length === 0;
      for (const f of r.latency ?? []) {
        const p95 = side.p95(f);
        if (p95 === undefined) unmeasured = true;
        else if (worst === undefined || p95 > worst.p95) worst = { kind: f.kind, p95 };
      }
      const measured = unmeasured ? undefined : worst;
      lines.push({
        budget: `warm completion p95 ≤ ${limit} ms at ${count(n)}, ${side.name} (every query kind)`,
        measured: measured ? `worst ${ms(measured.p95)} (${measured.kind})` : 'n/a',
        verdict: verdict(measured && measured.p95 <= limit, () => (measured ? `${ms(measured.p95 - limit)} over, ${ratio(measured.p95 / limit)} the budget` : '')),
      });
    }
  }
  const ten = at(10_000);
  if (ten) {
    const speedup = ten.ratios.naiveOverWarm;
    lines.push({
      budget: '≥ 100× faster than naive for a non-empty query at 10,000',
      measured: speedup === undefined ? 'n/a' : `${ratio(speedup)} (naive median ${ms(ten.naive?.median)} vs warm 3-char p50 ${ms(ten.ratios.warmQueryP50)})`,
      verdict: verdict(speedup === undefined ? undefined : speedup >= 100, () => `${ratio(100 / (speedup ?? 1))} short`),
    });
  }
  for (const r of results) {
    const c = r.ratios.coldOverFloor;
    lines.push({
      budget: `cold index ≤ 2× floor at ${count(r.sessions)} (the faster floor: ${r.fastestFloor.by})`,
      measured: c === undefined ? 'n/a' : `${ratio(c)} (${timed(r.coldRuns)} vs ${ms(r.fastestFloor.median)})`,
      verdict: verdict(c === undefined ? undefined : c <= 2, () => `${ratio(c! / 2)} the budget, ${ms(c! * r.fastestFloor.median - 2 * r.fastestFloor.median)} over`),
    });
  }
  for (const r of results) {
    const s = r.ratios.restartSpeedup;
    lines.push({
      budget: `cached restart ≥ 5× faster than cold at ${count(r.sessions)}`,
      measured: s === undefined ? 'n/a' : `${ratio(s)} (${timed(r.restartRuns)} vs ${timed(r.coldRuns)})`,
      verdict: verdict(s === undefined ? undefined : s >= 5, () => `only ${ratio(s)}`),
    });
  }
  for (const r of results) {
    if (r.sessions < 10_000 || !r.idle) continue;
    const idle = r.idle;
    lines.push({
      budget: `idle CPU < 0.5 % of a core over 60 s at ${count(r.sessions)}`,
      measured: `${idle.percentOfCore.toFixed(2)} % (${ms(idle.cpuMs)} in ${(idle.windowMs / 1000).toFixed(0)} s)`,
      verdict: verdict(idle.percentOfCore < 0.5, () => `${(idle.percentOfCore / 0.5).toFixed(1)}× the budget`),
    });
  }
  const big = at(100_000);
  if (big) {
    const peak = Math.max(big.peakRss?.cold ?? 0, big.peakRss?.restart ?? 0) || undefined;
    // The budget's 300 MB are decimal megabytes: 286.1 MiB.
    const budget = 300e6;
    lines.push({
      budget: 'peak RSS ≤ 300 MB (286.1 MiB) at 100,000',
      measured: peak === undefined ? mb(peak) : `${mb(peak)} (${(peak / 1e6).toFixed(1)} MB)`,
      verdict: verdict(peak === undefined ? undefined : peak <= budget, () => `${mb((peak ?? 0) - budget)} over`),
    });
  }
  for (const r of results) {
    const p = r.ratios.prepare10OverDecode;
    lines.push({
      budget: `prepare 3×10 MB ≤ 2× read+decode+parse at ${count(r.sessions)}`,
      measured: p === undefined ? 'n/a' : `${ratio(p)} (${ms(r.prepare?.['10MB'].median)} vs ${ms(r.decodeParse?.['10MB'].median)})`,
      verdict: verdict(p === undefined ? undefined : p <= 2, () => `${ratio(p! / 2)} the budget`),
    });
  }
  return lines;
}

/** The start goals (ratios to `node -e 0` in the same run), checked. */
export function checkStartGoals(start: StartResult): BudgetLine[] {
  const line = (what: string, goal: number, value: number, figure: number): BudgetLine => ({
    budget: `${what} ≤ ${goal}× \`node -e 0\``,
    measured: `${ratio(value)} (${ms(figure)} vs ${ms(start.node.median)})`,
    verdict: verdict(Number.isFinite(value) ? value <= goal : undefined, () => `${ratio(value / goal)} the goal`),
  });
  return [
    line('`--version`', START_GOALS.version, start.ratios.version, start.version.median),
    line(`CLI \`candidates --json\` on ${start.store.sessions} zstd sessions`, START_GOALS.cli, start.ratios.cli, start.cli.median),
    line('spawn → first complete `dshSession.candidates` over stdio, same store', START_GOALS.stdio, start.ratios.stdio, start.stdio.median),
  ];
}

/** The "## Start" section of the results (self-contained: its own date and load, so it can be rewritten alone). */
export function renderStart(start: StartResult, command: string): string[] {
  const s = start.store;
  const runs = (values: number[]) => values.map((x) => x.toFixed(0)).join(', ');
  const out: string[] = [];
  out.push('## Start');
  out.push('');
  out.push(
    `Written by \`${command}\` at ${start.date}, load average (1 min) ${start.loadAverage.start.toFixed(1)} at start / ${start.loadAverage.end.toFixed(1)} at end. ` +
      `Store: ${count(s.sessions)} sessions, all zstd, ${mb(s.bytes.onDisk)} on disk (${mb(s.bytes.uncompressed)} uncompressed), at \`${s.root}\`. ` +
      `${start.rounds} interleaved rounds after one untimed (each round runs every command once, so load on the machine weighs on all alike); medians. ` +
      'Every timed start gets a fresh, empty `XDG_CACHE_HOME`, so no persistent index cache helps it; the one exception is the CLI\'s second call, ' +
      'made in the cache directory its first call left (the CLI writes the cache after answering; the server seconds after its first index). ' +
        "V8's code cache of the bundles (`server/dist/bundle/code-cache/`, made by the first run of each bundle on this Node, the untimed one at the latest) is part of the install and is used by every timed run.",
  );
  out.push('');
  if (start.errors.length > 0) {
    out.push('Errors in the start run:');
    for (const error of start.errors) out.push(`- ${error}`);
    out.push('');
  }
  out.push('| goal | measured | verdict |');
  out.push('|---|---|---|');
  for (const line of checkStartGoals(start)) out.push(`| ${line.budget} | ${line.measured} | ${line.verdict} |`);
  out.push('');
  out.push('| figure (spawn → …) | median | runs (ms) |');
  out.push('|---|---|---|');
  out.push(`| \`node -e 0\` → exit | ${ms(start.node.median)} | ${runs(start.node.runs)} |`);
  out.push(`| \`dsh-session-ls --version\` → exit | ${ms(start.version.median)} | ${runs(start.version.runs)} |`);
  out.push(`| \`dsh-session-ls candidates --root <store> --json\` → exit | ${ms(start.cli.median)} | ${runs(start.cli.runs)} |`);
  if (start.cliCached !== undefined && start.ratios.cliCached !== undefined) {
    out.push(
      `| the same, second call (the cache the first left): ${ratio(start.ratios.cliCached)} \`node -e 0\` | ${ms(start.cliCached.median)} | ${runs(start.cliCached.runs)} |`,
    );
  }
  out.push(
    `| \`dsh-session-ls --stdio\` → initialize → \`dshSession.candidates\` listing every session | ${ms(start.stdio.median)} | ${runs(start.stdio.runs)} (requests: ${start.stdio.requests.join(', ')}) |`,
  );
  if (start.stdioCached !== undefined && start.ratios.stdioCached !== undefined) {
    out.push(
      `| the same, second start (the cache the first server left): ${ratio(start.ratios.stdioCached)} \`node -e 0\` | ${ms(start.stdioCached.median)} | ${runs(start.stdioCached.runs)} |`,
    );
  }
  out.push('');
  const bare = start.withoutVariables;
  if (bare !== undefined) {
    const names = bare.variables.map((name) => `\`${name}\``).join(', ');
    out.push(
      `This machine's environment sets ${names}, which every Node start on it pays for (Node 20 reads and parses the certificates at start-up), ` +
        'so the goals above are measured with it, as on any machine that sets it. The same rounds also ran these two without it:',
    );
    out.push('');
    out.push('| figure, without ' + names + ' | median | runs (ms) |');
    out.push('|---|---|---|');
    out.push(`| \`node -e 0\` → exit | ${ms(bare.node.median)} | ${runs(bare.node.runs)} |`);
    out.push(`| \`dsh-session-ls candidates --root <store> --json\` → exit: ${ratio(bare.ratio)} \`node -e 0\` | ${ms(bare.cli.median)} | ${runs(bare.cli.runs)} |`);
    out.push('');
  }
  for (const [name, profile] of Object.entries(start.profiles ?? {})) {
    if (!profile) continue;
    out.push(`CPU profile of one ${name === 'cli' ? 'CLI' : 'stdio server'} start (\`--profile\`, ${ms(profile.totalMs)} busy, in \`${profile.dir}\`), by self time:`);
    out.push('');
    out.push('| function | self | share |');
    out.push('|---|---|---|');
    for (const spot of profile.spots) out.push(`| \`${spot.name}\` | ${ms(spot.selfMs)} | ${(spot.share * 100).toFixed(1)}% |`);
    out.push('');
  }
  return out;
}

/** `document` with its "## Start" section replaced by `section` (inserted before the first size's section if it has none). */
export function withStartSection(document: string, section: string[]): string {
  const lines = document.split('\n');
  const begin = lines.findIndex((line) => line === '## Start');
  if (begin >= 0) {
    const next = lines.findIndex((line, i) => i > begin && line.startsWith('## '));
    lines.splice(begin, (next < 0 ? lines.length : next) - begin, ...section);
  } else {
    const firstSize = lines.findIndex((line) => /^## [\d,]+ sessions/.test(line));
    lines.splice(firstSize < 0 ? lines.length : firstSize, 0, ...section);
  }
  return lines.join('\n');
}

/** The whole results document. */
export function renderResults(
  machine: MachineInfo,
  results: readonly SizeResult[],
  options: { quick: boolean; seed: number; command: string; totalMs: number },
  start?: StartResult,
): string {
  const out: string[] = [];
  out.push(`# Benchmark results${options.quick ? ' (quick: 1k and 10k only)' : ''}`);
  out.push('');
  out.push(`Written by \`${options.command}\` (bench/src/run.ts); what each figure means is in bench/README.md. Every figure below comes from this one run.`);
  out.push('');
  out.push('| machine | |');
  out.push('|---|---|');
  out.push(`| date | ${machine.date} |`);
  out.push(`| nproc | ${machine.nproc} |`);
  out.push(`| CPU | ${machine.cpuModel} |`);
  out.push(`| memory | ${machine.memoryGb} GiB |`);
  out.push(`| Node | ${machine.node} |`);
  out.push(`| OS | ${machine.os} |`);
  out.push(`| zstd CLI | ${machine.zstd} |`);
  out.push(`| seed | ${options.seed} |`);
  out.push(`| whole run | ${(options.totalMs / 60_000).toFixed(1)} min |`);
  const serverTimed = results.some((r) => r.latency?.some((f) => f.server !== undefined));
  out.push(`| load average (1 min) at start / when written | ${machine.loadAtStart.toFixed(1)} / ${os.loadavg()[0].toFixed(1)} |`);
  out.push('');
  const timing = serverTimed
    ? ", with the server's own time from its `$/logTrace` where given"
    : "; the server reports no time of its own (`$/logTrace` … took N ms) yet";
  out.push(
    "How it measures: synthetic stores shaped like dsh's (zstd frames as Node's zlib writes them for dsh: one per write batch, checksum, " +
      'no content size, 2 MiB window; a tenth raw), generated under the OS temp dir and reused. The server is the committed bin over stdio, ' +
      'a fresh `XDG_CACHE_HOME` for the cold run (its persistent cache lives there), the same one for the restart; up to 10,000 ' +
      'sessions three such pairs and three floors are timed, and the budgets are against their medians. "Complete" means ' +
      '`dshSession.candidates` (empty query, limit above the store size) lists every session with exactly the label the generator ' +
      'recorded, with no work-done progress open. Latency is the client\'s round trip of `textDocument/completion`, sequential requests' +
      timing +
      '. The floor lists the transcripts and reads every byte, zstd-decompressing with the fastest correct decoder there is here: ' +
      "the store's own frame decoder in this process and the native `zstd` CLI (256 files a call), both verifying checksums, " +
      'side by side; the budget is against the faster. Neither splits or parses lines. The naive ' +
      "baseline uses the store's own header reader and `loadSessionLog` for every log, per query, in this process.",
  );
  out.push('');
  out.push('## Budgets');
  out.push('');
  out.push('| budget | measured | verdict |');
  out.push('|---|---|---|');
  for (const line of checkBudgets(results)) out.push(`| ${line.budget} | ${line.measured} | ${line.verdict} |`);
  out.push('');
  out.push(
    "Latency budgets get two verdicts: on the server's own time (from the request's arrival in its handler to its answer, " +
      'without reading and writing the message) and on the round trip the client sees (which includes it).',
  );
  out.push('');
  if (start) out.push(...renderStart(start, options.command));
  for (const r of results) out.push(...renderSize(r));
  return out.join('\n') + '\n';
}

function renderSize(r: SizeResult): string[] {
  const s = r.store;
  const out: string[] = [];
  out.push(`## ${count(r.sessions)} sessions`);
  out.push('');
  out.push(
    `Store: ${s.reused ? 'reused' : `generated in ${(s.generatedMs / 1000).toFixed(1)} s`} at \`${s.root}\`; ` +
      `${count(s.encodings.zstd)} zstd + ${count(s.encodings.raw)} raw, ${count(s.projectDirs)} project dirs, ` +
      `${mb(s.bytes.uncompressed)} uncompressed (${mb(s.bytes.onDisk)} on disk), ${count(s.frames)} zstd frames, ${count(s.events)} events; ` +
      `log size median ${(s.logBytes.median / 1024).toFixed(0)} KiB, p90 ${(s.logBytes.p90 / 1024).toFixed(0)} KiB, p99 ${(s.logBytes.p99 / 1024).toFixed(0)} KiB, max ${mb(s.logBytes.max)}; ` +
      `${count(s.untitled)} untitled, ${count(s.renamed)} renamed by the user, ${count(s.compacted)} compacted, ${count(s.openTails)} with an open last turn. Frames made with ${s.compression}.`,
  );
  out.push('');
  if (r.errors.length > 0) {
    out.push('Errors in this size\'s run:');
    for (const error of r.errors) out.push(`- ${error}`);
    out.push('');
  }
  out.push('| figure | value |');
  out.push('|---|---|');
  const floorRow = (f: { runs: number[]; median: number; plaintextBytes: number }) =>
    `${ms(f.median)} (runs ${f.runs.map((x) => x.toFixed(0)).join(', ')} ms; ${mb(f.plaintextBytes)} plaintext, ${(f.plaintextBytes / 1e6 / (f.median / 1000)).toFixed(0)} MB/s)`;
  out.push(`| floor, in process (list + read every byte + zstd-decompress with ${r.floor.decoder}), median of ${r.floor.runs.length} | ${floorRow(r.floor)} |`);
  if (r.nativeFloor) out.push(`| floor, native (the same with \`${r.nativeFloor.tool}\` for the zstd files), median of ${r.nativeFloor.runs.length} | ${floorRow(r.nativeFloor)} |`);
  else out.push('| floor, native | n/a (no `zstd` on PATH) |');
  if (r.naive) out.push(`| naive (headers, then fold every log for its title, filter), median of ${r.naive.runs.length} queries ${r.naive.queries.map((q) => `\`${q}\``).join(', ')} | ${ms(r.naive.median)} (runs ${r.naive.runs.map((x) => x.toFixed(0)).join(', ')} ms) |`);
  if (r.cold) out.push(`| cold start → first complete answer (fresh cache dir) | ${ms(r.cold.ms)} (${r.cold.polls} polls, progress ${r.cold.sawProgress ? 'reported' : 'not reported'})${again(r.coldRuns)} |`);
  if (r.early) {
    out.push(
      `| \`@\` completion sent right after initialize, while indexing | answered ${ms(r.early.msSinceSpawn)} after spawn ` +
        `(round trip ${ms(r.early.roundTrip)}), ${r.early.items} items, ${r.early.incomplete ? 'marked incomplete' : 'not marked incomplete'} |`,
    );
  }
  if (r.restart) out.push(`| cached restart → first complete answer | ${ms(r.restart.ms)} (${r.restart.polls} polls; cache ${mb(r.cacheBytes)})${again(r.restartRuns)} |`);
  if (r.idle) out.push(`| idle CPU of the restarted server over ${(r.idle.windowMs / 1000).toFixed(0)} s, after its index settled (process user + system time, workers included) | ${r.idle.percentOfCore.toFixed(2)} % of a core (${ms(r.idle.cpuMs)}) |`);
  if (r.peakRss) out.push(`| peak RSS (VmHWM) of the server, cold run / restarted run | ${mb(r.peakRss.cold)} / ${mb(r.peakRss.restart)} |`);
  const after = r.peakRssAfter;
  if (after) out.push(`| cold run's peak RSS so far after the index / warm completion / prepare | ${mb(after.index)} / ${mb(after.completion)} / ${mb(after.prepare)} |`);
  for (const size of ['1MB', '10MB'] as const) {
    const p = r.prepare?.[size];
    const d = r.decodeParse?.[size];
    if (p) out.push(`| \`dshSession.prepare\` of 3 × ${size} logs, median of ${p.runs.length} | ${ms(p.median)} (runs ${p.runs.map((x) => x.toFixed(0)).join(', ')} ms; context ${(p.contextBytes / 1024).toFixed(0)} KiB) |`);
    if (d) out.push(`| read + decode + JSON.parse of the same 3 × ${size} logs, median of ${d.runs.length} | ${ms(d.median)} (${count(d.lines)} lines) |`);
  }
  const preview = r.preview10MB;
  const prepare10 = r.prepare?.['10MB'];
  if (preview && prepare10) {
    const check = Math.max(0, preview.median - prepare10.median);
    out.push(`| \`dshSession.preview\` of the 3 × 10MB logs (prepare + credential check), median of ${preview.runs.length} | ${ms(preview.median)}: the check ≈ ${ms(check)}, ${((check / prepare10.median) * 100).toFixed(1)} % of prepare |`);
  }
  out.push('');
  if (r.latency) {
    out.push(`Warm completion (\`textDocument/completion\` after \`@<query>\`, ${r.latency[0].roundTrip.n} requests per kind after a warm-up of ${r.warmup}):`);
    out.push('');
    out.push('| query | round trip p50 | p95 | p99 | max | server p50 | server p95 | server p99 | items | incomplete |');
    out.push('|---|---|---|---|---|---|---|---|---|---|');
    for (const f of r.latency) {
      out.push(
        `| ${f.kind} | ${ms(f.roundTrip.p50)} | ${ms(f.roundTrip.p95)} | ${ms(f.roundTrip.p99)} | ${ms(f.roundTrip.max)} | ` +
          `${f.server ? `${ms(f.server.p50)} | ${ms(f.server.p95)} | ${ms(f.server.p99)}` : 'not reported | | '} | ${f.meanItems.toFixed(1)} | ${(f.incompleteShare * 100).toFixed(0)}% |`,
      );
    }
    out.push('');
  }
  out.push('| ratio | value |');
  out.push('|---|---|');
  out.push(`| cold ÷ floor (native / in process) | ${ratio(r.ratios.coldOverNativeFloor)} / ${ratio(r.ratios.coldOverInProcessFloor)} |`);
  out.push(`| naive ÷ warm completion (3-char p50) | ${ratio(r.ratios.naiveOverWarm)} |`);
  out.push(`| naive ÷ warm completion (1-char / 8-char p50) | ${ratio(r.ratios.naiveOverWarm1)} / ${ratio(r.ratios.naiveOverWarm8)} |`);
  out.push(`| restart speed-up (cold ÷ cached restart) | ${ratio(r.ratios.restartSpeedup)} |`);
  out.push(`| prepare ÷ decode+parse, 3 × 1 MB | ${ratio(r.ratios.prepare1OverDecode)} |`);
  out.push(`| prepare ÷ decode+parse, 3 × 10 MB | ${ratio(r.ratios.prepare10OverDecode)} |`);
  out.push('');
  if (r.coldProfile) {
    out.push(`Server CPU profile of the cold run (\`--profile\`, ${ms(r.coldProfile.totalMs)} busy, in \`${r.coldProfile.dir}\`), by self time:`);
    out.push('');
    out.push('| function | self | share |');
    out.push('|---|---|---|');
    for (const spot of r.coldProfile.spots) out.push(`| \`${spot.name}\` | ${ms(spot.selfMs)} | ${(spot.share * 100).toFixed(1)}% |`);
    out.push('');
  }
  out.push(`This size took ${(r.wallMs / 1000).toFixed(0)} s in all.`);
  out.push('');
  return out;
}
