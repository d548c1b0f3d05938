// Regenerates test/agent-stores/fixtures/opencode* from the REAL opencode CLI, run offline against
// modelServer.mjs (its Chat Completions route, openaiChat.mjs) on 127.0.0.1. Not part of `npm test`.
// Usage (opencode's Bun binary needs no Node; this script needs Node 22.13+ for node:sqlite):
//
//   mkdir /tmp/agentcli-opencode && cd /tmp/agentcli-opencode && npm init -y &&
//     npm install opencode-ai@1.18.33
//   node22 test/agent-stores/tools/generateOpencode.mjs /tmp/agentcli-opencode
//
// opencode reads a provider from its config: a custom one through @ai-sdk/openai-compatible (bundled
// in the binary) with baseURL http://127.0.0.1:<port>/opencode/v1 (modelServer.mjs's route for it).
// Everything it writes goes under a private HOME and XDG folders in /tmp/dsh-opencode-fixtures.
// Sessions, in a cwd with a space and non-ASCII:
//   1. a short chat, titled by opencode's title generation (the model's answer);
//   2. `--title` given, a shell call, then a file read in a second process (`--session`);
//   3. CJK turns, compacted (POST /session/:id/summarize of `opencode serve`), renamed
//      (PATCH /session/:id), then one more turn.
// opencode leaves its database in WAL mode with the rows in `opencode.db-wal` (not checkpointed):
// fixtures/opencode/ keeps both files as the CLI left them; fixtures/opencode-checkpointed/ is the
// same database checkpointed into one file. Damaged copies go under fixtures/damaged/. Then
// checkOpencodeLive.mjs reads the work folder's home while the real opencode holds it open and writes.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { startModelServer } from './startModelServer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, '..', 'fixtures');
const cliDir = path.resolve(process.argv[2] ?? '/tmp/agentcli-opencode');
const bin = path.join(cliDir, 'node_modules/opencode-linux-x64/bin/opencode');
if (!existsSync(bin)) throw new Error(`missing ${bin}: install opencode-ai first`);

const work = '/tmp/dsh-opencode-fixtures';
rmSync(work, { recursive: true, force: true });
const cwd = path.join(work, 'proj ü 日本');
const xdg = (name) => path.join(work, 'xdg', name);
for (const dir of [cwd, path.join(work, 'home'), xdg('data'), path.join(xdg('config'), 'opencode'), xdg('cache'), xdg('state')]) mkdirSync(dir, { recursive: true });
writeFileSync(path.join(cwd, 'notes.txt'), 'fixture notes: read by the file tool\n');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const portFile = path.join(work, 'port');
const { server, port } = await startModelServer(portFile, path.join(work, 'requests.jsonl'));

writeFileSync(
  path.join(xdg('config'), 'opencode', 'opencode.json'),
  JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    model: 'fixture/gpt-fixture',
    small_model: 'fixture/gpt-fixture',
    autoupdate: false,
    share: 'disabled',
    provider: {
      fixture: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fixture',
        options: { baseURL: `http://127.0.0.1:${port}/opencode/v1`, apiKey: 'sk-fixture' },
        models: { 'gpt-fixture': { name: 'GPT Fixture' } },
      },
    },
  }),
);
const env = {
  ...process.env,
  HOME: path.join(work, 'home'),
  XDG_DATA_HOME: xdg('data'),
  XDG_CONFIG_HOME: xdg('config'),
  XDG_CACHE_HOME: xdg('cache'),
  XDG_STATE_HOME: xdg('state'),
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  // opencode takes its directory from PWD when set, not from the process's working directory.
  PWD: cwd,
};
const home = path.join(xdg('data'), 'opencode');

/** One `opencode run`; the message's words as separate arguments (one quoted argument is stored with its quotes). */
function run(args) {
  const result = spawnSync(bin, ['run', ...args], { cwd, env, encoding: 'utf8', input: '', timeout: 180_000 });
  process.stdout.write(`$ opencode run ${args.join(' ')}\n${result.stdout}${result.status === 0 ? '' : result.stderr}\n`);
  if (result.status !== 0) throw new Error(`opencode exited ${result.status}`);
}

