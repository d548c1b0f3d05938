// Checks the opencode store against the REAL opencode holding its database open and writing: after
// generateOpencode.mjs (which leaves its work folder in /tmp/dsh-opencode-fixtures), starts
// `opencode serve` on that home, reads it with the built CLI (candidates, prepare), has opencode
// write a new session through `opencode run --attach`, reads again, and compares the home's files
// (names, bytes, modification times) before and after each of our reads. Not part of `npm test`.
// Usage, after `npm run build`, on Node 22.13 or newer:
//
//   node22 test/agent-stores/tools/checkOpencodeLive.mjs /tmp/agentcli-opencode
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from './startModelServer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.resolve(here, '..', '..', '..', 'server', 'bin', 'dsh-session-ls.js');
const bin = path.join(path.resolve(process.argv[2] ?? '/tmp/agentcli-opencode'), 'node_modules/opencode-linux-x64/bin/opencode');
const work = '/tmp/dsh-opencode-fixtures';
const cwd = path.join(work, 'proj ü 日本');
if (!existsSync(bin) || !existsSync(cwd)) throw new Error('run generateOpencode.mjs first');
const xdg = (name) => path.join(work, 'xdg', name);
const env = { ...process.env, HOME: path.join(work, 'home'), XDG_DATA_HOME: xdg('data'), XDG_CONFIG_HOME: xdg('config'), XDG_CACHE_HOME: xdg('cache'), XDG_STATE_HOME: xdg('state'), PWD: cwd };
const home = path.join(xdg('data'), 'opencode');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The model server again, on a new port the config names.
const portFile = path.join(work, 'port-live');
const { server: model, port } = await startModelServer(portFile, path.join(work, 'requests-live.jsonl'));
const configFile = path.join(xdg('config'), 'opencode', 'opencode.json');
writeFileSync(configFile, readFileSync(configFile, 'utf8').replace(/127\.0\.0\.1:\d+\/(?:opencode\/)?v1/, `127.0.0.1:${port}/opencode/v1`));
const serve = spawn(bin, ['serve', '--port', '0', '--hostname', '127.0.0.1'], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
let served = '';
serve.stdout.on('data', (chunk) => (served += chunk));
while (!/http:\/\/127\.0\.0\.1:\d+/.test(served)) await sleep(100);
const api = /http:\/\/127\.0\.0\.1:\d+/.exec(served)[0];

/** The home's files: name → modification time and SHA-256. */
function state() {
  const files = readdirSync(home).filter((name) => statSync(path.join(home, name)).isFile());
  return JSON.stringify(files.map((name) => [name, statSync(path.join(home, name)).mtimeMs, createHash('sha256').update(readFileSync(path.join(home, name))).digest('hex')]));
}

function ours(args, input) {
  const result = spawnSync(process.execPath, [cli, ...args, '--agents', 'opencode', '--opencode-home', home], { encoding: 'utf8', input, env: { ...process.env, XDG_CACHE_HOME: path.join(work, 'our-cache') } });
  if (result.status !== 0) throw new Error(result.stderr);
  return result.stdout;
}

function readsLeaveHomeAsItWas(what) {
  const before = state();
  const rows = JSON.parse(ours(['candidates', '--json']));
  const after = state();
  if (before !== after) throw new Error(`${what}: our read changed the home`);
  console.log(`${what}: listed ${rows.map((row) => row.label).join(' | ')}; the home is unchanged`);
  return rows;
}

try {
  console.log(`opencode serve holds ${home}: ${readdirSync(home).join(' ')}`);
  readsLeaveHomeAsItWas('opencode idle');
  spawnSync(bin, ['run', '--attach', api, '--title', 'Live while open', 'written', 'while', 'opencode', 'holds', 'the', 'database'], { cwd, env, input: '', timeout: 120_000 });
  const rows = readsLeaveHomeAsItWas('after opencode wrote, still holding it');
  const live = rows.find((row) => row.label === 'Live while open');
  if (live === undefined) throw new Error('the session opencode just wrote was not listed');
  const before = state();
  const prepared = ours(['prepare', '-'], `see ${live.mention}\n`);
  if (state() !== before) throw new Error('prepare changed the home');
  console.log(`prepare: ${/"conversation":.*/.exec(prepared)[0].slice(0, 200)}; the home is unchanged`);
} finally {
  serve.kill('SIGTERM');
  model.kill();
}
