import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CompletionList, Diagnostic } from 'vscode-languageserver-protocol';
import { formatSessionReferenceMention, SessionCommands, type PreparedReferencedMessage } from '@dsh-session-ls/shared';
import { REPO_ROOT, SERVER_BIN, fileUri, pollUntil } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, removeTemporary, startServer, temporaryDirectory } from './helpers';

// Stores written by the real Claude Code 2.1.197 and codex-cli 0.171.0 (test/agent-stores/tools/generate.mjs).
const FIXTURES = path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures');
const CLAUDE_HOME = path.join(FIXTURES, 'claude-code');
const CODEX_HOME = path.join(FIXTURES, 'codex');
const CC_RENAMED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const CX_RENAMED = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';
const PROJ_A = '/tmp/dsh-agent-fixtures/proj a';
const CLAUDE_MENTION = formatSessionReferenceMention({ sessionId: CC_RENAMED, label: 'Parser', agent: 'claude-code' });
const CODEX_MENTION = formatSessionReferenceMention({ sessionId: CX_RENAMED, label: 'Lexer', agent: 'codex' });
const DSH_MENTION = formatSessionReferenceMention({ sessionId: EXAMPLE_SESSIONS.cache, label: 'Cache' });

const scratch = temporaryDirectory('agents');
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  removeTemporary(scratch);
});

