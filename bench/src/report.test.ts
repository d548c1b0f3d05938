import { describe, expect, it } from 'vitest';
import { checkBudgets } from './report';
import type { LatencyFigure } from './server/measure';
import type { SizeResult } from './sizeRun';
import { percentiles } from './stats';

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
