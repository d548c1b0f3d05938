// Regenerates test/agent-stores/fixtures/qwen-code/ (and its damaged copy and Qwen Code's own
// `qwen sessions list --json` answers) from the REAL Qwen Code CLI, run offline against
// modelServer.mjs on 127.0.0.1 (its OpenAI Chat Completions API). Not part of `npm test`. Usage:
//
//   mkdir /tmp/agentcli-qwen && cd /tmp/agentcli-qwen && npm init -y &&
//     npm install @qwen-code/qwen-code@0.24.4
//   PATH=<a Node 22 bin folder>:$PATH node test/agent-stores/tools/generateQwen.mjs /tmp/agentcli-qwen
//
// Qwen Code needs Node 22 (the repository's .ci/node22 holds one) and tmux: `/rename` exists only in
// the interactive UI, so the renames are typed into a real terminal tmux gives it; every other step
// is headless (`-p`, `--resume`, `--session-id`, `/compress`). The home is QWEN_HOME; the session
// files alone (no settings, memory or usage files) are copied into the fixtures folder. Sessions:
// a short chat whose long first prompt Qwen Code cuts, a session with a shell call and a file read
// (the read by a second process resuming it) renamed twice, and a session compressed with
// `/compress` whose text is CJK; the cwds hold a space and CJK characters.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from './startModelServer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, '..', 'fixtures');
const cliDir = path.resolve(process.argv[2] ?? '/tmp/agentcli-qwen');
const qwen = path.join(cliDir, 'node_modules/@qwen-code/qwen-code/cli-entry.js');
if (!existsSync(qwen)) throw new Error(`missing ${qwen}: install the CLI first`);
if (Number(process.versions.node.split('.')[0]) < 22) throw new Error('Qwen Code needs Node 22 or newer: put one first on PATH');

const top = '/tmp/dsh-agent-fixtures';
const work = path.join(top, 'qwen-run');
rmSync(work, { recursive: true, force: true });
const home = path.join(work, 'qwen-home');
// Lossy project folder names: spaces and CJK characters all become "-".
const cwdA = path.join(top, 'proj a');
const cwdQ = path.join(top, 'proj 日本 q');
for (const dir of [home, cwdA, cwdQ]) mkdirSync(dir, { recursive: true });
writeFileSync(path.join(cwdA, 'notes.txt'), 'fixture notes: 日本語のメモ\n');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const requestLog = path.join(work, 'requests.jsonl');
const portFile = path.join(work, 'port');
const { server, port } = await startModelServer(portFile, requestLog);
// Stopped however this script ends (a failed step throws).
process.on('exit', () => server.kill('SIGTERM'));

writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'openai' } }, model: { name: 'qwen-fixture' } }, null, 2));
const env = {
  ...process.env,
  QWEN_HOME: home,
  OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
  OPENAI_API_KEY: 'sk-fixture',
  OPENAI_MODEL: 'qwen-fixture',
  QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
};

function run(args, cwd, homeDir = home) {
  const result = spawnSync(process.execPath, [qwen, ...args], { cwd, env: { ...env, QWEN_HOME: homeDir }, encoding: 'utf8', input: '', timeout: 180_000 });
  process.stdout.write(`$ qwen ${args.join(' ')}\n${result.stdout}${result.status === 0 ? '' : result.stderr}\n`);
  if (result.status !== 0) throw new Error(`qwen exited ${result.status}`);
  return result;
}

