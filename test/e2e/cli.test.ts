import { spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatSessionReferenceMention, type PreparedReferencedMessage, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { REPO_ROOT, SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, WEATHER_APP, removeTemporary, temporaryDirectory } from './helpers';

const scratch = temporaryDirectory('cli');
// Stores written by the real Claude Code and Codex (test/agent-stores).
const AGENT_FIXTURES = path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures');
afterAll(() => removeTemporary(scratch));

/** Run the bin; a private cache and an empty DSH_HOME keep the user's files out of it. */
function cli(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  const result = spawnSync(process.execPath, [SERVER_BIN, ...args], {
    cwd: options.cwd ?? scratch,
    input: options.input,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home'), ...options.env },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('dsh-session-ls candidates', () => {
  it('lists every session of an indexed store as JSON, ranked for --cwd', () => {
    const { code, stdout, stderr } = cli(['candidates', '--root', EXAMPLE_STORE, '--cwd', WEATHER_APP, '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as SessionReferenceMentionCandidate[];
    expect(rows.map((row) => row.sessionId)).toEqual([
      EXAMPLE_SESSIONS.flakyTest,
      EXAMPLE_SESSIONS.cache,
      EXAMPLE_SESSIONS.hourly,
      EXAMPLE_SESSIONS.releaseNames,
      EXAMPLE_SESSIONS.httpNotes,
    ]);
    expect(rows[0]!.mention).toBe(formatSessionReferenceMention({ sessionId: EXAMPLE_SESSIONS.flakyTest, label: 'Fix flaky time zone test' }));
  });

  it('ends quietly, its work done, when the reader of its output goes away (`| head`)', async () => {
    const cache = path.join(scratch, 'cache-of-a-closed-pipe');
    const child = spawn(process.execPath, [SERVER_BIN, 'candidates', '--root', EXAMPLE_STORE, '--json'], {
      cwd: scratch,
      env: { ...process.env, XDG_CACHE_HOME: cache, DSH_HOME: path.join(scratch, 'no-dsh-home') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the answer is written: the write fails with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    // It went on to save its index cache, as a run whose output was read does.
    expect(readdirSync(path.join(cache, 'dsh-session-ls')).filter((name) => name.endsWith('.jsonl'))).toHaveLength(1);
  });

  it('answers when started in a directory that was removed since', async () => {
    const gone = path.join(scratch, 'removed-cwd');
    mkdirSync(gone);
    const child = spawn(process.execPath, [SERVER_BIN, 'candidates', '--root', EXAMPLE_STORE, '--json'], {
      cwd: gone,
      env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home'), PWD: gone },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    rmdirSync(gone);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as unknown[]).length).toBe(Object.keys(EXAMPLE_SESSIONS).length);
  });

  it('leaves the persistent index cache behind, which the next call answers from identically', () => {
    const cache = path.join(scratch, 'own-cache');
    const first = cli(['candidates', '--root', EXAMPLE_STORE, '--json'], { env: { XDG_CACHE_HOME: cache } });
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    const [cacheFile, ...others] = readdirSync(path.join(cache, 'dsh-session-ls'));
    expect(others).toEqual([]);
    // The trailer line counts the entries: one per session of the store.
    const lines = readFileSync(path.join(cache, 'dsh-session-ls', cacheFile!), 'utf8').trimEnd().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ end: true, entries: Object.keys(EXAMPLE_SESSIONS).length });
    const second = cli(['candidates', '--root', EXAMPLE_STORE, '--json'], { env: { XDG_CACHE_HOME: cache } });
    expect(second).toEqual(first);
  });

  it('prints a readable list, filtered by the query and cut by --limit', () => {
    const { code, stdout } = cli(['candidates', 'e', '--root', EXAMPLE_STORE, '--cwd', '/home/sam/notes', '--limit', '1']);
    expect(code).toBe(0);
    expect(stdout).toContain('  1. HTTP caching headers cheat sheet\n');
    expect(stdout).toContain('/home/sam/notes · e5f6a7b8-9c0d-4e1f-a2b3-c4d5e6f7a8b9');
    expect(stdout).toContain('@[HTTP caching headers cheat sheet](dsh-session:');
    expect(stdout).toContain('More sessions match');
  });

  it('takes the root from $DSH_HOME and says so when a root has no sessions', () => {
    const home = path.join(scratch, 'dsh-home');
    mkdirSync(path.join(home, 'sessions'), { recursive: true });
    const { code, stdout } = cli(['candidates'], { env: { DSH_HOME: home } });
    expect(code).toBe(0);
    expect(stdout).toBe(`No sessions found in ${path.join(home, 'sessions')}.\n`);
  });

  it('prints CODE: message on stderr and exits non-zero', () => {
    const bad = cli(['candidates', '--root', EXAMPLE_STORE, '--target', EXAMPLE_SESSIONS.cache, '--agents', 'dsh,cursor']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('USAGE: --agents takes a comma-separated list of dsh, claude-code, codex, qwen-code, gemini, opencode; "cursor" is none of them\n');
    const usage = cli(['candidates', '--nope']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('USAGE: unknown option --nope (see --help)\n');
  });

  it('prints JSON Lines with --jsonl: one complete candidate per line, as --json lists them', () => {
    const lines = cli(['candidates', '--root', EXAMPLE_STORE, '--cwd', WEATHER_APP, '--jsonl']);
    expect(lines.code).toBe(0);
    const json = cli(['candidates', '--root', EXAMPLE_STORE, '--cwd', WEATHER_APP, '--json']);
    const rows = JSON.parse(json.stdout) as unknown[];
    expect(lines.stdout).toBe(rows.map((row) => JSON.stringify(row) + '\n').join(''));
    expect(lines.stdout.split('\n')).toHaveLength(rows.length + 1);
  });

  it('gives `--jsonl | head -1` one whole candidate and ends quietly when the reader goes', async () => {
    const child = spawn(process.execPath, [SERVER_BIN, 'candidates', '--root', EXAMPLE_STORE, '--cwd', WEATHER_APP, '--jsonl'], {
      cwd: scratch,
      env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // What `head -1` does: read up to the first line break, then close the pipe.
    const firstLine = await new Promise<string>((resolve) => {
      let read = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        read += chunk;
        if (read.includes('\n')) {
          child.stdout.destroy();
          resolve(read.slice(0, read.indexOf('\n')));
        }
      });
      child.stdout.on('end', () => resolve(read));
    });
    const code = await closed;
    expect(JSON.parse(firstLine)).toMatchObject({ sessionId: EXAMPLE_SESSIONS.flakyTest, label: 'Fix flaky time zone test' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('dsh-session-ls usage errors and unreadable input (USAGE, exit 2, one line)', () => {
  it.each([
    [['candidates', '--limit', 'abc'], `USAGE: --limit takes a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not "abc"`],
    [['candidates', '--limit', '0'], `USAGE: --limit takes a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not "0"`],
    [['prepare', '-', '--max-reference-bytes', 'lots'], `USAGE: --max-reference-bytes takes a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not "lots"`],
    [['candidates', '--roott', EXAMPLE_STORE], 'USAGE: unknown option --roott (did you mean --root?)'],
    [['prepare', '--txet', 'hi'], 'USAGE: unknown option --txet (did you mean --text?)'],
    [['candidate'], 'USAGE: unknown command "candidate" (did you mean candidates?)'],
    [['prepare', '--limit', '2', '-'], 'USAGE: prepare has no option --limit (it is an option of candidates)'],
    [['candidates', '--json', '--jsonl'], 'USAGE: give either --json or --jsonl, not both'],
  ])('%j', (args, message) => {
    const { code, stdout, stderr } = cli(args);
    expect(stderr).toBe(`${message}\n`);
    expect(stdout).toBe('');
    expect(code).toBe(2);
  });

  it('names a missing file and a directory given as the file, each error code said once', () => {
    const missing = cli(['prepare', '--file', 'nope.md', '--root', EXAMPLE_STORE]);
    expect(missing.stderr).toBe(`USAGE: cannot read --file ${path.join(scratch, 'nope.md')}: no such file or directory\n`);
    expect(missing.code).toBe(2);
    const directory = cli(['prepare', '--file', scratch, '--root', EXAMPLE_STORE]);
    expect(directory.stderr).toBe(`USAGE: cannot read --file ${scratch}: it is a directory, not a file\n`);
    expect(directory.code).toBe(2);
    // `prepare - < folder`: standard input is the folder.
    const folder = openSync(scratch, 'r');
    const fromFolder = spawnSync(process.execPath, [SERVER_BIN, 'prepare', '-', '--root', EXAMPLE_STORE], {
      cwd: scratch,
      stdio: [folder, 'pipe', 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home') },
    });
    closeSync(folder);
    expect(fromFolder.stderr).toBe('USAGE: cannot read standard input: it is a directory, not a file\n');
    expect(fromFolder.status).toBe(2);
  });

  it('refuses a file or standard input that is not UTF-8, naming the byte offset, instead of turning it into U+FFFD', () => {
    const file = path.join(scratch, 'latin1.md');
    writeFileSync(file, Buffer.from('Merci\ncaf\xe9 cr\xe8me', 'latin1'));
    const fromFile = cli(['prepare', '--file', file, '--root', EXAMPLE_STORE]);
    expect(fromFile.stderr).toBe(
      `USAGE: ${file} is not valid UTF-8: byte 0xE9 at offset 9 (line 2) is not part of a UTF-8 character; save it as UTF-8 (e.g. iconv -f latin1 -t utf-8 for a Latin-1 file)\n`,
    );
    expect(fromFile.stdout).toBe('');
    expect(fromFile.code).toBe(2);
    const result = spawnSync(process.execPath, [SERVER_BIN, 'prepare', '-', '--root', EXAMPLE_STORE], {
      cwd: scratch,
      input: Buffer.from('caf\xe9', 'latin1'),
      env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home') },
    });
    expect(result.status).toBe(2);
    expect(result.stderr.toString('utf8')).toMatch(/^USAGE: standard input is not valid UTF-8: byte 0xE9 at offset 3 \(line 1\)[^\n]*\n$/);
  });

  it('decodes a UTF-16 file with a byte order mark (what Windows PowerShell writes), mentions and all', () => {
    const message = `Café: ${formatSessionReferenceMention({ sessionId: EXAMPLE_SESSIONS.cache, label: 'the cache work' })}`;
    const file = path.join(scratch, 'utf16.md');
    writeFileSync(file, Buffer.from('\ufeff' + message, 'utf16le'));
    const { code, stdout, stderr } = cli(['prepare', '--file', file, '--root', EXAMPLE_STORE, '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const prepared = JSON.parse(stdout) as PreparedReferencedMessage;
    expect(prepared.content).toEqual([{ type: 'text', text: 'Café: @the cache work' }]);
    expect(prepared.additionalContext!.source.references[0]).toMatchObject({ sessionId: EXAMPLE_SESSIONS.cache });
  });

  it('lists the new options in --help', () => {
    const help = cli(['--help']).stdout;
    expect(help).toContain('[--json | --jsonl]');
    expect(help).toMatch(/\n {2}--jsonl {2,}print JSON Lines: one compact object per line/);
    expect(help).toContain('USAGE (a usage error or unreadable input) exits 2');
  });
});

describe('dsh-session-ls on the folders of other agents', () => {
  const user = path.join(scratch, 'user');
  const claudeHome = path.join(user, '.claude');
  const codexHome = path.join(user, '.codex');
  const qwenHome = path.join(user, '.qwen');
  cpSync(path.join(AGENT_FIXTURES, 'claude-code'), claudeHome, { recursive: true });
  cpSync(path.join(AGENT_FIXTURES, 'codex'), codexHome, { recursive: true });
  cpSync(path.join(AGENT_FIXTURES, 'qwen-code'), qwenHome, { recursive: true });
  const noAgentEnv = { CLAUDE_CONFIG_DIR: path.join(scratch, 'no-claude'), CODEX_HOME: path.join(scratch, 'no-codex'), QWEN_HOME: path.join(scratch, 'no-qwen') };

  it.each([
    ['Claude Code', claudeHome, 'claude-code', '--claude-code-home'],
    ['Codex', codexHome, 'codex', '--codex-home'],
    ['Qwen Code', qwenHome, 'qwen-code', '--qwen-code-home'],
  ])("says a --root that is %s's home is one, and shows the --agents flags that read it", (title, home, agent, flag) => {
    const text = cli(['candidates', '--root', home], { env: noAgentEnv });
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`No sessions found in ${home} (it looks like ${title}'s home).\n`);
    const hint = `hint: ${home} looks like ${title}'s home, not a dsh sessions root: to read its sessions, pass --agents ${agent} ${flag} ${home} (or --agents dsh,${agent} to read them beside dsh's)\n`;
    expect(text.stderr).toBe(hint);
    const json = cli(['candidates', '--root', home, '--json'], { env: noAgentEnv });
    expect(json.stdout).toBe('[]\n');
    expect(json.stderr).toBe(hint);
    // The flags it shows work.
    const followed = cli(['candidates', '--agents', agent, flag, home, '--jsonl'], { env: noAgentEnv });
    expect(followed.code).toBe(0);
    expect(followed.stdout.split('\n').length).toBeGreaterThan(1);
  });

  it('names the right Claude Code home for one given a level too high, and not the dsh root', () => {
    const dshRoot = path.join(scratch, 'dsh-root-of-this-test');
    const { code, stdout, stderr } = cli(['candidates', '--root', dshRoot, '--agents', 'claude-code', '--claude-code-home', user]);
    expect(code).toBe(0);
    expect(stdout).toBe(`No sessions found in the Claude Code home ${user} (it has no projects folder).\n`);
    expect(stderr).toBe(`hint: ${user} is not Claude Code's home but ${claudeHome} is: did you mean --claude-code-home ${claudeHome}?\n`);
    expect(stdout + stderr).not.toContain(dshRoot);
    // Beside dsh's sessions too: the list is dsh's, the hint the same.
    const mixed = cli(['candidates', '--root', EXAMPLE_STORE, '--agents', 'dsh,claude-code', '--claude-code-home', user, '--json']);
    expect((JSON.parse(mixed.stdout) as unknown[]).length).toBe(Object.keys(EXAMPLE_SESSIONS).length);
    expect(mixed.stderr).toBe(stderr);
  });

  it("warns on one line that another agent's mention stays plain text without --agents, and prepares as dsh would", () => {
    const mention = formatSessionReferenceMention({ sessionId: '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01', label: 'Parser', agent: 'claude-code' });
    const { code, stdout, stderr } = cli(['prepare', '--text', `See ${mention}`, '--root', EXAMPLE_STORE, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ content: [{ type: 'text', text: `See ${mention}` }] });
    expect(stderr).toBe('warning: a mention of a Claude Code session stays plain text, as dsh reads it; to expand it, pass --agents dsh,claude-code\n');
    const expanded = cli(['prepare', '--text', `See ${mention}`, '--root', EXAMPLE_STORE, '--agents', 'dsh,claude-code', '--claude-code-home', claudeHome, '--json']);
    expect(expanded.stderr).toBe('');
    expect((JSON.parse(expanded.stdout) as PreparedReferencedMessage).additionalContext!.source.references[0]).toMatchObject({ agent: 'claude-code', label: 'Parser' });
  });

  it('says where an unknown session was looked for, and which folder holds what it looked like', () => {
    const mention = formatSessionReferenceMention({ sessionId: 'no-such-session', label: 'Old work' });
    const { code, stderr } = cli(['prepare', '--text', `See ${mention}`, '--root', claudeHome]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'SESSION_REFERENCE_READ_FAILED: failed to read referenced session: session "no-such-session" not found ' +
        `(mentioned as "Old work"; searched the dsh sessions root ${claudeHome}; ${claudeHome} looks like Claude Code's home, not a dsh sessions root: ` +
        `to read its sessions, pass --agents claude-code --claude-code-home ${claudeHome} (or --agents dsh,claude-code to read them beside dsh's))\n`,
    );
    const claude = formatSessionReferenceMention({ sessionId: 'no-such-session', label: 'Parser', agent: 'claude-code' });
    const off = cli(['prepare', '--text', `See ${claude}`, '--root', EXAMPLE_STORE, '--agents', 'dsh,codex', '--codex-home', codexHome]);
    expect(off.stderr).toBe(
      'SESSION_REFERENCE_READ_FAILED: failed to read referenced session: claude-code session "no-such-session" not found: claude-code is not among the enabled agents ' +
        '(mentioned as "Parser"; claude-code is not among --agents dsh,codex: add it, as in --agents dsh,codex,claude-code)\n',
    );
  });
});

describe('dsh-session-ls prepare', () => {
  const message = `Reuse ${formatSessionReferenceMention({ sessionId: EXAMPLE_SESSIONS.cache, label: 'the cache work' })} here.`;

  it('prepares --text as JSON, exactly like dshSession.prepare', () => {
    const { code, stdout } = cli(['prepare', '--text', message, '--root', EXAMPLE_STORE, '--json']);
    expect(code).toBe(0);
    const prepared = JSON.parse(stdout) as PreparedReferencedMessage;
    expect(prepared.content).toEqual([{ type: 'text', text: 'Reuse @the cache work here.' }]);
    expect(prepared.additionalContext!.source.references[0]).toMatchObject({ sessionId: EXAMPLE_SESSIONS.cache, label: 'the cache work', originalMessages: 4 });
  });

  it('reads --file and standard input, and prints the readable text and the model context', () => {
    const file = path.join(scratch, 'message.md');
    writeFileSync(file, message);
    const fromFile = cli(['prepare', '--file', 'message.md', '--root', EXAMPLE_STORE]);
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toContain('Reuse @the cache work here.');
    expect(fromFile.stdout).toContain('the cache work: 4 of 4 messages');
    expect(fromFile.stdout).toContain('<referenced-sessions>\n[{"sessionId":"7d2a9e44-0c61-4b8f-a3d5-6e7f8091a2b3","label":"the cache work"');
    expect(cli(['prepare', '-', '--root', EXAMPLE_STORE], { input: message }).stdout).toBe(fromFile.stdout);
  });

  it('fails with the core codes, naming the session that does not fit, the bytes it needs and the budget', () => {
    const budget = cli(['prepare', '--text', message, '--root', EXAMPLE_STORE, '--max-reference-bytes', '16']);
    expect(budget.code).toBe(1);
    const needed = /needs at least (\d+) bytes/.exec(budget.stderr)?.[1];
    expect(budget.stderr).toBe(
      'SESSION_REFERENCE_BUDGET_EXCEEDED: referenced session snapshot cannot fit the configured byte budget ' +
        `(dsh session "${EXAMPLE_SESSIONS.cache}" mentioned as "the cache work" needs at least ${needed} bytes, the budget is 16 (set by --max-reference-bytes): ` +
        `pass --max-reference-bytes ${needed} or more)\n`,
    );
    expect(cli(['prepare', '--text', message, '--root', EXAMPLE_STORE, '--max-reference-bytes', needed!]).code).toBe(0);
    expect(cli(['prepare', '--text', message, '--root', EXAMPLE_STORE, '--target', EXAMPLE_SESSIONS.cache]).stderr).toBe(
      `SESSION_REFERENCE_SELF_REFERENCE: session "${EXAMPLE_SESSIONS.cache}" cannot reference itself\n`,
    );
  });

  it('names an unknown session, its label and the store it searched', () => {
    const missing = cli(['prepare', '--text', `Reuse ${formatSessionReferenceMention({ sessionId: 'gone', label: 'Old work' })}`, '--root', EXAMPLE_STORE]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `SESSION_REFERENCE_READ_FAILED: failed to read referenced session: session "gone" not found (mentioned as "Old work"; searched the dsh sessions root ${EXAMPLE_STORE})\n`,
    );
  });

  it('never writes under the sessions root', () => {
    const before = readdirSync(EXAMPLE_STORE, { recursive: true }).sort();
    cli(['prepare', '--text', message, '--root', EXAMPLE_STORE]);
    expect(readdirSync(EXAMPLE_STORE, { recursive: true }).sort()).toEqual(before);
  });
});
