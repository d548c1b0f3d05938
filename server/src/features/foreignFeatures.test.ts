import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionCommands, encodeAgentSessionUri, encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { DiagnosticSeverity, type MarkupContent } from 'vscode-languageserver-types';
import { provideDocumentLinks } from './documentLinks';
import { executeSessionCommand } from './commands';
import { computeDiagnostics } from './diagnostics';
import { predictedPrepareError } from '../testing/prepareError';
import { AGENT_NOT_ENABLED_CODE, foreignAgentsEnabled } from './foreignMentions';
import { provideMentionHover } from './hover';
import { provideSessionCompletion } from './completion';
import { loadSqlite } from '../store/engine/databaseSnapshot';
import { analyzeMentions, findDocumentMentions, sessionKey } from './mentionAnalysis';
import { conversationSession } from '../testing/mentionFixtures';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

// Stores written by the real CLIs (Claude Code 2.1.197, codex-cli 0.171.0): test/agent-stores/tools/generate.mjs.
const FIXTURES = fileURLToPath(new URL('../../../test/agent-stores/fixtures/', import.meta.url));
const CLAUDE_HOME = path.join(FIXTURES, 'claude-code');
const CODEX_HOME = path.join(FIXTURES, 'codex');
const CC_RENAMED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const CX_RENAMED = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';
const NOW = Date.UTC(2027, 0, 10);
const ALL_AGENTS = { agents: ['dsh', 'claude-code', 'codex'], claudeCodeHome: CLAUDE_HOME, codexHome: CODEX_HOME };

const claude = (label = 'Parser') => formatSessionReferenceMention({ sessionId: CC_RENAMED, label, agent: 'claude-code' });
const codex = (label = 'Lexer') => formatSessionReferenceMention({ sessionId: CX_RENAMED, label, agent: 'codex' });

// A dsh session that shares the Codex session's id: the two must never be taken for one another.
const DSH_SESSIONS = [conversationSession(CX_RENAMED, { cwd: '/w', title: 'dsh twin', createdAt: NOW - 86_400_000 }), conversationSession('a', { cwd: '/w', title: 'Alpha' })];

// Workspaces are disposed after each test: a store may hold resources (opencode's: a snapshot of its database).
const openWorkspaces: Array<{ dispose(): void }> = [];
afterEach(() => openWorkspaces.splice(0).forEach((workspace) => workspace.dispose()));

function workspaceWith(text: string, section: Record<string, unknown> = ALL_AGENTS) {
  const document = openDocument('file:///w/m.md', text);
  const { workspace } = testWorkspace(DSH_SESSIONS, { folders: ['/w'], documents: [document], now: NOW, section });
  openWorkspaces.push(workspace);
  return { document, services: workspace.view({ partial: true }) };
}

async function hoverOver(text: string, needle: string, section?: Record<string, unknown>) {
  const { document, services } = workspaceWith(text, section);
  const hover = await provideMentionHover(document, document.positionAt(text.indexOf(needle) + 3), services);
  return (hover?.contents as MarkupContent | undefined)?.value;
}

describe('hover on another agent’s mention', () => {
  it('previews the Claude Code session under its own title, with what dsh and prepare do with it', async () => {
    const text = `see ${claude('Old label')} now`;
    const value = (await hoverOver(text, claude('Old label'))) ?? '';
    expect(value).toContain('**Parser work, renamed**');
    expect(value).toContain('- mentioned as: Old label');
    expect(value).toContain('cwd: /tmp/dsh-agent-fixtures/proj a');
    expect(value).toContain('- claude-code session: dsh itself reads this mention as plain text');
    expect(value).toMatch(/- context: [\d,]+ bytes of 65,536 bytes/);
  });

  it('keys sessions by agent and id: a Codex session and a dsh session with the same id stay apart', async () => {
    const dsh = formatSessionReferenceMention({ sessionId: CX_RENAMED, label: 'twin' });
    const text = `${codex()} and ${dsh}`;
    const foreign = (await hoverOver(text, codex())) ?? '';
    expect(foreign).toContain('**Lexer work, renamed**');
    expect(foreign).toContain('- codex session:');
    const own = (await hoverOver(text, dsh)) ?? '';
    expect(own).toContain('**dsh twin**');
    expect(own).not.toContain('codex session');
  });

  it('with only dsh enabled (the default) is no hover at all, and dsh mentions hover exactly as before', async () => {
    const text = `${claude()} ${formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha' })}`;
    expect(await hoverOver(text, claude(), {})).toBeUndefined();
    const withAgents = await hoverOver(text, '@[Alpha]', ALL_AGENTS);
    const without = await hoverOver(text, '@[Alpha]', {});
    expect(withAgents).toBe(without);
    expect(without).toContain('**Alpha**');
  });

  it('says a foreign session of an agent that is not enabled cannot be read, and a malformed one is refused by prepare', async () => {
    const onlyCodex = { ...ALL_AGENTS, agents: ['dsh', 'codex'] };
    expect(await hoverOver(`x ${claude()}`, claude(), onlyCodex)).toContain('claude-code is not among the enabled agents');
    expect(await hoverOver('x @[b](codex-session:IiJ)', '@[b]')).toContain('**Malformed codex session mention**');
  });
});

