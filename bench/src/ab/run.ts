/**
 * `npm run bench -- --ab`: every speed device against the plain path, in one run. Builds the
 * server with every device on and once per device with it off (variants.ts), then alternates the
 * builds round by round on the figures a user feels (figures.ts), and prints and writes the table
 * (table.ts) to `--out` (default: the work folder's `ab.md`).
 *
 * Flags: --sizes 1000,10000 (dsh stores, dsh-framed zstd as the bench makes them; `none`: only
 * the start), --rounds N
 * (store rounds, default 3), --start-rounds N (default 9), --devices a,b (default every device
 * and `control`, a second build with every device on: its gain is the run's noise),
 * --requests N (warm completions per query kind, default 200), --seed N, --out FILE.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listTranscripts } from '../baselines/floor';
import { ensureStore, readExpectedLabels } from '../generate/store';
import { describeMachine } from '../machine';
import { makeQueries } from '../server/queries';
import { START_SESSIONS } from '../start';
import { codeCacheOnRestart, startRound, storeRound, type Samples, type StoreLaunch } from './figures';
import { abRows, renderAbTable } from './table';
import { buildVariant, CONTROL, knownDevices, SPEED_DEVICES, WITH_ALL, type DeviceFigure, type SpeedDevice, type Variant } from './variants';

interface AbOptions {
  sizes: number[];
  rounds: number;
  startRounds: number;
  devices: SpeedDevice[];
  requests: number;
  seed: number;
  out: string;
}

function parseAbArgs(argv: readonly string[], workDir: string): AbOptions {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  };
  const count = (flag: string, fallback: number): number => {
    const n = Number(value(flag) ?? fallback);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`bad ${flag} ${value(flag)}`);
    return n;
  };
  const known = knownDevices();
  const names = value('--devices')?.split(',') ?? [...SPEED_DEVICES.map((device) => device.name), CONTROL.name];
  const devices = names.map((name) => {
    if (name === CONTROL.name) return CONTROL;
    const device = SPEED_DEVICES.find((each) => each.name === name);
    if (!device || !known.includes(name)) throw new Error(`no speed device ${name} (${known.join(', ')})`);
    return device;
  });
  const sizes = value('--sizes') === 'none' ? [] : (value('--sizes') ?? '1000,10000').split(',').map(Number);
  if (sizes.some((n) => !Number.isSafeInteger(n) || n < 10)) throw new Error(`bad --sizes ${value('--sizes')}`);
  return {
    sizes,
    rounds: count('--rounds', 3),
    startRounds: count('--start-rounds', 9),
    devices,
    requests: count('--requests', 200),
    seed: count('--seed', 1),
    out: value('--out') ?? path.join(workDir, 'ab.md'),
  };
}

/** The builds measuring `figure`: the one with every device, then each device judged on it. */
function buildsFor(figure: DeviceFigure, options: AbOptions, variants: Map<string, Variant>): Variant[] {
  return [variants.get(WITH_ALL)!, ...options.devices.filter((device) => device.figures.includes(figure)).map((device) => variants.get(device.name)!)];
}

/** Runs `round` for each build, `rounds` times, the order reversed every other round so no build always follows the same one. */
async function alternate(builds: Variant[], rounds: number, samples: Map<string, Samples>, round: (variant: Variant, into: Samples) => Promise<void>): Promise<void> {
  if (builds.length < 2) return;
  for (let r = 0; r < rounds; r++) {
    for (const variant of r % 2 === 0 ? builds : [...builds].reverse()) await round(variant, samples.get(variant.name)!);
  }
}

export async function runAb(argv: readonly string[]): Promise<void> {
  const log = (message: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
  const workDir = path.join(os.tmpdir(), 'dsh-bench-work');
  mkdirSync(workDir, { recursive: true });
  const options = parseAbArgs(argv, workDir);
  const machine = describeMachine();
  const variants = new Map<string, Variant>();
  for (const name of [WITH_ALL, ...options.devices.map((device) => device.name)]) {
    log(`[ab] building ${name === WITH_ALL ? 'with every device' : `without ${name}`}`);
    variants.set(name, buildVariant(name));
  }
  const samples = new Map([...variants.keys()].map((name) => [name, new Map() as Samples]));
  // The stores live in the A/B's own folder: other bench runs may be generating the shared ones.
  const baseDir = path.join(os.tmpdir(), 'dsh-bench-ab');
  mkdirSync(baseDir, { recursive: true });

  const startBuilds = buildsFor('start', options, variants);
  if (startBuilds.length > 1) {
    const startStore = await ensureStore({ sessions: START_SESSIONS, seed: options.seed, zstdShare: 1, prepareLogs: false, baseDir, log });
    const startLabels = readExpectedLabels(startStore);
    // One untimed round: each build makes its code caches (as after an upgrade), and the page cache holds the bundles.
    for (const variant of startBuilds) await codeCacheOnRestart(variant.bin, startStore, startLabels, workDir);
    log(`[ab] start: ${options.startRounds} rounds of ${startBuilds.length} builds`);
    await alternate(startBuilds, options.startRounds, samples, (variant, into) => startRound(variant.bin, startStore, startLabels, workDir, into));
  }

  const storeBuilds = buildsFor('store', options, variants);
  for (const sessions of storeBuilds.length > 1 ? options.sizes : []) {
    const label = sessions >= 1000 ? `${sessions / 1000}k` : String(sessions);
    const store = await ensureStore({ sessions, seed: options.seed, prepareLogs: false, baseDir, log });
    listTranscripts(store.root).forEach((file) => readFileSync(file.path));
    const expected = readExpectedLabels(store);
    const queries = makeQueries(expected, store.cwds, options.seed, 60);
    const launch: StoreLaunch = { label, root: store.root, expected, completion: { queries, requests: options.requests }, workDir };
    log(`[ab] ${label}: ${options.rounds} rounds`);
    await alternate(storeBuilds, options.rounds, samples, (variant, into) => storeRound(variant.bin, launch, into));
  }

  const rows = options.devices.flatMap((device) => abRows(device.name, samples.get(WITH_ALL)!, samples.get(device.name)!));
  const text = [
    '# Speed devices, with and without',
    '',
    `Command: \`npm run bench -- ${argv.join(' ')}\`; machine: ${JSON.stringify(machine)}; load average at the end: ${os.loadavg().map((n) => n.toFixed(2)).join(', ')}.`,
    '',
    `Medians of ${options.rounds} rounds (the start: ${options.startRounds}), builds alternated. Gain: (without − with) ÷ without.`,
    '',
    renderAbTable(rows),
    '',
  ].join('\n');
  writeFileSync(options.out, text);
  writeFileSync(options.out.replace(/\.md$/, '') + '.json', JSON.stringify(Object.fromEntries([...samples].map(([name, figures]) => [name, Object.fromEntries(figures)])), null, 1));
  process.stdout.write(text);
  log(`[ab] wrote ${options.out}`);
}