function cli(args: string[]) {
  const result = spawnSync(process.execPath, [SERVER_BIN, ...args], {
    cwd: scratch,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home'), CLAUDE_CONFIG_DIR: '', CODEX_HOME: '', QWEN_HOME: '', XDG_DATA_HOME: '' },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const AGENT_FLAGS = ['--agents', 'dsh,claude-code,codex', '--claude-code-home', CLAUDE_HOME, '--codex-home', CODEX_HOME];

describe('dsh-session-ls with other agents (CLI)', () => {
  it('prepare --file expands a mix of dsh, Claude Code and Codex mentions into ONE snapshot', () => {
    const prompt = path.join(scratch, 'p.md');
    writeFileSync(prompt, `Compare ${DSH_MENTION}, ${CLAUDE_MENTION} and ${CODEX_MENTION}.\n`);
    const { code, stdout, stderr } = cli(['prepare', '--file', prompt, '--root', EXAMPLE_STORE, '--json', ...AGENT_FLAGS]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const prepared = JSON.parse(stdout) as PreparedReferencedMessage;
    expect(prepared.content).toEqual([{ type: 'text', text: 'Compare @Cache, @Parser and @Lexer.\n' }]);
    expect(prepared.additionalContext!.source.references.map((r) => [r.agent ?? 'dsh', r.label])).toEqual([
      ['dsh', 'Cache'],
      ['claude-code', 'Parser'],
      ['codex', 'Lexer'],
    ]);
    const text = (prepared.additionalContext!.content[0] as { text: string }).text;
    expect(text).toContain('{"agent":"claude-code","sessionId":"7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01","label":"Parser"');
    expect(text).toContain('"text":"Fourth turn after the compaction"');
  });

  it('without --agents reads a foreign mention as plain text, exactly as dsh does', () => {
    const { code, stdout } = cli(['prepare', '--text', `See ${CLAUDE_MENTION}`, '--root', EXAMPLE_STORE, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ content: [{ type: 'text', text: `See ${CLAUDE_MENTION}` }] });
  });

  it('candidates lists every enabled store in one cwd-affinity order, each row naming its agent', () => {
    const { code, stdout } = cli(['candidates', 'work', '--root', EXAMPLE_STORE, '--cwd', PROJ_A, '--json', ...AGENT_FLAGS]);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as Array<{ sessionId: string; agent?: string; mention: string }>;
    expect(rows.map((r) => [r.agent, r.sessionId])).toEqual([
      ['codex', CX_RENAMED],
      ['claude-code', CC_RENAMED],
    ]);
    expect(rows[0]!.mention).toBe('@[Lexer work, renamed](codex-session:IjAxYTIzYjc5LTNlN2QtNzMwMC05MWU4LTRiNDI1ZmJiYjQ0YSI)');
  });

  it('lists and prepares compressed Codex rollouts (.jsonl.zst) as the plain ones', () => {
    const flags = ['--agents', 'codex', '--codex-home', path.join(FIXTURES, 'codex-zst')];
    const rows = cli(['candidates', 'work', '--root', EXAMPLE_STORE, '--cwd', PROJ_A, '--json', ...flags]);
    expect(rows.code).toBe(0);
    expect((JSON.parse(rows.stdout) as Array<{ sessionId: string; label: string }>).map((r) => [r.sessionId, r.label])).toEqual([[CX_RENAMED, 'Lexer work, renamed']]);
    const prepared = cli(['prepare', '--text', `See ${CODEX_MENTION}`, '--root', EXAMPLE_STORE, '--json', ...flags]);
    expect(prepared.code).toBe(0);
    expect((JSON.parse(prepared.stdout) as PreparedReferencedMessage).additionalContext!.content[0]).toMatchObject({
      text: expect.stringContaining('"text":"Fourth turn after the compaction"'),
    });
  });

  it('refuses an unknown agent as a usage error naming it', () => {
    const { code, stderr } = cli(['candidates', '--root', EXAMPLE_STORE, '--agents', 'dsh,aider']);
    expect(stderr).toBe('USAGE: --agents takes a comma-separated list of dsh, claude-code, codex, qwen-code, gemini, opencode; "aider" is none of them\n');
    expect(code).toBe(2);
  });
});

describe('the language server with other agents (stdio)', () => {
  async function started(settings: Record<string, unknown>) {
    const { client, cleanup } = await startServer(
      { workspaceFolders: [{ uri: fileUri(PROJ_A), name: 'proj a' }], rootUri: fileUri(PROJ_A), initializationOptions: { sessionsRoot: EXAMPLE_STORE, ...settings } },
      {},
    );
    cleanups.push(cleanup);
    return client;
  }

  it('completes sessions of every enabled agent, each item showing its agent, and accepts into the foreign scheme', async () => {
    const client = await started({ agents: ['dsh', 'claude-code', 'codex'], claudeCodeHome: CLAUDE_HOME, codexHome: CODEX_HOME });
    const uri = fileUri(path.join(scratch, 'prompt.md'));
    await client.openDocument(uri, '@');
    const list = await pollUntil(async () => {
      const result = (await client.completion(uri, { line: 0, character: 1 })) as CompletionList;
      return result.items.some((item) => (item.detail ?? '').startsWith('[codex]')) ? result : undefined;
    }, 20_000, 'codex items');
    const codex = list.items.find((item) => item.label === 'Lexer work, renamed')!;
    expect(codex.detail).toBe(`[codex] ${PROJ_A}`);
    expect((codex.textEdit as { newText: string }).newText).toContain('](codex-session:');
    const claude = list.items.find((item) => item.label === 'Parser work, renamed')!;
    expect(claude.detail).toBe(`[claude-code] ${PROJ_A}`);
    expect(list.items.some((item) => item.detail === '/home/sam/weather-app')).toBe(true);
  });

  it('publishes an Information that dsh will not expand a foreign mention, offers the preview, and prepares the mix', async () => {
    const client = await started({ agents: ['dsh', 'claude-code', 'codex'], claudeCodeHome: CLAUDE_HOME, codexHome: CODEX_HOME });
    const uri = fileUri(path.join(scratch, 'mixed.md'));
    const text = `Use ${CLAUDE_MENTION} and ${CODEX_MENTION}`;
    await client.openDocument(uri, text);
    const diagnostics = await pollUntil(() => {
      const published = client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === uri);
      const latest = published.at(-1)?.params as { diagnostics: Diagnostic[] } | undefined;
      return latest !== undefined && latest.diagnostics.length === 2 ? latest.diagnostics : undefined;
    }, 20_000, 'diagnostics');
    expect(diagnostics.map((d) => [d.severity, (d.data as { agent: string }).agent])).toEqual([
      [3, 'claude-code'],
      [3, 'codex'],
    ]);
    expect(diagnostics[0]!.message).toContain('dsh itself will not expand this claude-code session "Parser work, renamed"');
    const actions = (await client.request('textDocument/codeAction', {
      textDocument: { uri },
      range: diagnostics[0]!.range,
      context: { diagnostics },
    })) as Array<{ title: string; command?: { command: string } }>;
    expect(actions.some((action) => action.command?.command === SessionCommands.preview)).toBe(true);
    const prepared = await client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { textDocument: { uri } });
    expect(prepared.additionalContext!.source.references.map((r) => r.agent)).toEqual(['claude-code', 'codex']);
  });

  it('with the default agents, a foreign mention gets a Hint naming the agents setting, and prepares as plain text', async () => {
    const client = await started({});
    const uri = fileUri(path.join(scratch, 'plain.md'));
    await client.openDocument(uri, `Use ${CLAUDE_MENTION}`);
    const prepared = await client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { textDocument: { uri } });
    expect(prepared).toEqual({ content: [{ type: 'text', text: `Use ${CLAUDE_MENTION}` }] });
    const published = await client.waitForMessage('textDocument/publishDiagnostics', (params) => (params as { uri: string }).uri === uri);
    const diagnostics = (published.params as { diagnostics: Diagnostic[] }).diagnostics;
    expect(diagnostics.map((d) => [d.severity, d.code, d.source])).toEqual([[4, 'AGENT_NOT_ENABLED', 'dsh-session']]);
    expect(diagnostics[0]!.range).toEqual({ start: { line: 0, character: 4 }, end: { line: 0, character: 4 + CLAUDE_MENTION.length } });
    expect(diagnostics[0]!.message).toContain('claude-code sessions are off');
    expect(diagnostics[0]!.message).toContain('"agents": ["dsh", "claude-code"]');
  });

  it('hovers, links and opens the transcript of a foreign mention; dsh mentions are answered exactly as without other agents', async () => {
    const withAgents = await started({ agents: ['dsh', 'claude-code', 'codex'], claudeCodeHome: CLAUDE_HOME, codexHome: CODEX_HOME });
    const dshOnly = await started({});
    const uri = fileUri(path.join(scratch, 'links.md'));
    const text = `Use ${CLAUDE_MENTION}, ${DSH_MENTION} and ${CODEX_MENTION}`;
    await withAgents.openDocument(uri, text);
    await dshOnly.openDocument(uri, text);
    const at = (needle: string) => ({ line: 0, character: text.indexOf(needle) + 3 });

    const hover = (await withAgents.request('textDocument/hover', { textDocument: { uri }, position: at(CLAUDE_MENTION) })) as { contents: { value: string } } | null;
    expect(hover!.contents.value).toContain('**Parser work, renamed**');
    expect(hover!.contents.value).toContain('- claude-code session: dsh itself reads this mention as plain text');
    expect(await dshOnly.request('textDocument/hover', { textDocument: { uri }, position: at(CLAUDE_MENTION) })).toBeNull();
    // Hovers answer from what is indexed so far: compare once each server's first index is built (a
    // command waits for it) and each has read the dsh session.
    for (const client of [withAgents, dshOnly]) {
      await client.request('workspace/executeCommand', { command: 'dshSession.candidates', arguments: [{}] });
    }
    const dshHover = { textDocument: { uri }, position: at(DSH_MENTION) };
    const indexedHover = (client: typeof dshOnly) =>
      pollUntil(async () => {
        const answer = (await client.request('textDocument/hover', dshHover)) as { contents: { value: string } } | null;
        return answer !== null && answer.contents.value.includes('- context:') ? answer : undefined;
      }, 20_000, 'dsh hover');
    const expectedHover = await indexedHover(dshOnly);
    // The server with other agents settles on exactly that answer (a stale one would time out here).
    const settled = await pollUntil(async () => {
      const answer = await indexedHover(withAgents);
      return JSON.stringify(answer) === JSON.stringify(expectedHover) ? answer : undefined;
    }, 20_000, 'the same dsh hover with other agents');
    expect(settled).toEqual(expectedHover);

    const links = (await withAgents.request('textDocument/documentLink', { textDocument: { uri } })) as Array<{ target: string }>;
    expect(links.map((link) => link.target.split(':')[0])).toEqual(['claude-session', 'dsh-session', 'codex-session']);
    const dshLinks = (await dshOnly.request('textDocument/documentLink', { textDocument: { uri } })) as Array<{ target: string }>;
    expect(dshLinks).toEqual([links[1]]);

    const transcript = await withAgents.executeCommand<string>(SessionCommands.transcript, { sessionId: CX_RENAMED, agent: 'codex' });
    expect(transcript).toContain('- agent: codex (read-only)');
    expect(transcript.indexOf('Hello codex, first turn about the lexer')).toBeGreaterThan(0);
    expect(transcript.indexOf('Fourth turn after the compaction')).toBeGreaterThan(transcript.indexOf('Compaction checkpoint'));
  });
});

describe('Qwen Code sessions through the built CLI and server', () => {
  // Written by Qwen Code 0.24.4 (test/agent-stores/tools/generateQwen.mjs).
  const QWEN_HOME = path.join(FIXTURES, 'qwen-code');
  const QW_TOOL = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e02';
  const QW_CHAT = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01';
  const QWEN_MENTION = formatSessionReferenceMention({ sessionId: QW_TOOL, label: 'Tools', agent: 'qwen-code' });
  const QWEN_FLAGS = ['--agents', 'dsh,qwen-code', '--qwen-code-home', QWEN_HOME];

  it('candidates offers them under the label Qwen Code lists, as qwen-session: mentions, and prepare expands one', () => {
    const rows = cli(['candidates', 'qwen', '--root', EXAMPLE_STORE, '--cwd', PROJ_A, '--json', ...QWEN_FLAGS]);
    expect(rows.code).toBe(0);
    const [first] = JSON.parse(rows.stdout) as Array<{ sessionId: string; agent?: string; label: string; cwd: string; mention: string }>;
    expect(first).toMatchObject({ sessionId: QW_TOOL, agent: 'qwen-code', label: 'Qwen tool work, renamed', cwd: PROJ_A });
    expect(first!.mention).toBe(formatSessionReferenceMention({ sessionId: QW_TOOL, label: 'Qwen tool work, renamed', agent: 'qwen-code' }));
    expect(first!.mention).toContain('](qwen-session:');
    const prepared = cli(['prepare', '--text', `See ${QWEN_MENTION}`, '--root', EXAMPLE_STORE, '--json', ...QWEN_FLAGS]);
    expect(prepared.stderr).toBe('');
    const text = ((JSON.parse(prepared.stdout) as PreparedReferencedMessage).additionalContext!.content[0] as { text: string }).text;
    expect(text).toContain(`{"agent":"qwen-code","sessionId":"${QW_TOOL}","label":"Tools","cwd":"${PROJ_A}"`);
    expect(text).toContain('"text":"Second turn, another process: READ the notes file"');
    expect(text).not.toContain('fixture notes');
  });

  it('completes, hovers and keeps fresh: a rename Qwen Code writes while the server runs shows in completion', async () => {
    const home = path.join(scratch, 'qwen-home');
    cpSync(QWEN_HOME, home, { recursive: true });
    const { client, cleanup } = await startServer(
      { workspaceFolders: [{ uri: fileUri(PROJ_A), name: 'proj a' }], rootUri: fileUri(PROJ_A), initializationOptions: { sessionsRoot: EXAMPLE_STORE, agents: ['dsh', 'qwen-code'], qwenCodeHome: home } },
      {},
    );
    cleanups.push(cleanup);
    const uri = fileUri(path.join(scratch, 'qwen.md'));
    await client.openDocument(uri, '@');
    const labelled = (label: string) =>
      pollUntil(async () => {
        const result = (await client.completion(uri, { line: 0, character: 1 })) as CompletionList;
        return result.items.find((item) => item.label === label);
      }, 20_000, label);
    const item = await labelled('Qwen tool work, renamed');
    expect(item.detail).toBe(`[qwen-code] ${PROJ_A}`);
    expect((item.textEdit as { newText: string }).newText).toContain('](qwen-session:');

    const text = `Use ${QWEN_MENTION}`;
    await client.openDocument(fileUri(path.join(scratch, 'qwen-hover.md')), text);
    const hover = (await client.request('textDocument/hover', { textDocument: { uri: fileUri(path.join(scratch, 'qwen-hover.md')) }, position: { line: 0, character: 7 } })) as { contents: { value: string } } | null;
    expect(hover!.contents.value).toContain('**Qwen tool work, renamed**');
    expect(hover!.contents.value).toContain('- qwen-code session: dsh itself reads this mention as plain text');

    // Qwen Code's /rename appends a custom_title record chained to the last one.
    const file = path.join(home, 'projects', '-tmp-dsh-agent-fixtures-proj----q', 'chats', `${QW_CHAT}.jsonl`);
    const last = JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!) as { uuid: string; sessionId: string; cwd: string };
    const rename = { uuid: 'f0000000-0000-4000-8000-0000000000aa', parentUuid: last.uuid, sessionId: last.sessionId, cwd: last.cwd, type: 'system', subtype: 'custom_title', systemPayload: { customTitle: 'Renamed while served', titleSource: 'manual' } };
    appendFileSync(file, JSON.stringify(rename) + '\n');
    expect((await labelled('Renamed while served')).detail).toBe('[qwen-code] /tmp/dsh-agent-fixtures/proj 日本 q');
  });
});

