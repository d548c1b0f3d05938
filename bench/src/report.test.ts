import { describe, expect, it } from 'vitest';
import { checkBudgets, checkStartGoals, renderResults, renderStart, withStartSection } from './report';
import type { LatencyFigure } from './server/measure';
import type { SizeResult } from './sizeRun';
import { percentiles } from './stats';
import type { StartResult } from './start';

function sizeWith(sessions: number, latency: LatencyFigure[]): SizeResult {
  // Only what the latency budgets read; the other budgets see no figures and say "not measured".
  return { sessions, latency, ratios: {}, floor: { runs: [], median: Number.NaN }, fastestFloor: { median: Number.NaN, by: 'native zstd' }, errors: [] } as unknown as SizeResult;
}

const figure = (kind: LatencyFigure['kind'], roundTrip: number[], server?: number[]): LatencyFigure => ({
  kind,
  roundTrip: percentiles(roundTrip),
  ...(server === undefined ? {} : { server: percentiles(server) }),
  meanItems: 50,
  incompleteShare: 1,
});

const latencyLines = (results: SizeResult[]) => checkBudgets(results).filter((line) => line.budget.startsWith('warm completion'));

describe('the peak RSS budget', () => {
  const rssLine = (cold: number, restart: number) =>
    checkBudgets([{ ...sizeWith(100_000, []), peakRss: { cold, restart } } as SizeResult]).find((line) => line.budget.startsWith('peak RSS'))!;

  it('is 300 decimal megabytes (286.1 MiB), on the larger of the cold and restarted runs', () => {
    expect(rssLine(299e6, 250e6).verdict).toBe('met');
    expect(rssLine(250e6, 300e6).verdict).toBe('met');
    // 298.6 MiB is under 300 MiB but over 300 MB.
    const over = rssLine(298.6 * 2 ** 20, 250 * 2 ** 20);
    expect(over.verdict).toContain('missed');
    expect(over.measured).toBe('298.6 MiB (313.1 MB)');
  });
});

describe('the cold index and restart budgets', () => {
  it('are against the medians of the runs, each run shown', () => {
    const result = { ...sizeWith(10_000, []), fastestFloor: { median: 800, by: 'zstd-wasm' }, coldRuns: [3100, 2900, 3000], restartRuns: [1000, 600, 590], ratios: { coldOverFloor: 3000 / 800, restartSpeedup: 3000 / 600 } } as unknown as SizeResult;
    const lines = checkBudgets([result]).filter((line) => line.budget.startsWith('cold index') || line.budget.startsWith('cached restart'));
    expect(lines.map((line) => [line.measured, line.verdict])).toEqual([
      ['3.75× (median 3000 ms of 3100, 2900, 3000 ms vs 800 ms)', '**missed** (1.88× the budget, 1400 ms over)'],
      ['5.00× (median 600 ms of 1000, 600, 590 ms vs median 3000 ms of 3100, 2900, 3000 ms)', 'met'],
    ]);
  });

  it('show a single run as it is', () => {
    const result = { ...sizeWith(100_000, []), fastestFloor: { median: 5000, by: 'native zstd' }, coldRuns: [9000], restartRuns: [2000], ratios: { coldOverFloor: 1.8, restartSpeedup: 4.5 } } as unknown as SizeResult;
    const lines = checkBudgets([result]).filter((line) => line.budget.startsWith('cold index') || line.budget.startsWith('cached restart'));
    expect(lines.map((line) => line.measured)).toEqual(['1.80× (9000 ms vs 5000 ms)', '4.50× (2000 ms vs 9000 ms)']);
  });
});

describe('latency budgets', () => {
  it('give the server side and the round trip each their own verdict, on the worst query kind', () => {
    const lines = latencyLines([
      sizeWith(10_000, [figure('empty', [4, 5, 6], [1, 1, 2]), figure('3-char', [9, 12, 30], [3, 4, 9])]),
    ]);
    expect(lines.map((line) => [line.budget, line.measured, line.verdict.startsWith('met') ? 'met' : 'missed'])).toEqual([
      ['warm completion p95 ≤ 10 ms at 10,000, server side (every query kind)', 'worst 9.00 ms (3-char)', 'met'],
      ['warm completion p95 ≤ 10 ms at 10,000, round trip (every query kind)', 'worst 30.00 ms (3-char)', 'missed'],
    ]);
    expect(lines[1]!.verdict).toContain('20.00 ms over');
  });

  it('says "not measured" server side when one query kind has no server figure', () => {
    const [serverSide, roundTrip] = latencyLines([sizeWith(100_000, [figure('empty', [1, 2, 3], [1, 1, 1]), figure('1-char', [2, 3, 4])])]);
    expect(serverSide!.verdict).toBe('not measured');
    expect(roundTrip!.verdict).toBe('met');
    expect(roundTrip!.budget).toContain('≤ 25 ms at 100,000');
  });
});

