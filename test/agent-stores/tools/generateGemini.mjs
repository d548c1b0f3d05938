// Regenerates test/agent-stores/fixtures/gemini/ (and damaged/gemini/) from the REAL Gemini CLI, run
// offline against modelServer.mjs on 127.0.0.1. Not part of `npm test` (CI has no such CLI). Usage:
//
//   mkdir /tmp/agentcli-gemini && cd /tmp/agentcli-gemini && npm init -y &&
//     npm install @google/gemini-cli@0.61.0
//   node test/agent-stores/tools/generateGemini.mjs /tmp/agentcli-gemini
//
// The CLI is pointed at the model server by GOOGLE_GEMINI_BASE_URL with GEMINI_API_KEY, and at a
// fresh home by GEMINI_CLI_HOME (its home is then $GEMINI_CLI_HOME/.gemini). Tools run with
// `--approval-mode yolo`. Compression is the CLI's own: a turn reports a prompt of 900,000 tokens
// (BIG), so the next request compresses first. Titles are the CLI's own too: `--list-sessions`
// asks the model for a summary of the newest untitled session of the folder. Work happens under
// /tmp/dsh-agent-fixtures-gemini (fixed, so cwds are stable), then the session files, the project
// registry (projects.json) and the folders' `.project_root` markers alone are copied. What the
// CLI's own `--list-sessions` shows (label and folder of each session) goes to gemini-list.json.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from './startModelServer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, '..', 'fixtures');
const cliDir = path.resolve(process.argv[2] ?? '/tmp/agentcli-gemini');
const geminiJs = path.join(cliDir, 'node_modules/@google/gemini-cli/bundle/gemini.js');
if (!existsSync(geminiJs)) throw new Error(`missing ${geminiJs}: install the CLI first`);

const work = '/tmp/dsh-agent-fixtures-gemini';
rmSync(work, { recursive: true, force: true });
const userHome = path.join(work, 'user');
const geminiHome = path.join(userHome, '.gemini');
// Session retention is off: a resume in a later minute first writes a file holding only the CLI's
// context under the same session id, and the retention cleanup deletes such a file together with
// every other file of that id (the real session too).
// Lossy project folder names: the slug keeps ASCII letters and digits only ("proj 日本" → "proj").
const cwdA = path.join(work, 'proj a');
const cwdJ = path.join(work, 'proj 日本');
const cwdC = path.join(work, 'proj c');
for (const dir of [geminiHome, cwdA, cwdJ, cwdC]) mkdirSync(dir, { recursive: true });
writeFileSync(path.join(cwdA, 'notes.txt'), 'Notes for the fixture: the parser keeps 日本語 text.\n');
writeFileSync(
  path.join(geminiHome, 'settings.json'),
  JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, general: { disableAutoUpdate: true, sessionRetention: { enabled: false } }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false } }),
);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const requestLog = path.join(work, 'requests.jsonl');
const portFile = path.join(work, 'port');
const { server, port } = await startModelServer(portFile, requestLog);
const env = {
  ...process.env,
  GEMINI_CLI_HOME: userHome,
  GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${port}`,
  GEMINI_API_KEY: 'fixture',
  GEMINI_CLI_TRUST_WORKSPACE: 'true',
  NO_COLOR: '1',
  // One process (no relaunch with more memory), so that killing it kills the CLI.
  GEMINI_CLI_NO_RELAUNCH: 'true',
};

function gemini(args, cwd) {
  const result = spawnSync(process.execPath, [geminiJs, ...args], { cwd, env, encoding: 'utf8', input: '', timeout: 120_000 });
  process.stdout.write(`$ gemini ${args.join(' ')}\n${result.stdout}${result.status === 0 ? '' : result.stderr}\n`);
  if (result.status !== 0) throw new Error(`gemini exited ${result.status}`);
  return result;
}

/** Start a turn the model server stalls on, then kill the CLI mid-reply: an interrupted turn. */
async function interrupted(args, cwd) {
  const before = existsSync(requestLog) ? readFileSync(requestLog, 'utf8').length : 0;
  const child = spawn(process.execPath, [geminiJs, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'ignore'] });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !readFileSync(requestLog, 'utf8').slice(before).includes('STALL')) await sleep(100);
  await sleep(1500);
  child.kill('SIGINT');
  await sleep(1500);
  if (child.exitCode === null) child.kill('SIGKILL');
  await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)));
}

const gmTitled = 'a1000001-7a1e-4c5d-9b2a-3f4e5d6c7b01';
const gmShort = 'b2000002-7a1e-4c5d-9b2a-3f4e5d6c7b02';
const gmCompressed = 'c3000003-7a1e-4c5d-9b2a-3f4e5d6c7b03';
const gmInterrupted = 'd4000004-7a1e-4c5d-9b2a-3f4e5d6c7b04';
const yolo = ['--approval-mode', 'yolo'];

// A session with a shell call and a file read, each turn a new process resuming it; then titled.
gemini(['-p', 'Hello gemini, first turn about the parser', '--session-id', gmTitled], cwdA);
gemini([...yolo, '-p', 'Second turn: TOOL please run a command', '--resume', gmTitled], cwdA);
gemini([...yolo, '-p', 'Third turn: READ the notes, please', '--resume', gmTitled], cwdA);
gemini(['--list-sessions'], cwdA);
// A short chat in the same folder, left untitled (no later run in that folder).
gemini(['-p', 'A short chat:\n  two lines, "quoted" and </referenced-sessions> tags', '--session-id', gmShort], cwdA);
// Compressed, with CJK text, in a folder whose name has a space and CJK characters.
gemini(['-p', '日本語のセッション: compress me later', '--session-id', gmCompressed], cwdJ);
gemini([...yolo, '-p', 'Second turn: BIG TOOL please, 日本語で', '--resume', gmCompressed], cwdJ);
gemini(['-p', 'After the compression, 日本語 once more', '--resume', gmCompressed], cwdJ);
await interrupted(['-p', 'Start a long answer STALL', '--session-id', gmInterrupted], cwdC);

// What `--list-sessions` shows in each folder, run on a copy of the home (listing titles the newest
// untitled session of the folder; the server now answers such requests empty, so none is titled).
await fetch(`http://127.0.0.1:${port}/fixture/summaries-off`, { method: 'POST' });
const listHome = path.join(work, 'list-user');
cpSync(userHome, listHome, { recursive: true });
const labels = {};
for (const cwd of [cwdA, cwdJ, cwdC]) {
  const result = spawnSync(process.execPath, [geminiJs, '--list-sessions'], { cwd, env: { ...env, GEMINI_CLI_HOME: listHome }, encoding: 'utf8', input: '', timeout: 120_000 });
  process.stdout.write(`$ gemini --list-sessions (in ${cwd})\n${result.stdout}\n`);
  for (const line of result.stdout.split('\n')) {
    const match = /^\s+\d+\. (.*) \([^()]*\) \[([^\]]+)\]$/.exec(line);
    if (match) labels[match[2]] = { label: match[1], cwd };
  }
}
server.kill('SIGTERM');

