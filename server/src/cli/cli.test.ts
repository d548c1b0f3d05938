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

async function cli(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv; indexing?: boolean; sessions?: InMemorySession[]; rootProblem?: SessionsRootProblem } = {}) {
  let stdout = '';
  let stderr = '';
  const opened: string[] = [];
  const stores: InMemoryStoreService[] = [];
  const code = await runCli(
    parseInvocation(args) as Parameters<typeof runCli>[0],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      readStdin: async () => options.stdin ?? '',
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

  it('prints CODE: message on stderr and exits 1 for a bad limit', async () => {
    const { code, stdout, stderr } = await cli(['candidates', '--limit', 'many']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('SESSION_REFERENCE_INVALID_REFERENCE: candidate limit must be a positive safe integer\n');
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

  it('fails with the core error codes', async () => {
    expect((await cli(['prepare', '--text', text, '--target', 'b'])).stderr).toBe('SESSION_REFERENCE_SELF_REFERENCE: session "b" cannot reference itself\n');
    expect((await cli(['prepare', '--text', text, '--max-reference-bytes', '0'])).stderr).toBe(
      'SESSION_REFERENCE_INVALID_CONFIG: session-reference: maxReferenceBytes must be a positive safe integer\n',
    );
    expect((await cli(['prepare', '--text', text, '--max-reference-bytes', '20'])).stderr).toMatch(/^SESSION_REFERENCE_BUDGET_EXCEEDED: /);
    const missing = await cli(['prepare', '--text', 'dsh-session:Im5vcGUi']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('SESSION_REFERENCE_READ_FAILED: failed to read referenced session: session "nope" not found\n');
  });

  it('reports an unreadable file with its error code', async () => {
    const { code, stderr } = await cli(['prepare', '--file', '/definitely/not/here.md']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^ENOENT: /);
  });
});