describe('Gemini CLI sessions end to end (real sessions: test/agent-stores/tools/generateGemini.mjs)', () => {
  const GEMINI_HOME = path.join(FIXTURES, 'gemini');
  const GM_TITLED = 'a1000001-7a1e-4c5d-9b2a-3f4e5d6c7b01';
  const GM_COMPRESSED = 'c3000003-7a1e-4c5d-9b2a-3f4e5d6c7b03';
  const GM_PROJ_A = '/tmp/dsh-agent-fixtures-gemini/proj a';
  const GEMINI_MENTION = formatSessionReferenceMention({ sessionId: GM_COMPRESSED, label: 'Compressed', agent: 'gemini' });

  it('candidates and prepare read Gemini CLI’s home from --gemini-home, and from $GEMINI_CLI_HOME/.gemini by default', () => {
    const rows = cli(['candidates', 'parser', '--root', EXAMPLE_STORE, '--cwd', GM_PROJ_A, '--json', '--agents', 'dsh,gemini', '--gemini-home', GEMINI_HOME]);
    expect(rows.code).toBe(0);
    const found = JSON.parse(rows.stdout) as Array<{ sessionId: string; agent?: string; label: string; cwd: string; mention: string }>;
    expect(found[0]).toMatchObject({ sessionId: GM_TITLED, agent: 'gemini', label: 'Fixture work on the 日本語 parser', cwd: GM_PROJ_A });
    expect(found[0]!.mention).toContain('](gemini-session:');
    // GEMINI_CLI_HOME names the folder that holds .gemini, as it does for the CLI.
    const userHome = path.join(scratch, 'gemini-user');
    mkdirSync(userHome, { recursive: true });
    symlinkSync(GEMINI_HOME, path.join(userHome, '.gemini'));
    const prompt = path.join(scratch, 'gemini.md');
    writeFileSync(prompt, `Continue ${GEMINI_MENTION}.\n`);
    const result = spawnSync(process.execPath, [SERVER_BIN, 'prepare', '--file', prompt, '--root', EXAMPLE_STORE, '--json', '--agents', 'gemini'], {
      cwd: scratch,
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), GEMINI_CLI_HOME: userHome },
      timeout: 60_000,
    });
    expect(result.stderr).toBe('');
    const prepared = JSON.parse(result.stdout) as PreparedReferencedMessage;
    expect(prepared.additionalContext!.source.references).toMatchObject([{ agent: 'gemini', sessionId: GM_COMPRESSED, compacted: true }]);
    const text = (prepared.additionalContext!.content[0] as { text: string }).text;
    expect(text).toContain('state_snapshot>');
    expect(text).toContain('"text":"After the compression, 日本語 once more"');
    // Tool output (the shell's, with its process group) is left out, as for the other agents.
    expect(text).not.toContain('Process Group PGID');
  });

  it('the language server completes, hovers and stays fresh as Gemini CLI writes', async () => {
    const home = path.join(scratch, 'gemini-home');
    cpSync(GEMINI_HOME, home, { recursive: true });
    const { client, cleanup } = await startServer(
      { workspaceFolders: [{ uri: fileUri(GM_PROJ_A), name: 'proj a' }], rootUri: fileUri(GM_PROJ_A), initializationOptions: { sessionsRoot: EXAMPLE_STORE, agents: ['dsh', 'gemini'], geminiHome: home } },
      {},
    );
    cleanups.push(cleanup);
    const uri = fileUri(path.join(scratch, 'gemini-prompt.md'));
    await client.openDocument(uri, '@');
    const geminiItems = async (label: string) => {
      const result = (await client.completion(uri, { line: 0, character: 1 })) as CompletionList;
      const item = result.items.find((candidate) => candidate.label === label);
      return item !== undefined && (item.detail ?? '').startsWith('[gemini]') ? item : undefined;
    };
    const titled = await pollUntil(() => geminiItems('Fixture work on the 日本語 parser'), 20_000, 'gemini items');
    expect(titled.detail).toBe(`[gemini] ${GM_PROJ_A}`);
    // The CLI titles the session later: a $set line appended to its file.
    const chats = path.join(home, 'tmp', 'proj-a', 'chats');
    appendFileSync(path.join(chats, readdirSync(chats).find((name) => name.includes('a1000001'))!), JSON.stringify({ $set: { summary: 'Retitled by the CLI' } }) + '\n');
    await pollUntil(() => geminiItems('Retitled by the CLI'), 20_000, 'the new title');
    const hoverText = `See ${GEMINI_MENTION}`;
    await client.openDocument(fileUri(path.join(scratch, 'gemini-hover.md')), hoverText);
    const hover = (await client.request('textDocument/hover', {
      textDocument: { uri: fileUri(path.join(scratch, 'gemini-hover.md')) },
      position: { line: 0, character: hoverText.indexOf(GEMINI_MENTION) + 3 },
    })) as { contents: { value: string } } | null;
    expect(hover!.contents.value).toContain('**: compress me later**');
    expect(hover!.contents.value).toContain('- gemini session: dsh itself reads this mention as plain text');
  });
});