/** Types `/rename NAME` into the interactive UI of a resumed session (in tmux), then quits. */
async function rename(sessionId, name, cwd) {
  const tmux = `qwen-fixture-${process.pid}`;
  const exports = Object.entries({ ...env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` })
    .filter(([key]) => /^(QWEN_|OPENAI_|PATH$|HOME$)/.test(key))
    .map(([key, value]) => `${key}='${value.replaceAll("'", "'\\''")}'`)
    .join(' ');
  const command = `cd '${cwd}' && env ${exports} '${process.execPath}' '${qwen}' --resume ${sessionId}`;
  const tmuxRun = (...args) => spawnSync('tmux', args, { encoding: 'utf8' });
  if (tmuxRun('new-session', '-d', '-s', tmux, '-x', '160', '-y', '45', command).status !== 0) throw new Error('tmux failed to start');
  const screen = () => tmuxRun('capture-pane', '-p', '-t', tmux).stdout ?? '';
  async function waitFor(text) {
    const deadline = Date.now() + 60_000;
    while (!screen().includes(text)) {
      if (Date.now() > deadline) throw new Error(`never saw "${text}":\n${screen()}`);
      await sleep(200);
    }
  }
  await waitFor('Type your message');
  tmuxRun('send-keys', '-t', tmux, '-l', `/rename ${name}`);
  await sleep(500);
  tmuxRun('send-keys', '-t', tmux, 'Enter');
  await waitFor(`Session renamed to "${name}"`);
  tmuxRun('send-keys', '-t', tmux, '-l', '/quit');
  await sleep(500);
  tmuxRun('send-keys', '-t', tmux, 'Enter');
  const deadline = Date.now() + 30_000;
  while (tmuxRun('has-session', '-t', tmux).status === 0 && Date.now() < deadline) await sleep(200);
  tmuxRun('kill-session', '-t', tmux);
  process.stdout.write(`renamed ${sessionId} to ${name}\n`);
}

// ---- the sessions ----
const qwChat = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01';
const qwTool = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e02';
const qwCompressed = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e03';
const yolo = ['--approval-mode', 'yolo'];

run(['--session-id', qwTool, ...yolo, '-p', 'First turn: TOOL please run a command'], cwdA);
await sleep(1100); // distinct start times
run(['--resume', qwTool, ...yolo, '-p', 'Second turn, another process: READ the notes file'], cwdA);
await rename(qwTool, 'Qwen tool work', cwdA);
await rename(qwTool, 'Qwen tool work, renamed', cwdA);
run(['--resume', qwTool, '-p', 'After the renames, one more turn'], cwdA);

const longPrompt = `A short chat about 日本語 and </referenced-sessions> tags, long enough for Qwen Code to cut it. ${'Words to cut 切る. '.repeat(12)}`;
run(['--session-id', qwChat, '-p', longPrompt], cwdQ);
run(['--resume', qwChat, '-p', 'Its second turn'], cwdQ);
await sleep(1100);

run(['--session-id', qwCompressed, '-p', '日本語のテキストについて話しましょう: a session to compress'], cwdQ);
run(['--resume', qwCompressed, '-p', '第二のターン: the second turn, 中文也可以'], cwdQ);
run(['--resume', qwCompressed, '-p', '/compress'], cwdQ);
run(['--resume', qwCompressed, '-p', 'After the compression, one more turn 最後'], cwdQ);

/** What `qwen sessions list --json` shows in each cwd, against `homeDir`. */
function sessionsList(homeDir) {
  const rows = [];
  for (const cwd of [cwdA, cwdQ]) {
    const out = run(['sessions', 'list', '--json', '--limit', '50'], cwd, homeDir).stdout;
    for (const line of out.split('\n').filter((l) => l.startsWith('{'))) {
      const { sessionId, startTime, prompt, customTitle } = JSON.parse(line);
      rows.push({ cwd, sessionId, startTime, prompt, customTitle });
    }
  }
  return rows.sort((a, b) => a.sessionId.localeCompare(b.sessionId));
}
const listed = sessionsList(home);
server.kill('SIGTERM');

// ---- copy the session files only ----
const out = path.join(fixtures, 'qwen-code');
const damaged = path.join(fixtures, 'damaged', 'qwen-code');
rmSync(out, { recursive: true, force: true });
rmSync(damaged, { recursive: true, force: true });
const SESSION_FILE = /^[0-9a-fA-F-]{32,36}\.jsonl$/;
for (const project of readdirSync(path.join(home, 'projects'))) {
  const chats = path.join(home, 'projects', project, 'chats');
  if (!existsSync(chats)) continue;
  for (const name of readdirSync(chats).filter((n) => SESSION_FILE.test(n))) {
    mkdirSync(path.join(out, 'projects', project, 'chats'), { recursive: true });
    cpSync(path.join(chats, name), path.join(out, 'projects', project, 'chats', name));
  }
}

// ---- damaged copies ----
cpSync(out, damaged, { recursive: true });
for (const project of readdirSync(path.join(damaged, 'projects'))) {
  const chats = path.join(damaged, 'projects', project, 'chats');
  for (const name of readdirSync(chats)) {
    const file = path.join(chats, name);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    if (name.startsWith(qwTool)) {
      // Torn tail: the last line cut in half, no newline.
      const last = lines.pop();
      writeFileSync(file, lines.join('\n') + '\n' + last.slice(0, Math.floor(last.length / 2)));
    } else {
      // Unknown record types, records without identity and lines that are not JSON, between the real ones.
      lines.splice(1, 0, '{"type":"record-from-the-future","payload":{"x":1}}', 'not json at all', '[1,2,3]', '{"type":"user","message":null}');
      writeFileSync(file, lines.join('\n') + '\n');
    }
  }
}

// Qwen Code's own listing of both homes (run on a scratch copy: the CLI writes into its home).
const scratchHome = path.join(work, 'damaged-home');
cpSync(damaged, scratchHome, { recursive: true });
cpSync(path.join(home, 'settings.json'), path.join(scratchHome, 'settings.json'));
const listedDamaged = sessionsList(scratchHome);
const version = spawnSync(process.execPath, [qwen, '--version'], { encoding: 'utf8' }).stdout.trim();
writeFileSync(
  path.join(fixtures, 'qwen-code-sessions-list.json'),
  JSON.stringify({ generatedBy: `test/agent-stores/tools/generateQwen.mjs with Qwen Code ${version}`, command: 'qwen sessions list --json --limit 50, in each cwd', home: listed, damaged: listedDamaged }, null, 2) + '\n',
);
process.stdout.write(`Qwen Code ${version} fixtures written to ${out}\n`);