describe('diagnostics of another agent’s mention while that agent is off', () => {
  async function diagnose(text: string, section: Record<string, unknown>) {
    const { document, services } = workspaceWith(text, section);
    await services.sessions.listSessions();
    return computeDiagnostics(document, services);
  }
  const hints = (diagnostics: Awaited<ReturnType<typeof diagnose>>) => diagnostics.filter((d) => d.code === AGENT_NOT_ENABLED_CODE);

  it('with the default agents: one Hint per mention naming the agents setting; nothing else, and prepare keeps the text', async () => {
    const dsh = formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha' });
    const text = `${claude()} ${dsh} ${codex()} @[m](codex-session:IiJ)`;
    const diagnostics = await diagnose(text, {});
    expect(diagnostics.map((d) => [d.severity, d.code, (d.data as { agent?: string }).agent])).toEqual([
      [DiagnosticSeverity.Hint, AGENT_NOT_ENABLED_CODE, 'claude-code'],
      [DiagnosticSeverity.Hint, AGENT_NOT_ENABLED_CODE, 'codex'],
      [DiagnosticSeverity.Hint, AGENT_NOT_ENABLED_CODE, 'codex'],
    ]);
    expect(diagnostics[0]!.message).toBe(
      'claude-code sessions are off, so dsh and prepare read this mention as plain text. To read it, turn claude-code on in the agents setting: "agents": ["dsh", "claude-code"].',
    );
    expect(diagnostics[0]!.range).toEqual({ start: { line: 0, character: 0 }, end: { line: 0, character: claude().length } });
    // No error: prepare succeeds, and keeps the mentions as text.
    expect(predictedPrepareError(diagnostics)).toBeUndefined();
    const { services } = workspaceWith(text, {});
    expect(await executeSessionCommand(SessionCommands.prepare, [{ text }], services)).toMatchObject({ content: [{ type: 'text' }] });
  });

  it('with another agent on: the Hint says prepare would fail to read it, and shows the setting with that agent added', async () => {
    const diagnostics = await diagnose(`${claude()} ${codex()}`, { ...ALL_AGENTS, agents: ['dsh', 'codex'] });
    const [hint, ...others] = hints(diagnostics);
    expect(others).toEqual([]);
    expect(hint).toMatchObject({ severity: DiagnosticSeverity.Hint, data: { kind: 'agent-off', agent: 'claude-code', sessionId: CC_RENAMED } });
    expect(hint!.message).toBe(
      'claude-code sessions are off, so prepare would fail to read this mention. To read it, turn claude-code on in the agents setting: "agents": ["dsh", "codex", "claude-code"].',
    );
    // Its other diagnostics stay: dsh will not expand it either.
    expect(diagnostics.filter((d) => (d.data as { agent?: string }).agent === 'claude-code').map((d) => d.severity)).toEqual([
      DiagnosticSeverity.Hint,
      DiagnosticSeverity.Information,
    ]);
  });

  it('with every agent on, no Hint', async () => {
    expect(hints(await diagnose(`${claude()} ${codex()}`, ALL_AGENTS))).toEqual([]);
  });
});

describe('mention analysis keyed by agent and id', () => {
  it('counts dsh’s sessions among dsh’s only, as dsh does; a foreign one among all, as our prepare does', async () => {
    const { services } = workspaceWith('');
    const text = `${codex()} ${claude()} ${encodeSessionReferenceUri('a')}`;
    const analysis = await analyzeMentions(text, {
      sessions: services.sessions,
      target: {},
      config: { ...services.resolver().config, maxReferences: 1 },
      indexing: false,
      foreign: true,
    });
    expect(analysis.sessions.map((s) => [s.agent ?? 'dsh', s.order, s.overLimit])).toEqual([
      ['codex', 0, false],
      ['claude-code', 1, true],
      ['dsh', 0, false],
    ]);
    expect(analysis.byKey.get(sessionKey(CX_RENAMED, 'codex'))!.title).toBe('Lexer work, renamed');
    // Without the scope the same text is dsh's alone.
    expect(findDocumentMentions(text).map((m) => m.agent ?? 'dsh')).toEqual(['dsh']);
  });
});

