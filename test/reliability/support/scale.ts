/**
 * How big a reliability run is: small by default so `npm test` stays quick, the full counts
 * under `DSH_LONG=1`. Figures a run measures can be written out for RELIABILITY.md.
 */
import { appendFileSync } from 'node:fs';

/** True under `DSH_LONG=1`: the long variants (more fuzz runs, the full soak). */
export const LONG = process.env.DSH_LONG === '1';

/** `fast` normally, `long` under `DSH_LONG=1`. */
export function scaled(fast: number, long: number): number {
  return LONG ? long : fast;
}

/** Runs per fast-check property. */
export const FUZZ_RUNS = scaled(300, 20_000);

/**
 * Record one measured figure (a count, an RSS, a ratio) as a JSON line in the file named by
 * `DSH_RELIABILITY_FIGURES`, when set; RELIABILITY.md is written from these lines.
 */
export function recordFigure(area: string, name: string, value: number | string): void {
  const file = process.env.DSH_RELIABILITY_FIGURES;
  if (file === undefined || file === '') return;
  appendFileSync(file, JSON.stringify({ area, name, value, long: LONG, at: new Date().toISOString() }) + '\n');
}
