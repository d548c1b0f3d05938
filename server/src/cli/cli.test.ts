import { describe, expect, it } from 'vitest';
import { describeSessionsRootProblem, formatSessionReferenceMention, type SessionsRootProblem } from '@dsh-session-ls/shared';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { InMemoryStoreService } from '../testing/inMemoryStoreService';
import { runCli } from './cli';
import { parseInvocation } from './commandLine';

function session(id: string, cwd: string | undefined, createdAt: number, title?: string): InMemorySession {
  const log = new SessionLogBuilder();
  log.user(`question in ${id}`);
  log.assistant(`answer in ${id}`);
  if (title !== undefined) log.title(title);
  return { header: { id, createdAt, ...(cwd === undefined ? {} : { cwd }) }, events: log.events() };
}

const SESSIONS = [session('a', '/work/a', 3000, 'Alpha \u001b[31mred'), session('b', '/work/b', 2000), session('c', undefined, 1000)];

async function cli(
  args: string[],
  options: { stdin?: string | Uint8Array; env?: NodeJS.ProcessEnv; indexing?: boolean; sessions?: InMemorySession[]; rootProblem?: SessionsRootProblem } = {},
) {
  let stdout = '';
  let stderr = '';
  const opened: string[] = [];
  const stores: InMemoryStoreService[] = [];
  const code = await runCli(
    parseInvocation(args) as Parameters<typeof runCli>[0],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      readStdin: async () => (typeof options.stdin === 'string' || options.stdin === undefined ? Buffer.from(options.stdin ?? '', 'utf8') : options.stdin),
      env: options.env ?? {},
      cwd: '/work/b',
    },
    {
      openStore: (root) => {
        opened.push(root);
        const store = new InMemoryStoreService(root, options.sessions ?? SESSIONS, { indexing: options.indexing });
        if (options.rootProblem !== undefined) store.setStatus({ rootExists: false, rootProblem: options.rootProblem });
        stores.push(store);
        // Indexing finishes later: the CLI must wait for it.
        if (options.indexing) setTimeout(() => store.setStatus({ indexing: false }), 10);
        return store;
      },
      defaultSessionsRoot: (env) => `${env.DSH_HOME ?? '/home/u/.dsh'}/sessions`,
    },
  );
  return { code, stdout, stderr, opened, stores };
}

