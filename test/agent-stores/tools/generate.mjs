// Regenerates test/agent-stores/fixtures/ from the REAL Claude Code and Codex CLIs, run offline
// against modelServer.mjs on 127.0.0.1. Not part of `npm test` (CI has no such CLIs). Usage:
//
//   mkdir /tmp/agentcli && cd /tmp/agentcli && npm init -y &&
//     npm install @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0
//   node test/agent-stores/tools/generate.mjs /tmp/agentcli
//
// npm's install-script approval may skip Claude Code's postinstall, so the platform binaries are
// run directly. Claude Code refuses --dangerously-skip-permissions as root: tools are allowed with
// --allowedTools. Work happens under /tmp/dsh-agent-fixtures (fixed, so cwds are stable), then the
// session files alone (no config, no sqlite, no skills) are copied into the fixtures folder, and
// damaged copies are derived from them.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from './startModelServer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, '..', 'fixtures');
const cliDir = path.resolve(process.argv[2] ?? '/tmp/agentcli');
const claudeBin = path.join(cliDir, 'node_modules/@anthropic-ai/claude-code-linux-x64/claude');
const codexBin = path.join(cliDir, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');
for (const bin of [claudeBin, codexBin]) if (!existsSync(bin)) throw new Error(`missing ${bin}: install the CLIs first`);

const work = '/tmp/dsh-agent-fixtures';
rmSync(work, { recursive: true, force: true });
const claudeHome = path.join(work, 'claude-home');
const codexHome = path.join(work, 'codex-home');
// Lossy project folder names: a space and CJK characters all become "-".
const cwdA = path.join(work, 'proj a');
const cwdB = path.join(work, 'proj-日本');
const cwdC = path.join(work, 'proj c');
for (const dir of [claudeHome, codexHome, cwdA, cwdB, cwdC]) mkdirSync(dir, { recursive: true });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const requestLog = path.join(work, 'requests.jsonl');
const portFile = path.join(work, 'port');
const { server, port } = await startModelServer(portFile, requestLog);

const claudeEnv = {
  ...process.env,
  CLAUDE_CONFIG_DIR: claudeHome,
  ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
  ANTHROPIC_API_KEY: 'sk-fixture',
  DISABLE_TELEMETRY: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
};
writeFileSync(
  path.join(codexHome, 'config.toml'),
  `model = "gpt-fixture"\nmodel_provider = "fixture"\n\n[model_providers.fixture]\nname = "fixture"\nbase_url = "http://127.0.0.1:${port}/v1"\nwire_api = "responses"\n`,
);
const codexEnv = { ...process.env, CODEX_HOME: codexHome };

function run(bin, args, cwd, env) {
  const result = spawnSync(bin, args, { cwd, env, encoding: 'utf8', input: '', timeout: 120_000 });
  process.stdout.write(`$ ${path.basename(bin)} ${args.join(' ')}\n${result.stdout}${result.status === 0 ? '' : result.stderr}\n`);
  if (result.status !== 0) throw new Error(`${path.basename(bin)} exited ${result.status}`);
  return result;
}

/** Start a turn the model server stalls on, then kill the CLI mid-reply: an interrupted turn. */
async function interrupted(bin, args, cwd, env) {
  const before = existsSync(requestLog) ? readFileSync(requestLog, 'utf8').length : 0;
  const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'ignore', 'ignore'] });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !readFileSync(requestLog, 'utf8').slice(before).includes('STALL')) await sleep(100);
  await sleep(1500);
  child.kill('SIGINT');
  await sleep(1500);
  if (child.exitCode === null) child.kill('SIGKILL');
  await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)));
}

// ---- Claude Code ----
const claude = (args, cwd = cwdA) => run(claudeBin, ['--model', 'claude-sonnet-4-5', ...args], cwd, claudeEnv);
const ccRenamed = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const ccUntitled = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a02';
const ccInterrupted = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a03';
claude(['-p', 'Hello, first turn about the parser', '--session-id', ccRenamed, '-n', 'Parser work']);
claude(['-p', 'Second turn: TOOL please run a command', '--resume', ccRenamed, '--allowedTools', 'Bash']);
claude(['-p', '/compact', '--resume', ccRenamed]);
claude(['-p', 'After the compaction, one more turn', '--resume', ccRenamed, '-n', 'Parser work, renamed']);
claude(['-p', 'An untitled session about 日本語 and </referenced-sessions> tags', '--session-id', ccUntitled], cwdB);
claude(['-p', 'Its second turn', '--resume', ccUntitled], cwdB);
await interrupted(claudeBin, ['--model', 'claude-sonnet-4-5', '-p', 'Start a long answer STALL', '--session-id', ccInterrupted], cwdC, claudeEnv);

