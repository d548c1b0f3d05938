import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SESSION_STATUS_NOTIFICATION, encodeAgentSessionUri, encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { ResponseError } from 'vscode-jsonrpc';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('vscode', () => import('./testing/fakeVscode.js'));
vi.mock('vscode-languageclient/node', async () => ({
  ...(await import('vscode-languageserver-protocol')),
  ...(await import('./testing/fakeLanguageClient.js')),
}));

import { activate, deactivate } from './extension';
import { LanguageClient, TransportKind } from './testing/fakeLanguageClient';
import { FakeTextDocument, FakeTextEditor, Position, Selection, Uri, recorded, resetFakeVscode, window } from './testing/fakeVscode';

const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
const NOW = Date.now();

function context() {
  return { subscriptions: [] as Array<{ dispose(): unknown }>, asAbsolutePath: (relative: string) => path.posix.join('/ext', relative) };
}

function client(): LanguageClient {
  return LanguageClient.last!;
}

/** Open a document in the active editor with the cursor at the `|` marker (removed). */
function openEditor(uri: string, languageId: string, textWithCursor: string): FakeTextEditor {
  const offset = textWithCursor.indexOf('|');
  const text = textWithCursor.replace('|', '');
  const before = text.slice(0, offset).split('\n');
  const cursor = new Position(before.length - 1, before[before.length - 1]!.length);
  const editor = new FakeTextEditor(new FakeTextDocument(Uri.parse(uri), languageId, text), [new Selection(cursor, cursor)]);
  window.activeTextEditor = editor;
  return editor;
}

/** Answer executeCommand requests by command name. */
function serverAnswers(byCommand: Record<string, (argument: any) => unknown>): void {
  LanguageClient.answer = async (method, params) => {
    expect(method).toBe('workspace/executeCommand');
    const answer = byCommand[params.command];
    if (!answer) throw new Error(`unexpected command ${params.command}`);
    return answer(params.arguments[0]);
  };
}

