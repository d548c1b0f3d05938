/**
 * The A/B's table: for each device and each figure it is judged on, the median with it and
 * without it over the same rounds (for a CPU time, the mean: /proc counts it in 10 ms ticks, which
 * a median keeps and a mean averages out), and its gain: the share of the plain path's figure the device
 * saves, (without − with) ÷ without. A device earns its keep at a gain of at least
 * {@link KEEP_GAIN} on one of its figures (a CPU figure or a peak RSS counts as well as a time).
 */
import { median } from '../stats';
import type { Samples } from './figures';

/** The least gain that keeps a device. */
export const KEEP_GAIN = 0.1;

function middle(figure: string, values: readonly number[]): number {
  return figure.endsWith('CPU') ? values.reduce((sum, n) => sum + n, 0) / values.length : median(values);
}

/** One row of the table. */
export interface AbRow {
  device: string;
  figure: string;
  with: number;
  without: number;
  /** (without − with) ÷ without. */
  gain: number;
  rounds: number;
}

/** The rows of `device`: each figure both builds measured, in the order the "with" build measured them. */
export function abRows(device: string, withAll: Samples, without: Samples): AbRow[] {
  const rows: AbRow[] = [];
  for (const [figure, on] of withAll) {
    const off = without.get(figure);
    if (off === undefined || off.length === 0 || on.length === 0) continue;
    const a = middle(figure, on);
    const b = middle(figure, off);
    rows.push({ device, figure, with: a, without: b, gain: b === 0 ? 0 : (b - a) / b, rounds: Math.min(on.length, off.length) });
  }
  return rows;
}

/** Whether a device's rows earn it its keep. */
export function earnsKeep(rows: readonly AbRow[]): boolean {
  return rows.some((row) => row.gain >= KEEP_GAIN);
}

function value(figure: string, n: number): string {
  if (figure.includes('RSS')) return `${n.toFixed(1)} MiB`;
  return n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(2)} ms`;
}

/** The table as Markdown, a verdict line per device after its rows. */
export function renderAbTable(rows: readonly AbRow[]): string {
  const lines = ['| device | figure | with | without | gain |', '|---|---|---|---|---|'];
  const devices = [...new Set(rows.map((row) => row.device))];
  for (const device of devices) {
    const own = rows.filter((row) => row.device === device);
    for (const row of own) lines.push(`| ${row.device} | ${row.figure} | ${value(row.figure, row.with)} | ${value(row.figure, row.without)} | ${(100 * row.gain).toFixed(1)} % |`);
    lines.push(`| ${device} | **verdict** | | | ${earnsKeep(own) ? 'keep' : `**under ${100 * KEEP_GAIN} %**`} |`);
  }
  return lines.join('\n');
}
