import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatSessionReferenceMention, type PreparedReferencedMessage, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, WEATHER_APP, removeTemporary, temporaryDirectory } from './helpers';

const scratch = temporaryDirectory('cli');
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
    const bad = cli(['candidates', '--root', EXAMPLE_STORE, '--limit', '0']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('SESSION_REFERENCE_INVALID_REFERENCE: candidate limit must be a positive safe integer\n');
    const usage = cli(['candidates', '--nope']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^USAGE: unknown option --nope/);
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

  it('fails with the core codes: budget, self reference, invalid config', () => {
    expect(cli(['prepare', '--text', message, '--root', EXAMPLE_STORE, '--max-reference-bytes', '16']).stderr).toBe(
      'SESSION_REFERENCE_BUDGET_EXCEEDED: referenced session snapshot cannot fit the configured byte budget\n',
    );
    expect(cli(['prepare', '--text', message, '--root', EXAMPLE_STORE, '--target', EXAMPLE_SESSIONS.cache]).stderr).toBe(
      `SESSION_REFERENCE_SELF_REFERENCE: session "${EXAMPLE_SESSIONS.cache}" cannot reference itself\n`,
    );
    const config = cli(['prepare', '--text', message, '--root', EXAMPLE_STORE, '--max-reference-bytes', 'lots']);
    expect(config.code).toBe(1);
    expect(config.stderr).toBe('SESSION_REFERENCE_INVALID_CONFIG: session-reference: maxReferenceBytes must be a positive safe integer\n');
  });

  it('never writes under the sessions root', () => {
    const before = readdirSync(EXAMPLE_STORE, { recursive: true }).sort();
    cli(['prepare', '--text', message, '--root', EXAMPLE_STORE]);
    expect(readdirSync(EXAMPLE_STORE, { recursive: true }).sort()).toEqual(before);
  });
});