describe('dsh-session-ls candidates', () => {
  it.each([
    ['missing', ' (it does not exist yet)', ''],
    ['not-a-directory', ' (it is not a directory)', 'warning: The dsh sessions root /r is not a directory, so no sessions can be listed; it is picked up once it is one.\n'],
    ['inaccessible', ' (it cannot be read)', `warning: ${describeSessionsRootProblem('/r', 'inaccessible')}\n`],
  ] as const)('says why a %s root has no sessions, and warns unless it is just missing', async (problem, note, warning) => {
    const { code, stdout, stderr } = await cli(['candidates', '--root', '/r'], { sessions: [], rootProblem: problem });
    expect(code).toBe(0);
    expect(stdout).toBe(`No sessions found in /r${note}.\n`);
    expect(stderr).toBe(warning);
  });

  it('prints JSON candidates ranked for the current directory, labels unchanged', async () => {
    const { code, stdout, opened, stores } = await cli(['candidates', '--json'], { indexing: true });
    expect(code).toBe(0);
    expect(opened).toEqual(['/home/u/.dsh/sessions']);
    const rows = JSON.parse(stdout) as Array<{ sessionId: string; label: string; mention: string }>;
    expect(rows.map((row) => row.sessionId)).toEqual(['b', 'c', 'a']);
    expect(rows[2]!.label).toBe('Alpha \u001b[31mred');
    expect(rows[0]!.mention).toBe(formatSessionReferenceMention({ sessionId: 'b' }));
    expect(stores[0]!.disposed).toBe(true);
  });

  it('takes the query, --cwd, --target, --limit and --root (DSH_HOME otherwise)', async () => {
    const { stdout, opened } = await cli(['candidates', '', '--cwd', '/work/a', '--target', 'b', '--limit', '1', '--json'], { env: { DSH_HOME: '/dh' } });
    expect(opened).toEqual(['/dh/sessions']);
    expect((JSON.parse(stdout) as Array<{ sessionId: string }>).map((row) => row.sessionId)).toEqual(['a']);
    const rooted = await cli(['candidates', 'ALP', '--root', 'rel/store', '--json']);
    expect(rooted.opened).toEqual(['/work/b/rel/store']);
    expect((JSON.parse(rooted.stdout) as Array<{ sessionId: string }>).map((row) => row.sessionId)).toEqual(['a']);
  });

  it('prints a readable list with display-safe labels, ages and mentions, and says when more match', async () => {
    const { stdout } = await cli(['candidates', '--limit', '2']);
    expect(stdout).toContain('  1. b\n');
    expect(stdout).toContain('/work/b · b\n');
    expect(stdout).toContain(`     ${formatSessionReferenceMention({ sessionId: 'b' })}\n`);
    expect(stdout).toContain('(no cwd)');
    expect(stdout).toContain('More sessions match');
    const all = await cli(['candidates', 'alpha']);
    expect(all.stdout).not.toContain('\u001b');
    expect(all.stdout).toContain('Alpha [31mred');
    expect(all.stdout).not.toContain('More sessions match');
  });

  it('says when no session matches the query, or the only one is the target', async () => {
    expect((await cli(['candidates', 'zzz'])).stdout).toBe('No sessions match "zzz".\n');
    const alone = await cli(['candidates', '--target', 'a'], { sessions: [session('a', '/work/a', 1)] });
    expect(alone.stdout).toBe('No sessions found besides the target session "a".\n');
    expect(alone.stderr).toBe('');
  });

  it('prints JSON Lines with --jsonl: one compact candidate per line, nothing for none', async () => {
    const { code, stdout } = await cli(['candidates', '--jsonl']);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines.at(-1)).toBe('');
    const rows = lines.slice(0, -1).map((line) => JSON.parse(line) as { sessionId: string });
    expect(rows.map((row) => row.sessionId)).toEqual(['b', 'c', 'a']);
    expect(stdout).toBe(rows.map((row) => JSON.stringify(row) + '\n').join(''));
    expect((await cli(['candidates', 'zzz', '--jsonl'])).stdout).toBe('');
  });

  it('refuses an --agents value naming no agent as a usage error (exit 2), suggesting the nearest', async () => {
    const { code, stdout, stderr } = await cli(['candidates', '--agents', 'dsh,claude']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('USAGE: --agents takes a comma-separated list of dsh, claude-code, codex, qwen-code, gemini, opencode; "claude" is none of them (did you mean claude-code?)\n');
    expect((await cli(['candidates', '--agents', ' , '])).stderr).toBe('USAGE: --agents takes a comma-separated list of dsh, claude-code, codex, qwen-code, gemini, opencode, not " , "\n');
  });
});