describe('start goals and section', () => {
  const figure = (median: number) => ({ runs: [median], median });
  const start = {
    store: { sessions: 20, bytes: { onDisk: 1, uncompressed: 2 }, root: '/tmp/x' },
    rounds: 1,
    node: figure(100),
    version: figure(120),
    cli: figure(300),
    cliCached: figure(150),
    stdio: { ...figure(200), requests: [1] },
    stdioCached: figure(140),
    ratios: { version: 1.2, cli: 3, stdio: 2, cliCached: 1.5, stdioCached: 1.4 },
    loadAverage: { start: 0, end: 0 },
    date: 'now',
    errors: [],
  } as unknown as StartResult;

  it('checks each ratio against its goal', () => {
    expect(checkStartGoals(start).map((line) => [line.measured, line.verdict.startsWith('met') ? 'met' : 'missed'])).toEqual([
      ['1.20× (120 ms vs 100 ms)', 'met'],
      ['3.00× (300 ms vs 100 ms)', 'missed'],
      ['2.00× (200 ms vs 100 ms)', 'met'],
    ]);
  });

  it('shows the CLI\'s second call, in the cache its first call left, as a figure beside the goals', () => {
    const section = renderStart(start, 'npm run bench -- --start-only').join('\n');
    expect(section).toContain('| the same, second call (the cache the first left): 1.50× `node -e 0` | 150 ms | 150 |');
    expect(section).toContain('| the same, second start (the cache the first server left): 1.40× `node -e 0` | 140 ms | 140 |');
  });

  it('shows the figures without a start-up-costly variable only when the environment set one', () => {
    expect(renderStart(start, 'x').join('\n')).not.toContain('NODE_EXTRA_CA_CERTS');
    const withVariable = { ...start, withoutVariables: { variables: ['NODE_EXTRA_CA_CERTS'], node: figure(30), cli: figure(180), ratio: 6 } };
    const section = renderStart(withVariable, 'x').join('\n');
    expect(section).toContain('| `node -e 0` → exit | 30.00 ms | 30 |');
    expect(section).toContain('| `dsh-session-ls candidates --root <store> --json` → exit: 6.00× `node -e 0` | 180 ms | 180 |');
  });

  it('replaces the start section of a results file and keeps the rest, or inserts it before the first size', () => {
    const section = renderStart(start, 'npm run bench -- --start-only');
    const sizes = '# Results\n\n## Budgets\n\nx\n\n## 1,000 sessions\n\nkept\n';
    const inserted = withStartSection(sizes, section);
    expect(inserted.indexOf('## Start')).toBeLessThan(inserted.indexOf('## 1,000 sessions'));
    expect(inserted).toContain('kept');
    const replaced = withStartSection(inserted.replace('3.00×', 'OLD'), section);
    expect(replaced).toBe(inserted);
    expect(replaced.match(/## Start/g)).toHaveLength(1);
  });

  it('speaks of the project only, and points at the bench\'s own definitions', () => {
    const withVariable = { ...start, withoutVariables: { variables: ['NODE_EXTRA_CA_CERTS'], node: figure(30), cli: figure(180), ratio: 6 } };
    const machine = { nproc: 2, cpuModel: 'x', memoryGb: 1, node: 'v20', os: 'Linux', zstd: 'z', date: 'now', loadAtStart: 0 };
    const document = renderResults(machine, [], { quick: false, seed: 1, command: 'npm run bench', totalMs: 1 }, withVariable);
    expect(document).toContain('NODE_EXTRA_CA_CERTS');
    expect(document).not.toMatch(/\bissues?\b|\bsession \d|benchmarks\.md/i);
    expect(document).toContain('what each figure means is in bench/README.md');
  });

  it('is part of a full run\'s results, after the budgets', () => {
    const machine = { nproc: 2, cpuModel: 'x', memoryGb: 1, node: 'v20', os: 'Linux', zstd: 'z', date: 'now', loadAtStart: 0 };
    const document = renderResults(machine, [], { quick: true, seed: 1, command: 'npm run bench -- --quick', totalMs: 1 }, start);
    expect(document.indexOf('## Start')).toBeGreaterThan(document.indexOf('## Budgets'));
    expect(document).toContain('| `--version` ≤ 1.5× `node -e 0` | 1.20× (120 ms vs 100 ms) | met |');
  });
});
