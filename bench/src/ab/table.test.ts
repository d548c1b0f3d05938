import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../server/serverProcess';
import type { Samples } from './figures';
import { abRows, earnsKeep, renderAbTable } from './table';
import { knownDevices, SPEED_DEVICES } from './variants';

const samples = (entries: Record<string, number[]>): Samples => new Map(Object.entries(entries));

describe('the speed devices A/B table', () => {
  it('compares the medians of the figures both builds measured, as the share of the plain path saved', () => {
    const withAll = samples({ '1k cold': [90, 100, 300], 'start: CLI': [200, 210, 220] });
    const without = samples({ '1k cold': [120, 125, 400] });
    const rows = abRows('lineSkim', withAll, without);
    expect(rows).toEqual([{ device: 'lineSkim', figure: '1k cold', with: 100, without: 125, gain: 0.2, rounds: 3 }]);
    expect(earnsKeep(rows)).toBe(true);
  });

  it('takes the mean of CPU times, which /proc counts in 10 ms ticks', () => {
    const [row] = abRows('codeCache', samples({ 'start: CLI, CPU': [180, 180, 190, 190, 190] }), samples({ 'start: CLI, CPU': [200, 200, 200, 210, 210] }));
    expect(row!.with).toBeCloseTo(186);
    expect(row!.without).toBeCloseTo(204);
  });

  it('keeps a device only at a gain of 10 % or more on one of its figures', () => {
    const row = (gain: number) => ({ device: 'd', figure: 'f', with: 1, without: 1, gain, rounds: 3 });
    expect(earnsKeep([row(0.099), row(-0.3)])).toBe(false);
    expect(earnsKeep([row(0.02), row(0.1)])).toBe(true);
    expect(earnsKeep([])).toBe(false);
  });

  it('prints a row per figure and a verdict per device', () => {
    const text = renderAbTable([
      { device: 'quickSync', figure: 'start: stdio', with: 250, without: 260, gain: 10 / 260, rounds: 9 },
      { device: 'quickSync', figure: '10k cold, peak RSS (MiB)', with: 99.14, without: 99.2, gain: 0.0006, rounds: 3 },
    ]);
    expect(text.split('\n')).toEqual([
      '| device | figure | with | without | gain |',
      '|---|---|---|---|---|',
      '| quickSync | start: stdio | 250 ms | 260 ms | 3.8 % |',
      '| quickSync | 10k cold, peak RSS (MiB) | 99.1 MiB | 99.2 MiB | 0.1 % |',
      '| quickSync | **verdict** | | | **under 10 %** |',
    ]);
  });

  it('names only devices the server build knows, each owned by a module that reads its constant', () => {
    const known = knownDevices();
    expect(SPEED_DEVICES.map((device) => device.name).sort()).toEqual([...known].sort());
    const esbuild = readFileSync(path.join(REPO_ROOT, 'server', 'esbuild.mjs'), 'utf8');
    for (const name of known) {
      const [, constant, owner] = new RegExp(`^\\s*${name}: '(\\w+)', // ([\\w/]+\\.ts)`, 'm').exec(esbuild)!;
      expect(readFileSync(path.join(REPO_ROOT, 'server', 'src', owner), 'utf8')).toContain(`typeof ${constant} === 'undefined'`);
    }
  });
});