describe('dsh-session-ls prepare', () => {
  const text = `compare ${formatSessionReferenceMention({ sessionId: 'b', label: 'Bee' })} please`;

  it('prints the prepared message as JSON', async () => {
    const { code, stdout } = await cli(['prepare', '--text', text, '--json']);
    expect(code).toBe(0);
    const prepared = JSON.parse(stdout) as { content: unknown; additionalContext: { content: Array<{ text: string }> } };
    expect(prepared.content).toEqual([{ type: 'text', text: 'compare @Bee please' }]);
    expect(prepared.additionalContext.content[0]!.text).toMatch(/^## Referenced sessions\n/);
  });

  it('reads standard input and prints readable text and the context', async () => {
    const { stdout } = await cli(['prepare', '-'], { stdin: text });
    expect(stdout).toContain('compare @Bee please');
    expect(stdout).toContain('Bee: 2 of 2 messages');
    expect(stdout).toContain('<referenced-sessions>\n[{"sessionId":"b","label":"Bee"');
  });

  it('prints JSON Lines with --jsonl: the prepared message on one line', async () => {
    const { code, stdout } = await cli(['prepare', '--text', text, '--jsonl']);
    expect(code).toBe(0);
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(stdout)).toMatchObject({ content: [{ type: 'text', text: 'compare @Bee please' }] });
  });

  it('fails with the core error codes, the message as the core words it', async () => {
    expect((await cli(['prepare', '--text', text, '--target', 'b'])).stderr).toBe('SESSION_REFERENCE_SELF_REFERENCE: session "b" cannot reference itself\n');
    const many = [1, 2, 3, 4].map((n) => formatSessionReferenceMention({ sessionId: `s${n}` })).join(' ');
    expect((await cli(['prepare', '--text', many])).stderr).toBe('SESSION_REFERENCE_TOO_MANY: a message may reference at most 3 sessions\n');
  });

  it('says which session does not fit the budget, how many bytes it needs, and the budget', async () => {
    const small = await cli(['prepare', '--text', text, '--max-reference-bytes', '20']);
    expect(small.code).toBe(1);
    expect(small.stdout).toBe('');
    const needed = /needs at least (\d+) bytes/.exec(small.stderr)?.[1];
    expect(small.stderr).toBe(
      'SESSION_REFERENCE_BUDGET_EXCEEDED: referenced session snapshot cannot fit the configured byte budget ' +
        `(dsh session "b" mentioned as "Bee" needs at least ${needed} bytes, the budget is 20 (set by --max-reference-bytes): pass --max-reference-bytes ${needed} or more)\n`,
    );
    // The bytes it names are exactly enough.
    expect((await cli(['prepare', '--text', text, '--max-reference-bytes', needed!])).code).toBe(0);
    expect((await cli(['prepare', '--text', text, '--max-reference-bytes', String(Number(needed) - 1)])).code).toBe(1);
    // A label is part of what must fit: one of 70,000 bytes cannot fit the default budget.
    const byDefault = await cli(['prepare', '--text', formatSessionReferenceMention({ sessionId: 'a', label: 'L'.repeat(70_000) })]);
    expect(byDefault.stderr).toMatch(
      /^SESSION_REFERENCE_BUDGET_EXCEEDED: referenced session snapshot cannot fit the configured byte budget \(dsh session "a" mentioned as "L+…" needs at least 7\d{4} bytes, the budget is 65536 \(the default\): pass --max-reference-bytes 7\d{4} or more\)\n$/,
    );
  });

  it('names the missing session, its label and the store searched', async () => {
    const missing = await cli(['prepare', '--text', 'dsh-session:Im5vcGUi']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'SESSION_REFERENCE_READ_FAILED: failed to read referenced session: session "nope" not found (searched the dsh sessions root /home/u/.dsh/sessions)\n',
    );
    const labelled = await cli(['prepare', '--text', `see ${formatSessionReferenceMention({ sessionId: 'nope', label: 'Old\nwork' })}`, '--root', '/r']);
    expect(labelled.stderr).toBe(
      'SESSION_REFERENCE_READ_FAILED: failed to read referenced session: session "nope" not found (mentioned as "Old work"; searched the dsh sessions root /r)\n',
    );
  });

  it('reports an unreadable file as a usage error naming it, its code said once', async () => {
    const { code, stdout, stderr } = await cli(['prepare', '--file', '/definitely/not/here.md']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('USAGE: cannot read --file /definitely/not/here.md: no such file or directory\n');
  });

  it('refuses standard input that is not UTF-8 instead of mangling it', async () => {
    const { code, stdout, stderr } = await cli(['prepare', '-'], { stdin: Buffer.from('caf\xe9', 'latin1') });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^USAGE: standard input is not valid UTF-8: byte 0xE9 at offset 3 \(line 1\)/);
    expect((await cli(['prepare', '-'], { stdin: Buffer.from('\ufeffcafé', 'utf16le') })).stdout).toContain('\ncafé\n');
  });

  it("warns, on one line, that another agent's mentions stay plain text without --agents", async () => {
    const claude = formatSessionReferenceMention({ sessionId: 'c1', label: 'Parser', agent: 'claude-code' });
    const codex = formatSessionReferenceMention({ sessionId: 'x1', agent: 'codex' });
    const one = await cli(['prepare', '--text', `see ${claude}`, '--json']);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({ content: [{ type: 'text', text: `see ${claude}` }] });
    expect(one.stderr).toBe('warning: a mention of a Claude Code session stays plain text, as dsh reads it; to expand it, pass --agents dsh,claude-code\n');
    const two = await cli(['prepare', '--text', `${codex} ${claude} ${claude}`]);
    expect(two.stderr).toBe('warning: 3 mentions of Claude Code and Codex sessions stay plain text, as dsh reads them; to expand them, pass --agents dsh,claude-code,codex\n');
    expect((await cli(['prepare', '--text', text])).stderr).toBe('');
  });
});