/** The id of the session created last (`opencode session list` prints nothing without a terminal). */
function newestSession() {
  const db = new DatabaseSync(path.join(home, 'opencode.db'), { readOnly: true });
  try {
    return db.prepare('SELECT id FROM session ORDER BY time_created DESC LIMIT 1').get().id;
  } finally {
    db.close();
  }
}

// 1. A short chat; opencode's title agent names it.
run(['hello,', 'a', 'short', 'chat', 'about', 'fixtures']);
// 2. An explicit title; a shell call; then a file read by a second process.
run(['--title', 'Tool and file read', 'please', 'run', 'TOOL', 'now']);
const toolSession = newestSession();
run(['--session', toolSession, 'READ', path.join(cwd, 'notes.txt')]);
// 3. CJK turns, compacted and renamed through `opencode serve`, then one more turn.
run(['日本語で話しましょう、圧縮のテスト']);
const cjkSession = newestSession();
run(['--session', cjkSession, '二番目の質問です']);
const serve = spawn(bin, ['serve', '--port', '0', '--hostname', '127.0.0.1'], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
let served = '';
serve.stdout.on('data', (chunk) => (served += chunk));
const deadline = Date.now() + 60_000;
while (!/http:\/\/127\.0\.0\.1:\d+/.test(served) && Date.now() < deadline) await sleep(100);
const api = /http:\/\/127\.0\.0\.1:\d+/.exec(served)[0];
const post = (url, method, body) => fetch(`${api}${url}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.text());
console.log('summarize:', await post(`/session/${cjkSession}/summarize`, 'POST', { providerID: 'fixture', modelID: 'gpt-fixture' }));
console.log('rename:', (await post(`/session/${cjkSession}`, 'PATCH', { title: '圧縮された 日本語 session' })).slice(0, 200));
serve.kill('SIGTERM');
await new Promise((resolve) => (serve.exitCode !== null ? resolve() : serve.once('exit', resolve)));
run(['--session', cjkSession, '圧縮の後の質問']);
server.kill();

// The database as opencode left it (rows in the WAL), and a checkpointed copy.
const out = path.join(fixtures, 'opencode');
const checkpointed = path.join(fixtures, 'opencode-checkpointed');
const damaged = path.join(fixtures, 'damaged');
for (const dir of [out, checkpointed]) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}
copyFileSync(path.join(home, 'opencode.db'), path.join(out, 'opencode.db'));
copyFileSync(path.join(home, 'opencode.db-wal'), path.join(out, 'opencode.db-wal'));
const scratch = path.join(work, 'checkpoint');
mkdirSync(scratch);
copyFileSync(path.join(out, 'opencode.db'), path.join(scratch, 'opencode.db'));
copyFileSync(path.join(out, 'opencode.db-wal'), path.join(scratch, 'opencode.db-wal'));
const db = new DatabaseSync(path.join(scratch, 'opencode.db'));
db.exec('PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE; VACUUM;');
db.close();
copyFileSync(path.join(scratch, 'opencode.db'), path.join(checkpointed, 'opencode.db'));

// Damage: the WAL cut mid-frame (a writer killed), garbage for a database, a database file cut short.
const wal = readFileSync(path.join(out, 'opencode.db-wal'));
const whole = readFileSync(path.join(checkpointed, 'opencode.db'));
const damage = {
  'opencode-torn-wal': { 'opencode.db': readFileSync(path.join(out, 'opencode.db')), 'opencode.db-wal': wal.subarray(0, wal.length - 3000) },
  'opencode-garbage': { 'opencode.db': Buffer.from('this is not a database\n'.repeat(300)) },
  'opencode-truncated': { 'opencode.db': whole.subarray(0, Math.floor(whole.length / 2)) },
};
for (const [name, files] of Object.entries(damage)) {
  const dir = path.join(damaged, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [file, bytes] of Object.entries(files)) writeFileSync(path.join(dir, file), bytes);
}
const version = spawnSync(bin, ['--version'], { env, encoding: 'utf8' }).stdout.trim();
console.log(`opencode ${version}: sessions ${newestSession()} (last), tool session ${toolSession}, compacted ${cjkSession}`);