function executedCommands(): Array<{ command: string; argument: unknown }> {
  return client().requests.map((r) => ({ command: r.params.command, argument: r.params.arguments[0] }));
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

function runCommand(id: string): Promise<unknown> {
  const command = recorded.commands.get(id);
  if (!command) throw new Error(`command ${id} is not registered`);
  return Promise.resolve(command());
}

beforeEach(async () => {
  resetFakeVscode();
  LanguageClient.answer = async (method) => {
    throw new Error(`unexpected request ${method}`);
  };
});

afterEach(async () => {
  await deactivate();
});

describe('activation', () => {
  it('registers every command the manifest contributes, and the content providers (previews, transcripts of every agent)', async () => {
    await activate(context() as never);
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    expect([...recorded.commands.keys()].sort()).toEqual(contributed);
    expect([...recorded.contentProviders.keys()].sort()).toEqual(['claude-session', 'codex-session', 'dsh-preview', 'dsh-session', 'gemini-session', 'opencode-session', 'qwen-session']);
  });

  it('starts the bundled server over IPC with node, from dist/server.js', async () => {
    await activate(context() as never);
    expect(client().started).toBe(true);
    expect(client().serverOptions.run).toEqual({ module: '/ext/dist/server.js', transport: TransportKind.ipc });
    expect(client().serverOptions.debug).toMatchObject({ module: '/ext/dist/server.js', transport: TransportKind.ipc });
    expect(manifest.files).toContain('dist/server.js');
  });

  it('serves Markdown, plain text and prompt files, on disk and untitled, and no virtual documents', async () => {
    await activate(context() as never);
    const selector = client().clientOptions.documentSelector;
    for (const language of ['markdown', 'plaintext', 'dsh-prompt']) {
      expect(selector).toContainEqual({ scheme: 'file', language });
      expect(selector).toContainEqual({ scheme: 'untitled', language });
    }
    expect(selector).toContainEqual({ scheme: 'file', pattern: '**/*.prompt.md' });
    expect(selector).toContainEqual({ scheme: 'file', pattern: '**/*.prompt' });
    for (const filter of selector) expect(['file', 'untitled']).toContain(filter.scheme);
  });

  it('passes the dshSessions settings as initializationOptions (null = unset) and keeps the section in sync', async () => {
    recorded.settings = { sessionsRoot: '~/dsh/sessions', targetSessionId: null, maxReferences: 2, candidateLimit: 50, maxReferenceBytes: 1024 };
    await activate(context() as never);
    expect(recorded.settingsSection).toBe('dshSessions');
    expect(client().clientOptions.initializationOptions).toEqual({
      sessionsRoot: '~/dsh/sessions',
      maxReferences: 2,
      candidateLimit: 50,
      maxReferenceBytes: 1024,
    });
    expect(client().clientOptions.synchronize).toEqual({ configurationSection: 'dshSessions' });
  });

  it('stops the server on deactivation', async () => {
    await activate(context() as never);
    const started = client();
    await deactivate();
    expect(started.stopped).toBe(true);
  });
});

describe('status bar item', () => {
  it('stays hidden until the server reports the store, then shows it', async () => {
    await activate(context() as never);
    const [item] = recorded.statusItems;
    expect(item!.visible).toBe(false);
    client().notify(SESSION_STATUS_NOTIFICATION, { root: '/home/u/.dsh/sessions', indexed: 7, indexing: false, discovered: 7 });
    expect(item).toMatchObject({ visible: true, text: '$(history) dsh: 7 sessions' });
    expect(item!.tooltip).toContain('/home/u/.dsh/sessions');
  });

  it('ignores a malformed status and hides when the server stops', async () => {
    await activate(context() as never);
    const [item] = recorded.statusItems;
    client().notify(SESSION_STATUS_NOTIFICATION, { indexed: 'many' });
    expect(item!.visible).toBe(false);
    client().notify(SESSION_STATUS_NOTIFICATION, { root: null, indexed: 0, indexing: true, discovered: 0 });
    expect(item!.visible).toBe(true);
    await client().stop();
    expect(item!.visible).toBe(false);
  });
});

describe('Insert session reference…', () => {
  const alpha = { sessionId: 's-alpha', label: 'Alpha', cwd: '/w', createdAt: NOW - 3 * 86_400_000 };
  const rows = [{ ...alpha, mention: formatSessionReferenceMention(alpha) }];

  it('picks among the server candidates for the document and inserts the mention at the cursor', async () => {
    serverAnswers({ 'dshSession.candidates': () => rows });
    await activate(context() as never);
    const editor = openEditor('file:///w/notes.md', 'markdown', 'see | please');
    const done = runCommand('dshSessions.insertReference');
    await settle();
    const picker = recorded.quickPicks[0]!;
    expect(picker.items.map((item: { label: string; description: string; detail: string }) => [item.label, item.description, item.detail])).toEqual([
      ['Alpha', '3 days ago', '/w'],
    ]);
    picker.accept(picker.items[0]);
    await done;
    expect(editor.document.getText()).toBe(`see ${rows[0]!.mention} please`);
    expect(executedCommands()).toEqual([
      { command: 'dshSession.candidates', argument: { query: '', textDocument: { uri: 'file:///w/notes.md' } } },
    ]);
  });

  it('replaces a lone @ typed before the cursor instead of doubling it', async () => {
    serverAnswers({ 'dshSession.candidates': () => rows });
    await activate(context() as never);
    const editor = openEditor('file:///w/notes.md', 'markdown', 'line one\nask @|');
    const done = runCommand('dshSessions.insertReference');
    await settle();
    recorded.quickPicks[0]!.accept(recorded.quickPicks[0]!.items[0]);
    await done;
    expect(editor.document.getText()).toBe(`line one\nask ${rows[0]!.mention}`);
  });

  it('changes nothing when the picker is dismissed', async () => {
    serverAnswers({ 'dshSession.candidates': () => rows });
    await activate(context() as never);
    const editor = openEditor('file:///w/notes.md', 'markdown', 'see |');
    const done = runCommand('dshSessions.insertReference');
    await settle();
    recorded.quickPicks[0]!.hide();
    await done;
    expect(editor.document.getText()).toBe('see ');
  });

  it('asks for an editor when none is open', async () => {
    await activate(context() as never);
    await runCommand('dshSessions.insertReference');
    expect(recorded.quickPicks).toEqual([]);
    expect(recorded.infos).toHaveLength(1);
  });
});

describe('Preview what the model will see', () => {
  it('opens the server preview of the current document in a read-only Markdown document', async () => {
    serverAnswers({ 'dshSession.preview': () => '# Direct message\n\nsee @Alpha\n' });
    await activate(context() as never);
    openEditor('file:///w/task.prompt.md', 'markdown', 'see @[Alpha](dsh-session:x)|');
    await runCommand('dshSessions.previewPrepared');
    expect(executedCommands()).toEqual([{ command: 'dshSession.preview', argument: { textDocument: { uri: 'file:///w/task.prompt.md' } } }]);
    const [shown] = recorded.shownDocuments;
    expect(shown!.uri.scheme).toBe('dsh-preview');
    expect(shown!.languageId).toBe('markdown');
    expect(shown!.getText()).toBe('# Direct message\n\nsee @Alpha\n');
  });

  it('shows a server error with its code', async () => {
    LanguageClient.answer = async () => {
      throw new ResponseError(-32803, 'session reference data exceeds maxReferenceBytes', { code: 'SESSION_REFERENCE_BUDGET_EXCEEDED' });
    };
    await activate(context() as never);
    openEditor('file:///w/a.md', 'markdown', 'x|');
    await runCommand('dshSessions.previewPrepared');
    expect(recorded.errors).toEqual(['SESSION_REFERENCE_BUDGET_EXCEEDED: session reference data exceeds maxReferenceBytes']);
    expect(recorded.shownDocuments).toEqual([]);
  });

  /** Run a server command the way the language client does for a code action: through the middleware. */
  function runServerCommand(command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown): Promise<unknown> {
    const middleware = client().clientOptions.middleware;
    return Promise.resolve(middleware.executeCommand(command, args, next));
  }

  it('opens the result of the server code action dshSession.preview in the same read-only preview document', async () => {
    serverAnswers({ 'dshSession.preview': () => '# Direct message\n\nsee @Alpha\n' });
    await activate(context() as never);
    const next = vi.fn();
    await runServerCommand('dshSession.preview', [{ textDocument: { uri: 'file:///w/task.prompt.md' } }], next);
    // The Markdown is fetched once, for the preview document; VS Code would drop what `next` returns.
    expect(next).not.toHaveBeenCalled();
    expect(executedCommands()).toEqual([{ command: 'dshSession.preview', argument: { textDocument: { uri: 'file:///w/task.prompt.md' } } }]);
    const [shown] = recorded.shownDocuments;
    expect(shown!.uri.scheme).toBe('dsh-preview');
    expect(shown!.uri.query).toBe('file:///w/task.prompt.md');
    expect(shown!.getText()).toBe('# Direct message\n\nsee @Alpha\n');

    // The editor command opens the very same document for that file.
    openEditor('file:///w/task.prompt.md', 'markdown', 'see @[Alpha](dsh-session:x)|');
    await runCommand('dshSessions.previewPrepared');
    expect(recorded.shownDocuments[1]!.uri.toString()).toBe(shown!.uri.toString());
  });

  it('accepts the preview argument as a JSON string, as the server does', async () => {
    serverAnswers({ 'dshSession.preview': () => '# Preview\n' });
    await activate(context() as never);
    const next = vi.fn();
    await runServerCommand('dshSession.preview', [JSON.stringify({ textDocument: { uri: 'file:///w/a.md' } })], next);
    expect(next).not.toHaveBeenCalled();
    expect(recorded.shownDocuments.map((document) => document.getText())).toEqual(['# Preview\n']);
  });

  it('shows a code action preview failure with its code', async () => {
    LanguageClient.answer = async () => {
      throw new ResponseError(-32602, 'at most 3 sessions can be referenced', { code: 'SESSION_REFERENCE_TOO_MANY' });
    };
    await activate(context() as never);
    await runServerCommand('dshSession.preview', [{ textDocument: { uri: 'file:///w/a.md' } }], vi.fn());
    expect(recorded.errors).toEqual(['SESSION_REFERENCE_TOO_MANY: at most 3 sessions can be referenced']);
    expect(recorded.shownDocuments).toEqual([]);
  });

  it('passes other commands, and previews the document view cannot show, to the server unchanged', async () => {
    await activate(context() as never);
    const calls: Array<[string, unknown[]]> = [];
    const next = (command: string, args: unknown[]) => {
      calls.push([command, args]);
      return `answer of ${command}`;
    };
    const withTarget = [{ textDocument: { uri: 'file:///w/a.md' }, target: { sessionId: 's1' } }];
    expect(await runServerCommand('dshSession.preview', withTarget, next)).toBe('answer of dshSession.preview');
    expect(await runServerCommand('dshSession.preview', [{ text: 'see @x' }], next)).toBe('answer of dshSession.preview');
    expect(await runServerCommand('dshSession.transcript', [{ sessionId: 's1' }], next)).toBe('answer of dshSession.transcript');
    expect(calls).toEqual([
      ['dshSession.preview', withTarget],
      ['dshSession.preview', [{ text: 'see @x' }]],
      ['dshSession.transcript', [{ sessionId: 's1' }]],
    ]);
    expect(recorded.shownDocuments).toEqual([]);
    expect(client().requests).toEqual([]);
  });

  it('declines a document the server does not serve, without asking it', async () => {
    await activate(context() as never);
    openEditor('file:///w/a.ts', 'typescript', 'x|');
    await runCommand('dshSessions.previewPrepared');
    expect(client().requests).toEqual([]);
    expect(recorded.infos).toHaveLength(1);
  });
});

describe('Open referenced session', () => {
  const mention = formatSessionReferenceMention({ sessionId: 's-beta', label: 'Beta run' });

  it('opens the transcript of the mention under the cursor', async () => {
    serverAnswers({ 'dshSession.transcript': ({ sessionId }) => `# Transcript of ${sessionId}\n` });
    await activate(context() as never);
    const text = `ask ${mention} now`;
    openEditor('file:///w/a.md', 'markdown', text.slice(0, 10) + '|' + text.slice(10));
    await runCommand('dshSessions.openReferencedSession');
    expect(executedCommands()).toEqual([{ command: 'dshSession.transcript', argument: { sessionId: 's-beta' } }]);
    const [shown] = recorded.shownDocuments;
    expect(shown!.uri.scheme).toBe('dsh-session');
    expect(shown!.uri.path).toBe('/Beta run.md');
    expect(shown!.getText()).toBe('# Transcript of s-beta\n');
  });

  it('opens another agent’s session under its own scheme, asking the server with its agent', async () => {
    serverAnswers({ 'dshSession.transcript': ({ sessionId, agent }) => `# ${String(agent)} ${sessionId}\n` });
    await activate(context() as never);
    const claude = formatSessionReferenceMention({ sessionId: 'cc-1', label: 'Parser', agent: 'claude-code' });
    openEditor('file:///w/a.md', 'markdown', `see ${claude.slice(0, 4)}|${claude.slice(4)}`);
    await runCommand('dshSessions.openReferencedSession');
    expect(executedCommands()).toEqual([{ command: 'dshSession.transcript', argument: { sessionId: 'cc-1', agent: 'claude-code' } }]);
    const [shown] = recorded.shownDocuments;
    expect(shown!.uri.scheme).toBe('claude-session');
    expect(shown!.uri.path).toBe('/Parser.md');
    expect(shown!.getText()).toBe('# claude-code cc-1\n');
    // A followed document link (the mention's own URI) opens through the same provider.
    const provider = recorded.contentProviders.get('codex-session')!;
    const link = encodeAgentSessionUri('codex', 'cx-1');
    expect(await provider.provideTextDocumentContent(Uri.parse(link))).toBe('# codex cx-1\n');
  });

  it('also works on a bare URI', async () => {
    serverAnswers({ 'dshSession.transcript': ({ sessionId }) => `# ${sessionId}\n` });
    await activate(context() as never);
    openEditor('file:///w/a.md', 'markdown', `see ${encodeSessionReferenceUri('s-bare')}|`);
    await runCommand('dshSessions.openReferencedSession');
    expect(executedCommands()).toEqual([{ command: 'dshSession.transcript', argument: { sessionId: 's-bare' } }]);
  });

  it('shows INVALID_REFERENCE for a mention whose URI is not canonical, without asking the server', async () => {
    await activate(context() as never);
    openEditor('file:///w/a.md', 'markdown', 'see @[Broken](dsh-session:IiJ|)');
    await runCommand('dshSessions.openReferencedSession');
    expect(client().requests).toEqual([]);
    expect(recorded.errors).toHaveLength(1);
    expect(recorded.errors[0]).toMatch(/^SESSION_REFERENCE_INVALID_REFERENCE: /);
  });

  it('says what to do when the cursor is on no mention', async () => {
    await activate(context() as never);
    openEditor('file:///w/a.md', 'markdown', `|see ${mention}`);
    await runCommand('dshSessions.openReferencedSession');
    expect(client().requests).toEqual([]);
    expect(recorded.infos).toHaveLength(1);
  });

  it('fetches a transcript VS Code restores on its own, showing a failure in the document', async () => {
    let fail = false;
    serverAnswers({
      'dshSession.transcript': ({ sessionId }) => {
        if (fail) throw new ResponseError(-32803, 'failed to read referenced session: gone', { code: 'SESSION_REFERENCE_READ_FAILED' });
        return `# ${sessionId}\n`;
      },
    });
    await activate(context() as never);
    const provider = recorded.contentProviders.get('dsh-session')!;
    const payload = encodeSessionReferenceUri('s-restored').slice('dsh-session:'.length);
    expect(await provider.provideTextDocumentContent(Uri.from({ scheme: 'dsh-session', path: '/Restored.md', query: payload }))).toBe('# s-restored\n');
    fail = true;
    const other = encodeSessionReferenceUri('s-gone').slice('dsh-session:'.length);
    expect(await provider.provideTextDocumentContent(Uri.from({ scheme: 'dsh-session', path: '/Gone.md', query: other }))).toContain(
      'SESSION_REFERENCE_READ_FAILED: failed to read referenced session: gone',
    );
  });
});
