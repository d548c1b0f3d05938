// A measurement prototype, not part of the server: the part of a cached restart that no cache format,
// index design or answer writer can remove. A process that answers over LSP has to start Node, load
// the protocol library before it can answer `initialize`, and look up both transcript names of every
// session directory (dsh-session-store.md §1.4) to know which transcripts changed. This does exactly
// that and exits: the root and its project directories are listed, then a worker started first looks
// up the first `share` of the session directories (none: no worker) while the main thread loads the
// library and looks up the rest. No cache is read, nothing is compared, no answer is written, so any real restart is
// slower. bench/ANALYSIS.md ("Cached restart") has the figures.
// Usage: node bench/prototypes/restartBound.mjs <sessions root> [rounds=7] [share=0.5]
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const NAMES = ['session.jsonl', 'session.jsonl.zstd'];

/** Both names of each session directory looked up; how many are files. */
function lookUp(sessionDirs) {
  let files = 0;
  for (const dir of sessionDirs) {
    for (const name of NAMES) if (lstatSync(`${dir}/${name}`, { throwIfNoEntry: false })?.isFile()) files++;
  }
  return files;
}

/** The bound itself, in this process; `library` false leaves out loading vscode-languageserver. */
async function bound(root, share, library) {
  const sessionDirs = [];
  for (const project of readdirSync(root, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    for (const session of readdirSync(`${root}/${project.name}`, { withFileTypes: true })) {
      if (session.isDirectory()) sessionDirs.push(`${root}/${project.name}/${session.name}`);
    }
  }
  const split = Math.round(sessionDirs.length * share);
  const theirs =
    split === 0
      ? 0
      : new Promise((resolve, reject) =>
          new Worker(fileURLToPath(import.meta.url), { workerData: sessionDirs.slice(0, split) }).on('message', resolve).on('error', reject),
        );
  if (library) createRequire(fileURLToPath(new URL('../../server/package.json', import.meta.url)))('vscode-languageserver/node');
  const mine = lookUp(sessionDirs.slice(split));
  return mine + (await theirs);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Spawn to exit of `args` under this Node, in ms. */
function timed(args) {
  const start = performance.now();
  const run = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}`);
  return performance.now() - start;
}

if (!isMainThread) {
  parentPort.postMessage(lookUp(workerData));
} else if (process.argv[2] === '--bound') {
  const [root, share, library] = process.argv.slice(3);
  process.stdout.write(`${await bound(root, Number(share), library === 'library')}\n`);
} else {
  const [root, rounds = '7', share = '0.5'] = process.argv.slice(2);
  if (root === undefined) throw new Error('usage: node bench/prototypes/restartBound.mjs <sessions root> [rounds=7] [share=0.5]');
  const self = fileURLToPath(import.meta.url);
  const figures = { 'node -e 0': [], lookups: [], 'lookups + vscode-languageserver': [] };
  for (let round = 0; round < Number(rounds); round++) {
    figures['node -e 0'].push(timed(['-e', '0']));
    figures.lookups.push(timed([self, '--bound', root, share, 'none']));
    figures['lookups + vscode-languageserver'].push(timed([self, '--bound', root, share, 'library']));
  }
  for (const [name, runs] of Object.entries(figures)) {
    console.log(`${name}: median ${median(runs).toFixed(0)} ms (${runs.map((ms) => ms.toFixed(0)).join(', ')})`);
  }
}