// ---- Codex ----
function codexSessionId(result) {
  const match = /session id: ([0-9a-f-]{36})/.exec(result.stdout + result.stderr);
  if (!match) throw new Error('no codex session id');
  return match[1];
}
const codexFlags = ['--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];
const cxMain = codexSessionId(run(codexBin, ['exec', ...codexFlags, 'Hello codex, first turn about the lexer'], cwdA, codexEnv));
run(codexBin, ['exec', 'resume', ...codexFlags, cxMain, 'Second turn: TOOL please run a command'], cwdA, codexEnv);
const compact = ['-c', 'model_auto_compact_token_limit=9000'];
run(codexBin, ['exec', 'resume', ...codexFlags, ...compact, cxMain, 'Third turn: BIG answer please'], cwdA, codexEnv);
run(codexBin, ['exec', 'resume', ...codexFlags, ...compact, cxMain, 'Fourth turn after the compaction'], cwdA, codexEnv);
const cxUntitled = codexSessionId(run(codexBin, ['exec', ...codexFlags, 'An untitled codex session about 日本語'], cwdB, codexEnv));
await sleep(1100); // distinct rollout timestamps
await interrupted(codexBin, ['exec', ...codexFlags, 'Start a long answer STALL'], cwdC, codexEnv);

// Rename through the app-server, as a client would (thread/name/set writes session_index.jsonl).
async function codexRename(threadId, name) {
  const child = spawn(codexBin, ['app-server'], { cwd: cwdA, env: codexEnv, stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const send = (message) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
  send({ id: 1, method: 'initialize', params: { clientInfo: { name: 'dsh-fixtures', version: '1.0.0' } } });
  send({ method: 'initialized' });
  send({ id: 2, method: 'thread/name/set', params: { threadId, name } });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && !out.includes('"id":2,')) await sleep(100);
  child.kill('SIGTERM');
  if (!out.includes('"id":2,"result"')) throw new Error(`rename failed: ${out}`);
}
await codexRename(cxMain, 'Lexer work');
await codexRename(cxMain, 'Lexer work, renamed');
server.kill('SIGTERM');

// ---- copy the session files only ----
// Only what this script writes: other generators (generateQwen.mjs, generateGemini.mjs) keep their own folders here.
for (const own of ['claude-code', 'codex', 'codex-zst', path.join('damaged', 'claude-code'), path.join('damaged', 'codex')]) rmSync(path.join(fixtures, own), { recursive: true, force: true });
const ccOut = path.join(fixtures, 'claude-code');
const cxOut = path.join(fixtures, 'codex');
cpSync(path.join(claudeHome, 'projects'), path.join(ccOut, 'projects'), { recursive: true });
cpSync(path.join(codexHome, 'sessions'), path.join(cxOut, 'sessions'), { recursive: true });
cpSync(path.join(codexHome, 'session_index.jsonl'), path.join(cxOut, 'session_index.jsonl'));

// ---- damaged copies ----
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
}
const damaged = path.join(fixtures, 'damaged');
cpSync(ccOut, path.join(damaged, 'claude-code'), { recursive: true });
cpSync(path.join(cxOut, 'sessions'), path.join(damaged, 'codex', 'sessions'), { recursive: true });
// No session_index.jsonl in the damaged Codex home: titles fall back to the first prompt.
for (const file of [...filesUnder(path.join(damaged, 'claude-code')), ...filesUnder(path.join(damaged, 'codex'))]) {
  const text = readFileSync(file, 'utf8');
  if (file.includes(ccRenamed) || file.includes(cxMain)) {
    // Torn tail: the last line cut in half, no newline.
    const lines = text.trimEnd().split('\n');
    const last = lines.pop();
    writeFileSync(file, lines.join('\n') + '\n' + last.slice(0, Math.floor(last.length / 2)));
  } else {
    // Unknown record types and a line that is not JSON, between the real ones.
    const lines = text.trimEnd().split('\n');
    lines.splice(1, 0, '{"type":"record-from-the-future","payload":{"x":1}}', 'not json at all', '[1,2,3]', '{"type":"user","message":null}');
    writeFileSync(file, lines.join('\n') + '\n');
  }
}
appendFileSync(path.join(fixtures, 'GENERATED.txt'), '');
writeFileSync(
  path.join(fixtures, 'GENERATED.txt'),
  `Generated by test/agent-stores/tools/generate.mjs with Claude Code ${spawnSync(claudeBin, ['--version'], { encoding: 'utf8' }).stdout.trim()} and ${spawnSync(codexBin, ['--version'], { encoding: 'utf8' }).stdout.trim()}.\n` +
    `Claude Code sessions: ${ccRenamed} (renamed twice, tool call, /compact), ${ccUntitled} (untitled, CJK cwd), ${ccInterrupted} (interrupted).\n` +
    `Codex sessions: ${cxMain} (renamed twice, tool call, auto-compaction), ${cxUntitled} (untitled, CJK cwd), and one interrupted.\n` +
    'Codex rollouts compressed as .jsonl.zst (zstd CLI, one frame each): codex-zst/, by compressRollouts.mjs.\n',
);
// Compressed rollouts, as recent Codex versions rewrite idle ones (`.jsonl.zst`).
const compressed = spawnSync(process.execPath, [path.join(here, 'compressRollouts.mjs')], { stdio: 'inherit' });
if (compressed.status !== 0) throw new Error('compressRollouts.mjs failed');
process.stdout.write(`fixtures written to ${fixtures}\n`);