// opencode's database (opencode 1.18.33, test/agent-stores/tools/generateOpencode.mjs); the CLI runs on this Node.
const OPENCODE_HOME = path.join(FIXTURES, 'opencode');
const OC_COMPACTED = 'ses_db52854d9ffe6CloKsBV65ABRm';
const OPENCODE_MENTION = formatSessionReferenceMention({ sessionId: OC_COMPACTED, label: 'Compressed', agent: 'opencode' });
const OPENCODE_FLAGS = ['--agents', 'dsh,opencode', '--opencode-home', OPENCODE_HOME];
const HAS_SQLITE = (process.getBuiltinModule?.('node:sqlite') as object | undefined) !== undefined;

describe.skipIf(!HAS_SQLITE)('dsh-session-ls with opencode (CLI; needs node:sqlite, Node 22.13 or newer)', () => {
  it('lists opencode sessions under their titles and prepares one as the history opencode resumes, writing nothing', () => {
    const rows = cli(['candidates', '--root', EXAMPLE_STORE, '--cwd', '/tmp/dsh-opencode-fixtures/proj ü 日本', '--json', ...OPENCODE_FLAGS]);
    expect(rows.stderr).toBe('');
    const listed = (JSON.parse(rows.stdout) as Array<{ sessionId: string; agent?: string; label: string; mention: string }>).filter((row) => row.agent === 'opencode');
    expect(listed.map((row) => row.label)).toEqual(['圧縮された 日本語 session', 'Tool and file read', 'Fixture title: hello, a short chat']);
    expect(listed[0]!.mention).toBe(`@[圧縮された 日本語 session](opencode-session:${OPENCODE_MENTION.split('opencode-session:')[1]}`);
    const prepared = cli(['prepare', '--text', `See ${OPENCODE_MENTION}`, '--root', EXAMPLE_STORE, '--json', ...OPENCODE_FLAGS]);
    expect(prepared.stderr).toBe('');
    expect(prepared.code).toBe(0);
    const text = ((JSON.parse(prepared.stdout) as PreparedReferencedMessage).additionalContext!.content[0] as { text: string }).text;
    expect(text).toContain(`{"agent":"opencode","sessionId":"${OC_COMPACTED}","label":"Compressed"`);
    expect(text).toContain('"conversation":[{"role":"user","text":"Summary: the user asked about fixtures, 日本語のテキストと圧縮. Continue from here."},{"role":"user","text":"圧縮の後の質問"}');
    expect(readdirSync(OPENCODE_HOME).sort()).toEqual(['opencode.db', 'opencode.db-wal']);
  });
});

describe.skipIf(HAS_SQLITE)('dsh-session-ls with opencode on a Node without node:sqlite (before 22.13)', () => {
  it('says plainly that opencode needs a newer Node and which agents work, and fails an opencode mention with that reason', () => {
    const said = `opencode sessions need Node 22.13 or newer, for node:sqlite; this is Node ${process.versions.node}, where dsh, Claude Code, Codex, Qwen Code and Gemini CLI sessions still work`;
    const rows = cli(['candidates', '--root', EXAMPLE_STORE, '--agents', 'opencode', '--opencode-home', OPENCODE_HOME]);
    expect(rows.code).toBe(0);
    expect(rows.stdout).toContain(`No sessions found in the opencode home ${OPENCODE_HOME} (${said})`);
    expect(rows.stderr).toBe(`[dsh-session-ls] opencode store: ${said}\n`);
    const prepared = cli(['prepare', '--text', `See ${OPENCODE_MENTION}`, '--root', EXAMPLE_STORE, ...OPENCODE_FLAGS]);
    expect(prepared.code).not.toBe(0);
    expect(prepared.stderr).toContain(`SESSION_REFERENCE_READ_FAILED: failed to read referenced session: ${said}`);
  });
});