describe('document links of another agent’s mentions', () => {
  it('link to the session’s own scheme when another agent is enabled; dsh’s links are unchanged', () => {
    const dsh = formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha' });
    const document = openDocument('file:///w/m.md', `${claude()} ${dsh} ${codex()}`);
    const links = provideDocumentLinks(document, { foreign: true });
    expect(links.map((link) => [link.target, link.tooltip])).toEqual([
      [encodeAgentSessionUri('claude-code', CC_RENAMED), 'Open the claude-code session Parser'],
      [encodeSessionReferenceUri('a'), 'Open the session Alpha'],
      [encodeAgentSessionUri('codex', CX_RENAMED), 'Open the codex session Lexer'],
    ]);
    expect(provideDocumentLinks(document)).toEqual([links[1]]);
  });
});

describe('dshSession.transcript of another agent’s session', () => {
  it('reads the whole Claude Code transcript, with the compaction where it happened', async () => {
    const { services } = workspaceWith('');
    expect(foreignAgentsEnabled(services)).toBe(true);
    const markdown = await executeSessionCommand(SessionCommands.transcript, [{ sessionId: CC_RENAMED, agent: 'claude-code' }], services);
    expect(markdown.startsWith('# Parser work, renamed\n')).toBe(true);
    expect(markdown).toContain('- agent: claude-code (read-only)');
    expect(markdown).toContain('- 6 messages, as the user saw them');
    // The turns before the compaction stay in the transcript; the summary sits where it happened.
    const order = ['Hello, first turn about the parser', 'Compaction checkpoint', 'the 4 earlier messages it replaced', 'After the compaction, one more turn'];
    const at = order.map((text) => markdown.indexOf(text));
    expect(at.every((offset) => offset > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('reads the whole Codex rollout', async () => {
    const { services } = workspaceWith('');
    const markdown = await executeSessionCommand(SessionCommands.transcript, [{ sessionId: CX_RENAMED, agent: 'codex' }], services);
    expect(markdown.startsWith('# Lexer work, renamed\n')).toBe(true);
    const order = ['Hello codex, first turn about the lexer', 'Third turn: BIG answer please', 'Compaction checkpoint', 'Fourth turn after the compaction'];
    const at = order.map((text) => markdown.indexOf(text));
    expect(at.every((offset) => offset > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('refuses an unknown agent, and fails to read an agent that is not enabled; a dsh id is still dsh’s', async () => {
    const { services } = workspaceWith('', { ...ALL_AGENTS, agents: ['dsh', 'codex'] });
    await expect(executeSessionCommand(SessionCommands.transcript, [{ sessionId: CC_RENAMED, agent: 'aider' }], services)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_INVALID_REFERENCE',
    });
    await expect(executeSessionCommand(SessionCommands.transcript, [{ sessionId: CC_RENAMED, agent: 'claude-code' }], services)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_READ_FAILED',
      message: expect.stringContaining('claude-code is not among the enabled agents'),
    });
    const { services: dshOnly } = workspaceWith('', {});
    await expect(executeSessionCommand(SessionCommands.transcript, [{ sessionId: CX_RENAMED, agent: 'codex' }], dshOnly)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_READ_FAILED',
    });
  });
});

describe('Qwen Code sessions in the language service', () => {
  // Written by Qwen Code 0.24.4: test/agent-stores/tools/generateQwen.mjs.
  const QW_TOOL = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e02';
  const QW_COMPRESSED = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e03';
  const WITH_QWEN = { agents: ['dsh', 'qwen-code'], qwenCodeHome: path.join(FIXTURES, 'qwen-code') };
  const qwen = (label = 'Tools') => formatSessionReferenceMention({ sessionId: QW_TOOL, label, agent: 'qwen-code' });

  it('hovers a qwen-session: mention with the title Qwen Code lists, its cwd and what dsh does with it', async () => {
    const text = `see ${qwen('Old label')} now`;
    expect(text).toContain('](qwen-session:');
    const value = (await hoverOver(text, qwen('Old label'), WITH_QWEN)) ?? '';
    expect(value).toContain('**Qwen tool work, renamed**');
    expect(value).toContain('- mentioned as: Old label');
    expect(value).toContain('cwd: /tmp/dsh-agent-fixtures/proj a');
    expect(value).toContain('- qwen-code session: dsh itself reads this mention as plain text');
    expect(value).toMatch(/- context: [\d,]+ bytes of 65,536 bytes/);
  });

  it('gives the Hint naming the agents setting while qwen-code is off, and none once it is on', async () => {
    const { document, services } = workspaceWith(qwen(), {});
    await services.sessions.listSessions();
    const off = await computeDiagnostics(document, services);
    expect(off.map((d) => [d.severity, d.code, (d.data as { agent?: string }).agent])).toEqual([[DiagnosticSeverity.Hint, AGENT_NOT_ENABLED_CODE, 'qwen-code']]);
    expect(off[0]!.message).toContain('turn qwen-code on in the agents setting: "agents": ["dsh", "qwen-code"]');
    const on = workspaceWith(qwen(), WITH_QWEN);
    await on.services.sessions.listSessions();
    const diagnostics = await computeDiagnostics(on.document, on.services);
    expect(diagnostics.filter((d) => d.code === AGENT_NOT_ENABLED_CODE)).toEqual([]);
    expect(predictedPrepareError(diagnostics)).toBeUndefined();
  });

  it('reads the whole session as its transcript: every turn, the /compress summary where it happened', async () => {
    const { services } = workspaceWith('', WITH_QWEN);
    const markdown = await executeSessionCommand(SessionCommands.transcript, [{ sessionId: QW_COMPRESSED, agent: 'qwen-code' }], services);
    expect(markdown.startsWith('# 日本語のテキストについて話しましょう: a session to compress\n')).toBe(true);
    expect(markdown).toContain('- agent: qwen-code (read-only)');
    const order = ['日本語のテキストについて話しましょう', '第二のターン: the second turn, 中文也可以', 'Compaction checkpoint', 'After the compression, one more turn 最後'];
    const at = order.map((text) => markdown.indexOf(text));
    expect(at.every((offset) => offset > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('prepares a qwen-session: mention into the context of what a resume gives the model', async () => {
    const { services } = workspaceWith('', WITH_QWEN);
    const prepared = await executeSessionCommand(SessionCommands.prepare, [{ text: `${qwen()} what did we run?` }], services);
    const context = JSON.stringify(prepared);
    expect(context).toContain('Second turn, another process: READ the notes file');
    expect(context).not.toContain('fixture notes');
    expect(context).toContain('\\"agent\\":\\"qwen-code\\"');
  });
});

describe('Gemini CLI sessions in every feature (real sessions: test/agent-stores/tools/generateGemini.mjs)', () => {
  const GEMINI_HOME = path.join(FIXTURES, 'gemini');
  const GM_COMPRESSED = 'c3000003-7a1e-4c5d-9b2a-3f4e5d6c7b03';
  const WITH_GEMINI = { agents: ['dsh', 'gemini'], geminiHome: GEMINI_HOME };
  const mention = (label = 'Compressed') => formatSessionReferenceMention({ sessionId: GM_COMPRESSED, label, agent: 'gemini' });

  it('mentions use gemini-session: with the same payload as dsh-session:', () => {
    expect(mention()).toBe(`@[Compressed](gemini-session:${encodeSessionReferenceUri(GM_COMPRESSED).slice('dsh-session:'.length)})`);
  });

  it('hovers with the title and folder Gemini CLI shows, and what dsh and prepare do with it', async () => {
    const text = `see ${mention('Old')} now`;
    const value = (await hoverOver(text, mention('Old'), WITH_GEMINI)) ?? '';
    expect(value).toContain('**: compress me later**');
    expect(value).toContain('cwd: /tmp/dsh-agent-fixtures-gemini/proj 日本');
    expect(value).toContain('- gemini session: dsh itself reads this mention as plain text');
  });

  it('completes @ with Gemini CLI sessions, and gives a mention that prepare reads', async () => {
    const text = '@compress';
    const { document, services } = workspaceWith(text, WITH_GEMINI);
    const list = await provideSessionCompletion(document, document.positionAt(text.length), services);
    const item = list.items.find((candidate) => String(candidate.textEdit?.newText ?? '').includes('gemini-session:'));
    expect(item?.label).toContain('compress me later');
    // The edit replaces what follows the typed @.
    const written = workspaceWith(`@${String(item!.textEdit!.newText)}`, WITH_GEMINI);
    await written.services.sessions.listSessions();
    const diagnostics = await computeDiagnostics(written.document, written.services);
    expect(predictedPrepareError(diagnostics)).toBeUndefined();
    const prepared = await executeSessionCommand(SessionCommands.prepare, [{ text: written.document.getText() }], written.services);
    expect(JSON.stringify(prepared)).toContain('state_snapshot');
  });

  it('hints while Gemini CLI is off, naming the setting with it added', async () => {
    const { document, services } = workspaceWith(mention(), {});
    await services.sessions.listSessions();
    const diagnostics = await computeDiagnostics(document, services);
    expect(diagnostics.map((d) => [d.severity, d.code])).toEqual([[DiagnosticSeverity.Hint, AGENT_NOT_ENABLED_CODE]]);
    expect(diagnostics[0]!.message).toContain('"agents": ["dsh", "gemini"]');
  });

  it('reads the whole session as the user saw it, the compression where it happened', async () => {
    const { services } = workspaceWith('', WITH_GEMINI);
    const markdown = await executeSessionCommand(SessionCommands.transcript, [{ sessionId: GM_COMPRESSED, agent: 'gemini' }], services);
    expect(markdown.startsWith('# : compress me later\n')).toBe(true);
    expect(markdown).toContain('- agent: gemini (read-only)');
    const order = ['日本語のセッション: compress me later', 'Second turn: BIG TOOL please', 'Compaction checkpoint', 'After the compression, 日本語 once more'];
    const at = order.map((part) => markdown.indexOf(part));
    expect(at.every((offset) => offset > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});

// opencode's database (opencode 1.18.33: test/agent-stores/tools/generateOpencode.mjs), read on a Node with node:sqlite.
const OPENCODE = { agents: ['dsh', 'opencode'], opencodeHome: path.join(FIXTURES, 'opencode') };
const OC_COMPACTED = 'ses_db52854d9ffe6CloKsBV65ABRm';
const opencode = (label = 'Compressed') => formatSessionReferenceMention({ sessionId: OC_COMPACTED, label, agent: 'opencode' });

describe.skipIf(loadSqlite() === undefined)('opencode mentions (needs node:sqlite, Node 22.13 or newer)', () => {
  it('completes opencode sessions into its scheme, hovers one under its title, with no error diagnostic', async () => {
    const text = 'ask @圧縮';
    const { document, services } = workspaceWith(text, OPENCODE);
    await services.sessions.listSessions();
    const list = await provideSessionCompletion(document, document.positionAt(text.length), services);
    const item = list.items.find((candidate) => (candidate.data as { agent?: string } | undefined)?.agent === 'opencode');
    expect((item?.textEdit as { newText: string } | undefined)?.newText).toContain('(opencode-session:');
    const mention = `see ${opencode('Old label')} now`;
    const value = (await hoverOver(mention, opencode('Old label'), OPENCODE)) ?? '';
    expect(value).toContain('**圧縮された 日本語 session**');
    expect(value).toContain('cwd: /tmp/dsh-opencode-fixtures/proj ü 日本');
    expect(value).toContain('- opencode session: dsh itself reads this mention as plain text');
    const { document: prompt, services: promptServices } = workspaceWith(mention, OPENCODE);
    await promptServices.sessions.listSessions();
    expect(predictedPrepareError(await computeDiagnostics(prompt, promptServices))).toBeUndefined();
  });

  it('prepares the history opencode resumes, and opens its whole transcript with the compaction where it happened', async () => {
    const { services } = workspaceWith('', OPENCODE);
    const prepared = await executeSessionCommand(SessionCommands.prepare, [{ text: `see ${opencode()}` }], services);
    const context = (prepared.additionalContext!.content[0] as { text: string }).text;
    expect(context).toContain('"text":"圧縮の後の質問"');
    expect(context).not.toContain('二番目の質問です');
    const markdown = await executeSessionCommand(SessionCommands.transcript, [{ sessionId: OC_COMPACTED, agent: 'opencode' }], services);
    expect(markdown.startsWith('# 圧縮された 日本語 session\n')).toBe(true);
    const at = ['日本語で話しましょう、圧縮のテスト', '二番目の質問です', 'Summary: the user asked about fixtures', '圧縮の後の質問'].map((needle) => markdown.indexOf(needle));
    expect(at.every((offset) => offset > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});

describe.skipIf(loadSqlite() !== undefined)('opencode mentions on a Node without node:sqlite (before 22.13)', () => {
  it('hover and prepare say opencode sessions need a newer Node', async () => {
    const value = (await hoverOver(`see ${opencode()}`, opencode(), OPENCODE)) ?? '';
    expect(value).toContain('opencode sessions need Node 22.13 or newer');
    const { services } = workspaceWith('', OPENCODE);
    await expect(executeSessionCommand(SessionCommands.prepare, [{ text: `see ${opencode()}` }], services)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_READ_FAILED',
      message: expect.stringContaining('opencode sessions need Node 22.13 or newer'),
    });
  });
});