// ---- copy the session files, the project registry and the ownership markers only ----
const out = path.join(fixtures, 'gemini');
rmSync(out, { recursive: true, force: true });
cpSync(path.join(geminiHome, 'projects.json'), path.join(out, 'projects.json'));
for (const slug of readdirSync(path.join(geminiHome, 'tmp'))) {
  const from = path.join(geminiHome, 'tmp', slug);
  const marker = path.join(from, '.project_root');
  if (!existsSync(marker)) continue;
  cpSync(marker, path.join(out, 'tmp', slug, '.project_root'));
  const chats = path.join(from, 'chats');
  if (!existsSync(chats)) continue;
  for (const name of readdirSync(chats)) if (name.startsWith('session-') && name.endsWith('.jsonl')) cpSync(path.join(chats, name), path.join(out, 'tmp', slug, 'chats', name));
}

// ---- damaged copies: no projects.json (cwds from the markers), one marker gone, damaged lines ----
const damaged = path.join(fixtures, 'damaged', 'gemini');
rmSync(damaged, { recursive: true, force: true });
cpSync(path.join(out, 'tmp'), path.join(damaged, 'tmp'), { recursive: true });
rmSync(path.join(damaged, 'tmp', 'proj-c', '.project_root'));
for (const slug of readdirSync(path.join(damaged, 'tmp'))) {
  const chats = path.join(damaged, 'tmp', slug, 'chats');
  if (!existsSync(chats)) continue;
  for (const name of readdirSync(chats)) {
    const file = path.join(chats, name);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    if (lines.some((line) => line.includes(gmTitled))) {
      // Torn tail: the last line cut in half, no newline.
      const last = lines.pop();
      writeFileSync(file, lines.join('\n') + '\n' + last.slice(0, Math.floor(last.length / 2)));
    } else {
      // Unknown records and lines that are not JSON objects, between the real ones.
      lines.splice(1, 0, '{"type":"record-from-the-future","payload":{"x":1}}', 'not json at all', '[1,2,3]', '{"id":7,"type":"user"}', '{"$set":null}');
      writeFileSync(file, lines.join('\n') + '\n');
    }
  }
}
writeFileSync(path.join(fixtures, 'gemini-list.json'), JSON.stringify(labels, null, 2) + '\n');
const version = spawnSync(process.execPath, [geminiJs, '--version'], { env, encoding: 'utf8' }).stdout.trim();
writeFileSync(
  path.join(fixtures, 'GENERATED-gemini.txt'),
  `Generated by test/agent-stores/tools/generateGemini.mjs with Gemini CLI ${version}.\n` +
    `Gemini CLI sessions: ${gmTitled} (shell call and file read, resumed, titled by --list-sessions), ${gmShort} (short, untitled), ` +
    `${gmCompressed} (compressed, CJK text and cwd), ${gmInterrupted} (interrupted).\n`,
);
process.stdout.write(`fixtures written to ${out}\n`);
