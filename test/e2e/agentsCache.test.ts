import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CompletionList, Diagnostic } from 'vscode-languageserver-protocol';
import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { REPO_ROOT, SERVER_BIN, fileUri, pollUntil } from '../support/lspClient';
import { EXAMPLE_STORE, removeTemporary, startServer, temporaryDirectory } from './helpers';

// Other agents' stores over the built server and CLI: the persistent summary cache across processes,
// and sessions that appear and disappear while the server runs: index, freshness, caching.
const FIXTURES = path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures');
const CC_RENAMED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const CX_RENAMED = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';
const PROJ_A = '/tmp/dsh-agent-fixtures/proj a';

const scratch = temporaryDirectory('agents-cache');
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  removeTemporary(scratch);
});

/** Writable copies of both fixture homes. */
function homes(name: string): { claude: string; codex: string } {
  const claude = path.join(scratch, name, 'claude');
  const codex = path.join(scratch, name, 'codex');
  cpSync(path.join(FIXTURES, 'claude-code'), claude, { recursive: true });
  cpSync(path.join(FIXTURES, 'codex'), codex, { recursive: true });
  return { claude, codex };
}

function candidates(cache: string, flags: string[]) {
  const result = spawnSync(process.execPath, [SERVER_BIN, 'candidates', 'work', '--root', EXAMPLE_STORE, '--cwd', PROJ_A, '--json', ...flags], {
    cwd: scratch,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cache, DSH_HOME: path.join(scratch, 'no-dsh-home'), CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' },
    timeout: 60_000,
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return (JSON.parse(result.stdout) as Array<{ sessionId: string; label: string; agent?: string }>).map((row) => [row.agent, row.label]);
}

/** A cache file with one title replaced, its checksum trailer recomputed (as if the cache had said so). */
function plantTitle(file: string, from: string, to: string): void {
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  const body = lines.slice(0, -1).map((line) => line.replace(from, to));
  const sha256 = createHash('sha256').update(body.map((line) => `${line}\n`).join('')).digest('hex');
  const trailer = { ...(JSON.parse(lines.at(-1)!) as object), sha256 };
  writeFileSync(file, [...body, JSON.stringify(trailer)].map((line) => `${line}\n`).join(''));
}

describe('other agents across processes', () => {
  it('a CLI run writes one cache per agent home (and dsh\'s), and the next run lists from it without reading the unchanged logs', () => {
    const { claude, codex } = homes('cli');
    const cache = path.join(scratch, 'cli-cache');
    const flags = ['--agents', 'claude-code,codex', '--claude-code-home', claude, '--codex-home', codex];
    const first = candidates(cache, flags);
    expect(first).toEqual([
      ['codex', 'Lexer work, renamed'],
      ['claude-code', 'Parser work, renamed'],
    ]);
    const files = readdirSync(path.join(cache, 'dsh-session-ls')).filter((name) => name.endsWith('.jsonl'));
    // One per agent home, and the dsh root's own (the CLI writes its cache too).
    const heads = files.map((name) => (JSON.parse(readFileSync(path.join(cache, 'dsh-session-ls', name), 'utf8').split('\n')[0]!) as { root: string }).root);
    expect(heads.filter((root) => root.startsWith('foreign-v1:')).sort()).toEqual([`foreign-v1:claude-code:${claude}`, `foreign-v1:codex:${codex}`]);
    expect(files).toHaveLength(3);
    // Proof that the second run takes its rows from the cache: a title that only the cache holds.
    const claudeCache = files.map((name) => path.join(cache, 'dsh-session-ls', name)).find((file) => readFileSync(file, 'utf8').includes('claude-code:'))!;
    plantTitle(claudeCache, 'Parser work, renamed', 'Parser work, from the cache');
    expect(candidates(cache, flags)).toEqual([
      ['codex', 'Lexer work, renamed'],
      ['claude-code', 'Parser work, from the cache'],
    ]);
    // A transcript that changed since is read again (its identity is not the cached one).
    const transcript = path.join(claude, 'projects', '-tmp-dsh-agent-fixtures-proj-a', `${CC_RENAMED}.jsonl`);
    writeFileSync(transcript, readFileSync(transcript, 'utf8') + JSON.stringify({ type: 'custom-title', customTitle: 'Parser work, renamed again' }) + '\n');
    expect(candidates(cache, flags)).toEqual([
      ['codex', 'Lexer work, renamed'],
      ['claude-code', 'Parser work, renamed again'],
    ]);
  });

  it('the server completes a Claude Code and a Codex session created while it runs, and drops them once deleted', async () => {
    const { claude, codex } = homes('server');
    const { client, cleanup } = await startServer(
      {
        workspaceFolders: [{ uri: fileUri(PROJ_A), name: 'proj a' }],
        rootUri: fileUri(PROJ_A),
        initializationOptions: { sessionsRoot: EXAMPLE_STORE, agents: ['dsh', 'claude-code', 'codex'], claudeCodeHome: claude, codexHome: codex },
      },
      {},
    );
    cleanups.push(cleanup);
    const uri = fileUri(path.join(scratch, 'prompt.md'));
    await client.openDocument(uri, '@');
    const labels = async (): Promise<string[]> => ((await client.completion(uri, { line: 0, character: 1 })) as CompletionList).items.map((item) => item.label);
    await pollUntil(async () => ((await labels()).includes('Lexer work, renamed') ? true : undefined), 20_000, 'the first listing');

    // New sessions, written elsewhere and renamed in as a whole.
    const newClaude = path.join(claude, 'projects', '-tmp-new', '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8aee.jsonl');
    const claudeText = readFileSync(path.join(claude, 'projects', '-tmp-dsh-agent-fixtures-proj-a', `${CC_RENAMED}.jsonl`), 'utf8');
    writeFileSync(path.join(scratch, 'staging-claude'), claudeText.replaceAll(CC_RENAMED, '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8aee').replaceAll('Parser work, renamed', 'Claude made meanwhile'));
    mkdirSync(path.dirname(newClaude));
    renameSync(path.join(scratch, 'staging-claude'), newClaude);
    const day = path.join(codex, 'sessions', '2026', '12', '03');
    const rollout = readdirSync(day).find((name) => name.includes(CX_RENAMED))!;
    const newCodexId = '01a23b79-0000-7000-8000-0000000000ee';
    const newCodex = path.join(day, rollout.replace(CX_RENAMED, newCodexId));
    writeFileSync(path.join(scratch, 'staging-codex'), readFileSync(path.join(day, rollout), 'utf8').replaceAll(CX_RENAMED, newCodexId));
    renameSync(path.join(scratch, 'staging-codex'), newCodex);
    writeFileSync(path.join(codex, 'session_index.jsonl'), readFileSync(path.join(codex, 'session_index.jsonl'), 'utf8') + JSON.stringify({ id: newCodexId, thread_name: 'Codex made meanwhile', updated_at: '2027-01-01T00:00:00Z' }) + '\n');
    await pollUntil(async () => {
      const now = await labels();
      return now.includes('Claude made meanwhile') && now.includes('Codex made meanwhile') ? true : undefined;
    }, 20_000, 'the new sessions in completion');

    rmSync(newClaude);
    rmSync(newCodex);
    await pollUntil(async () => {
      const now = await labels();
      return !now.includes('Claude made meanwhile') && !now.includes('Codex made meanwhile') && now.includes('Parser work, renamed') ? true : undefined;
    }, 20_000, 'the deleted sessions gone from completion');
  });

  it('clears the warning on a mention of a foreign session that did not exist yet, once the agent writes it', async () => {
    const { claude, codex } = homes('diagnostics');
    const { client, cleanup } = await startServer(
      {
        workspaceFolders: [{ uri: fileUri(PROJ_A), name: 'proj a' }],
        rootUri: fileUri(PROJ_A),
        initializationOptions: { sessionsRoot: EXAMPLE_STORE, agents: ['dsh', 'claude-code', 'codex'], claudeCodeHome: claude, codexHome: codex },
      },
      {},
    );
    cleanups.push(cleanup);
    const claudeId = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8add';
    const codexId = '01a23b79-0000-7000-8000-0000000000dd';
    const uri = fileUri(path.join(scratch, 'later.md'));
    const text = `See ${formatSessionReferenceMention({ sessionId: claudeId, label: 'Later', agent: 'claude-code' })} and ${formatSessionReferenceMention({ sessionId: codexId, label: 'Later', agent: 'codex' })}`;
    await client.openDocument(uri, text);
    /** The latest diagnostics published for the document, as [kind, agent]. */
    const latest = (): string => {
      const published = client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === uri);
      const params = published.at(-1)?.params as { diagnostics: Diagnostic[] } | undefined;
      return JSON.stringify(params?.diagnostics.map((d) => [(d.data as { kind: string }).kind, (d.data as { agent: string }).agent]));
    };
    // Not listed yet: a Warning each (beside the Information that dsh will not expand them).
    const unknown = [['unknown-session', 'claude-code'], ['foreign-agent', 'claude-code'], ['unknown-session', 'codex'], ['foreign-agent', 'codex']];
    await pollUntil(() => (latest() === JSON.stringify(unknown) ? true : undefined), 20_000, 'the warnings');

    // The agents write the sessions (the document is not touched): the diagnostics are pushed again.
    const claudeSource = readFileSync(path.join(claude, 'projects', '-tmp-dsh-agent-fixtures-proj-a', `${CC_RENAMED}.jsonl`), 'utf8');
    writeFileSync(path.join(claude, 'projects', '-tmp-dsh-agent-fixtures-proj-a', `${claudeId}.jsonl`), claudeSource.replaceAll(CC_RENAMED, claudeId));
    const day = path.join(codex, 'sessions', '2026', '12', '03');
    const rollout = readdirSync(day).find((name) => name.includes(CX_RENAMED))!;
    writeFileSync(path.join(day, rollout.replace(CX_RENAMED, codexId)), readFileSync(path.join(day, rollout), 'utf8').replaceAll(CX_RENAMED, codexId));
    const listed = [['foreign-agent', 'claude-code'], ['foreign-agent', 'codex']];
    await pollUntil(() => (latest() === JSON.stringify(listed) ? true : undefined), 30_000, 'the warnings cleared');
  });
});
