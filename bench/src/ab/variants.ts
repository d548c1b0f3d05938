/**
 * The builds an A/B compares: the server bundled as usual ("with") and once per speed device with
 * that device off ("without"), each by `server/esbuild.mjs --device-off NAME`, into the bench's
 * own output folder (`bench/dist/variants/<name>/bundle/`, never the shipped `server/dist/`).
 * Every build starts with an empty folder, so no code cache of an earlier build is found in it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../server/serverProcess';

/** What a device's A/B measures: the start figures or a dsh store's. */
export type DeviceFigure = 'start' | 'store';

/** One speed device: its name in server/esbuild.mjs's `SPEED_DEVICES`, and what a user feels of it. */
export interface SpeedDevice {
  name: string;
  figures: readonly DeviceFigure[];
}

/**
 * The devices and the figures each is judged on: the start devices on the start ratios; the
 * index's devices on the cold index, the restart and warm completion. The run-time V8 flags are a memory
 * device: the store figures show their peak RSS beside the start.
 */
export const SPEED_DEVICES: readonly SpeedDevice[] = [
  { name: 'lineSkim', figures: ['store'] },
  { name: 'zstdWasm', figures: ['start', 'store'] },
  { name: 'codeCache', figures: ['start'] },
  { name: 'runtimeV8Flags', figures: ['start', 'store'] },
  { name: 'quickSync', figures: ['start', 'store'] },
  { name: 'streamingJson', figures: ['store'] },
  { name: 'inlineIndex', figures: ['start'] },
];

/** The build with every device on. */
export const WITH_ALL = 'with';

/**
 * A second build with every device on, measured on every figure as if it were a device: its
 * "gain" is what the run's noise alone makes of the same code (an A/A comparison).
 */
export const CONTROL: SpeedDevice = { name: 'control', figures: ['start', 'store'] };

/** A built variant: its name (a device's, or {@link WITH_ALL}) and the entry to run with `node`. */
export interface Variant {
  name: string;
  bin: string;
}

/** The device names server/esbuild.mjs knows, read from its source (so a renamed device fails here, not mid-run). */
export function knownDevices(): string[] {
  const source = readFileSync(path.join(REPO_ROOT, 'server', 'esbuild.mjs'), 'utf8');
  const table = /export const SPEED_DEVICES = \{([^}]*)\}/.exec(source);
  if (!table) throw new Error('server/esbuild.mjs has no SPEED_DEVICES table');
  return [...table[1].matchAll(/^\s*(\w+):/gm)].map((match) => match[1]);
}

/** Builds `name` ({@link WITH_ALL}, {@link CONTROL} or a device, built without it) into the bench's variants folder. */
export function buildVariant(name: string): Variant {
  const outdir = path.join(REPO_ROOT, 'bench', 'dist', 'variants', name, 'bundle');
  rmSync(path.dirname(outdir), { recursive: true, force: true });
  const off = name === WITH_ALL || name === CONTROL.name ? [] : ['--device-off', name];
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'server', 'esbuild.mjs'), ...off, '--outdir', outdir], { stdio: 'inherit' });
  return { name, bin: path.join(outdir, 'main.js') };
}
