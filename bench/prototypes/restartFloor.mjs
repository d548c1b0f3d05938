// A measurement prototype, not part of the server: the least a correct cached restart does, as plain
// Node, against our own CLI's restart on the same store and cache. The floor reads and parses the
// index cache (one JSON line per transcript), looks up every transcript (the root and each project
// directory listed, both transcript names of each session directory looked up, as dsh-session-store.md
// §1.4 asks), checks each identity against the cache, and writes the listing as one JSON answer.
// It does not validate, rank, label or watch anything, so it is below any real restart.
// bench/ANALYSIS.md ("Cached restart") has the figures.
// Usage: node bench/prototypes/restartFloor.mjs <sessions root> [rounds=5]
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const NAMES = ['session.jsonl', 'session.jsonl.zstd'];

/** Every transcript's identity, by root-relative key. */
function lookUp(root) {
  const found = [];
  for (const project of readdirSync(root, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    const projectPath = `${root}/${project.name}`;
    for (const session of readdirSync(projectPath, { withFileTypes: true })) {
      if (!session.isDirectory()) continue;
      for (const name of NAMES) {
        const stats = lstatSync(`${projectPath}/${session.name}/${name}`, { throwIfNoEntry: false });
        if (stats?.isFile()) found.push([`${project.name}/${session.name}/${name}`, stats.size, stats.mtimeMs, stats.ctimeMs, stats.ino, stats.dev]);
      }
    }
  }
  return found;
}

/** The floor itself: `lookups` 'main' makes them after the cache, 'worker' on a thread meanwhile. */
async function floor(root, cacheFile, lookups) {
  const looked =
    lookups === 'worker'
      ? new Promise((resolve, reject) => new Worker(fileURLToPath(import.meta.url), { workerData: root }).on('message', resolve).on('error', reject))
      : undefined;
  const cache = new Map();
  for (const line of readFileSync(cacheFile, 'utf8').split('\n')) {
    if (!line.startsWith('{"key"')) continue;
    const entry = JSON.parse(line);
    cache.set(entry.key, entry);
  }
  const found = looked ? await looked : lookUp(root);
  const rows = [];
  for (const [key, size, mtimeMs, ctimeMs, ino, dev] of found) {
    const cached = cache.get(key);
    const identity = cached?.identity;
    if (!identity || identity.size !== size || identity.mtimeMs !== mtimeMs || identity.ctimeMs !== ctimeMs || identity.ino !== ino || identity.dev !== dev) {
      throw new Error(`${key} changed since the cache was written: the floor needs an unchanged store`);
    }
    const { header, title } = cached.summary;
    rows.push({ label: title ?? header.id, uri: `dsh-session:${Buffer.from(header.id).toString('base64url')}`, cwd: header.cwd, id: header.id });
  }
  rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  writeSync(1, JSON.stringify({ jsonrpc: '2.0', id: 1, result: rows }));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Wall time of one child process, spawn to exit (ms). */
function timed(args, env) {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`${args.join(' ')} failed: ${run.stderr}`);
  return performance.now() - started;
}

async function main() {
  const [root, rounds = '5'] = process.argv.slice(2);
  if (!root) throw new Error('usage: node bench/prototypes/restartFloor.mjs <sessions root> [rounds=5]');
  const here = path.dirname(fileURLToPath(import.meta.url));
  const bin = path.join(here, '..', '..', 'server', 'bin', 'dsh-session-ls.js');
  const cacheHome = mkdtempSync(path.join(os.tmpdir(), 'dsh-restart-floor-'));
  try {
    const env = { XDG_CACHE_HOME: cacheHome };
    // The CLI writes the index cache after its first answer.
    execFileSync(process.execPath, [bin, 'candidates', '--root', root, '--json'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 256 * 1024 * 1024 });
    const cacheDir = path.join(cacheHome, 'dsh-session-ls');
    const cacheFile = path.join(cacheDir, readdirSync(cacheDir).find((name) => name.endsWith('.jsonl')));
    const self = fileURLToPath(import.meta.url);
    const commands = {
      'node -e 0': ['-e', '0'],
      'floor, lookups after the cache': [self, '--floor', root, cacheFile, 'main'],
      'floor, lookups in a worker meanwhile': [self, '--floor', root, cacheFile, 'worker'],
      'dsh-session-ls candidates --json (cached restart)': [bin, 'candidates', '--root', root, '--json'],
    };
    const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
    for (let round = 0; round <= Number(rounds); round++) {
      for (const [name, args] of Object.entries(commands)) {
        const ms = timed(args, env);
        if (round > 0) times[name].push(ms); // round 0 warms the page cache
      }
    }
    for (const [name, values] of Object.entries(times)) {
      console.log(`${name}: median ${median(values).toFixed(0)} ms (${values.map((ms) => ms.toFixed(0)).join(', ')})`);
    }
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
}

if (!isMainThread) parentPort.postMessage(lookUp(workerData));
else if (process.argv[2] === '--floor') await floor(process.argv[3], process.argv[4], process.argv[5]);
else await main();
