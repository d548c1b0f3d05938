import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionCommands, encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import type { CodeAction, CompletionList, Diagnostic, DocumentLink, Hover, TextEdit } from 'vscode-languageserver-protocol';
import { DEMO_1, DEMO_2 } from '../../server/src/testing/testLogs';
import { fileUri, pollUntil, responseErrorOf, type LspTestClient } from '../support/lspClient';
import { acceptItem, cursorIn, removeTemporary, startServer, temporaryDirectory, waitForSessions } from './helpers';

let scratch: string;
let root: string;
let folder: string;
let promptUri: string;

const cleanups: Array<() => void | Promise<void>> = [];

function writeSession(projectDir: string, id: string, lines: readonly string[]): void {
  const dir = path.join(root, projectDir, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'session.jsonl'), lines.map((line) => line + '\n').join(''));
}

/** A session whose log is damaged before its last turn ended (dsh: corrupt; listed, but not readable). */
const DAMAGED = [
  '{"type":"session","version":0,"id":"damaged","createdAt":1767225800000,"cwd":"/home/alice/proj","delegationDepth":0}',
  '{"type":"turn/start","seq":0,"time":1767225800010,"data":{"turn":1}}',
  'this is not JSON',
  '{"type":"turn/end","seq":2,"time":1767225800011,"data":{"turn":1,"reason":{"kind":"completed"}}}',
];

beforeEach(() => {
  scratch = temporaryDirectory('editor-features');
  root = path.join(scratch, 'sessions');
  folder = path.join(scratch, 'workspace');
  writeSession('--home-alice-proj--', 'demo-1', DEMO_1);
  writeSession('--home-alice-proj--', 'demo-2', DEMO_2);
  writeSession('--home-alice-proj--', 'damaged', DAMAGED);
  for (const file of ['README.md', 'src/app.ts', 'my notes/plan one.md', 'node_modules/x/index.js']) {
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    writeFileSync(path.join(folder, file), 'x');
  }
  promptUri = fileUri(path.join(folder, 'PROMPT.md'));
  cleanups.push(() => removeTemporary(scratch));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(): Promise<LspTestClient> {
  const { client, cleanup } = await startServer({
    initializationOptions: { sessionsRoot: root },
    workspaceFolders: [{ uri: fileUri(folder), name: 'workspace' }],
    rootUri: fileUri(folder),
  });
  cleanups.push(cleanup);
  await waitForSessions(client, 3);
  return client;
}

/** The latest diagnostics published for the prompt once they satisfy `match` (polling, generous deadline). */
function diagnosticsOf(client: LspTestClient, match: (diagnostics: Diagnostic[]) => boolean): Promise<Diagnostic[]> {
  return pollUntil(() => {
    const published = client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === promptUri);
    const latest = published.at(-1)?.params as { diagnostics: Diagnostic[] } | undefined;
    return latest !== undefined && match(latest.diagnostics) ? latest.diagnostics : undefined;
  }, 20_000, 'diagnostics');
}

const DEMO_1_MENTION = formatSessionReferenceMention({ sessionId: 'demo-1', label: 'Say hi' });
const DEMO_2_STALE = formatSessionReferenceMention({ sessionId: 'demo-2', label: 'Read a.txt' });

describe('editor features through the built server', () => {
  it('announces hover, code actions, document links, the / trigger and the editor commands', async () => {
    const { initialized, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
    cleanups.push(cleanup);
    const capabilities = initialized.capabilities;
    expect(capabilities.hoverProvider).toBe(true);
    expect(capabilities.codeActionProvider).toBeTruthy();
    expect(capabilities.documentLinkProvider).toBeTruthy();
    expect(capabilities.completionProvider?.triggerCharacters).toEqual(expect.arrayContaining(['@', '/']));
    expect(capabilities.executeCommandProvider?.commands).toEqual(expect.arrayContaining([SessionCommands.transcript, SessionCommands.preview]));
  });

  it('publishes what dsh would say, and prepare fails with the first error’s code', async () => {
    const client = await server();
    const text = `Compare ${DEMO_2_STALE},\n${encodeSessionReferenceUri('damaged')} and ${encodeSessionReferenceUri('nope')}.`;
    await client.openDocument(promptUri, text);
    const diagnostics = await diagnosticsOf(client, (d) => d.length === 3);
    expect(diagnostics.map((d) => [d.range.start.line, d.severity, d.code ?? null])).toEqual([
      [0, 4, null],
      [1, 1, 'SESSION_REFERENCE_READ_FAILED'],
      [1, 1, 'SESSION_REFERENCE_READ_FAILED'],
    ]);
    expect(diagnostics.every((d) => d.source === 'dsh-session')).toBe(true);
    expect(diagnostics[0]!.message).toContain('"Alpha file check"');
    expect(diagnostics[2]!.message).toContain('session "nope" not found');
    const error = await responseErrorOf(client.executeCommand(SessionCommands.prepare, { textDocument: { uri: promptUri } }));
    expect(error.data).toEqual({ code: 'SESSION_REFERENCE_READ_FAILED' });

    await client.changeDocument(promptUri, `${text} ${encodeSessionReferenceUri('demo-1')}x`);
    const broken = await diagnosticsOf(client, (d) => d.some((x) => x.code === 'SESSION_REFERENCE_INVALID_REFERENCE'));
    expect(broken.at(-1)!.message).toContain('"x"');
    const invalid = await responseErrorOf(client.executeCommand(SessionCommands.prepare, { textDocument: { uri: promptUri } }));
    expect(invalid.data).toEqual({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });

    await client.changeDocument(promptUri, `Compare ${DEMO_1_MENTION}.`);
    expect(await diagnosticsOf(client, (d) => d.length === 0)).toEqual([]);
    const prepared = await client.executeCommand<{ additionalContext: unknown }>(SessionCommands.prepare, { textDocument: { uri: promptUri } });
    expect(prepared.additionalContext).toBeDefined();
  });

  it('re-checks an open document when the session it names appears in the store', async () => {
    const client = await server();
    await client.openDocument(promptUri, `see ${encodeSessionReferenceUri('late')}`);
    await diagnosticsOf(client, (d) => d.length === 1);
    writeSession('--home-alice-proj--', 'late', DEMO_1.map((line) => line.replaceAll('"demo-1"', '"late"')));
    expect(await diagnosticsOf(client, (d) => d.length === 0)).toEqual([]);
  });

  it('hovers, links and fixes mentions', async () => {
    const client = await server();
    const text = `Compare ${DEMO_2_STALE} and ${encodeSessionReferenceUri('nope')}`;
    await client.openDocument(promptUri, text);
    const diagnostics = await diagnosticsOf(client, (d) => d.length === 2);

    const hover = await client.request<Hover>('textDocument/hover', { textDocument: { uri: promptUri }, position: { line: 0, character: 10 } });
    const value = (hover.contents as { value: string }).value;
    expect(value).toContain('**Alpha file check**');
    expect(value).toContain('- mentioned as: Read a.txt');
    expect(value).toMatch(/- context: \d+ bytes of 65,536 bytes/);

    const links = await client.request<DocumentLink[]>('textDocument/documentLink', { textDocument: { uri: promptUri } });
    expect(links.map((link) => link.target)).toEqual([encodeSessionReferenceUri('demo-2'), encodeSessionReferenceUri('nope')]);

    const at = (character: number) =>
      client.request<CodeAction[]>('textDocument/codeAction', {
        textDocument: { uri: promptUri },
        range: { start: { line: 0, character }, end: { line: 0, character } },
        context: { diagnostics },
      });
    const update = (await at(10)).find((action) => action.title.startsWith('Update the label'))!;
    const edit = update.edit!.changes![promptUri]![0] as TextEdit;
    expect(edit.newText).toBe(formatSessionReferenceMention({ sessionId: 'demo-2', label: 'Alpha file check' }));
    const remove = (await at(text.length - 2)).find((action) => action.title.startsWith('Remove'))!;
    expect(remove.diagnostics!.map((d) => d.code)).toEqual(['SESSION_REFERENCE_READ_FAILED']);
    const preview = (await at(10)).find((action) => action.command?.command === SessionCommands.preview)!;
    const markdown = await client.executeCommand<string>(preview.command!.command, ...preview.command!.arguments!);
    expect(markdown).toContain('Nothing: dsh refuses this message with SESSION_REFERENCE_READ_FAILED');
  });

  it('answers the transcript as the user saw it, and the preview of what the model will see', async () => {
    const client = await server();
    const transcript = await client.executeCommand<string>(SessionCommands.transcript, { sessionId: 'demo-2' });
    expect(transcript).toContain('# Alpha file check');
    // The prompt a compaction replaced is still shown, with a note where the summary took over.
    expect(transcript).toContain('```text\nRead a.txt\n```');
    expect(transcript).toContain('instead of the 1 earlier message it replaced');
    expect(transcript).toContain('User asked to read a.txt; it contains alpha.');
    const missing = await responseErrorOf(client.executeCommand(SessionCommands.transcript, JSON.stringify({ sessionId: 'nope' })));
    expect(missing.data).toEqual({ code: 'SESSION_REFERENCE_READ_FAILED' });

    const preview = await client.executeCommand<string>(SessionCommands.preview, { text: `hi ${DEMO_1_MENTION}` });
    expect(preview).toContain('```text\nhi @Say hi\n```');
    expect(preview).toMatch(/\| 1 \| Say hi \| \d+ of 65536 \| no \|/);
    expect(preview).toContain('<referenced-sessions>');
  });

  it('completes sessions, then workspace files, on a bare @; files first for a path; folders step by step', async () => {
    const client = await server();
    const complete = async (marked: string, trigger = '@'): Promise<{ list: CompletionList; text: string }> => {
      const { text, position } = cursorIn(marked);
      await client.openDocument(promptUri, text);
      const list = await client.completion(promptUri, position, trigger);
      await client.closeDocument(promptUri);
      return { list, text };
    };
    const top = await complete('see @|');
    const labels = top.list.items.map((item) => String(item.label));
    expect(labels.slice(0, 3)).toEqual(expect.arrayContaining(['Alpha file check', 'Say hi']));
    expect(labels.slice(3)).toEqual(['my notes/', 'src/', 'README.md']);
    expect(top.list.items.map((item) => item.sortText![0])).toEqual(['b', 'b', 'b', 'c', 'c', 'c']);
    // Clients sort by sortText: the server's order is that sort.
    expect(top.list.items.map((item) => item.sortText)).toEqual(top.list.items.map((item) => item.sortText).sort());
    // A token that looks like a path puts the files first.
    const dot = await complete('see @./|', '/');
    expect(dot.list.items.map((item) => String(item.label)).slice(0, 3)).toEqual(['./my notes/', './src/', './README.md']);
    expect(dot.list.items[0]!.sortText).toBe('a000000');

    const src = top.list.items.find((item) => item.label === 'src/')!;
    expect(acceptItem(top.text, src)).toBe('see @src/');
    expect(src.command?.command).toBe('editor.action.triggerSuggest');
    const inside = await complete('see @src/|', '/');
    expect(inside.list.items[0]!.label).toBe('src/app.ts');
    expect(acceptItem(inside.text, inside.list.items[0]!)).toBe('see @src/app.ts');

    const quoted = await complete('see @"my notes/p|');
    expect(quoted.list.items.map((item) => item.label)).toEqual(['my notes/plan one.md']);
    expect(acceptItem(quoted.text, quoted.list.items[0]!)).toBe('see @"my notes/plan one.md"');
  });

  it('finds any file of a large workspace by what is typed', async () => {
    // More entries in `aaa/` than a first-N walk of the tree reached: what lies past them is found by name or path.
    mkdirSync(path.join(folder, 'aaa'));
    for (let i = 0; i < 6000; i++) writeFileSync(path.join(folder, 'aaa', `f${i}`), '');
    mkdirSync(path.join(folder, 'zzz'));
    writeFileSync(path.join(folder, 'zzz', 'needle.md'), '');
    const client = await server();
    const files = async (marked: string): Promise<{ labels: string[]; isIncomplete: boolean }> => {
      const { text, position } = cursorIn(marked);
      await client.openDocument(promptUri, text);
      const list = await client.completion(promptUri, position);
      await client.closeDocument(promptUri);
      const labels = list.items.filter((item) => (item.data as { kind: string }).kind === 'dsh-file').map((item) => String(item.label));
      return { labels, isIncomplete: list.isIncomplete };
    };
    expect(await files('see @nee|')).toEqual({ labels: ['zzz/needle.md'], isIncomplete: false });
    expect(await files('see @f5999|')).toEqual({ labels: ['aaa/f5999'], isIncomplete: false });
    expect(await files('see @aaa/f5999|')).toEqual({ labels: ['aaa/f5999'], isIncomplete: false });
    // Cut at the limit: a longer name finds more.
    expect((await files('see @f|')).isIncomplete).toBe(true);
  });

  it('completes files only inside the workspace folders, never through a link out of them', async () => {
    const outside = path.join(scratch, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'shadow'), 'x');
    writeFileSync(path.join(outside, 'x.md'), '');
    symlinkSync(outside, path.join(folder, 'link'));
    symlinkSync('/etc', path.join(folder, 'etc-link'));
    const client = await server();
    const fileItems = async (uri: string, marked: string): Promise<string[]> => {
      const { text, position } = cursorIn(marked);
      await client.openDocument(uri, text);
      const list = await client.completion(uri, position);
      await client.closeDocument(uri);
      return list.items.filter((item) => (item.data as { kind: string }).kind === 'dsh-file').map((item) => String(item.label));
    };
    // A document outside every workspace folder: none of its folder's names.
    expect(await fileItems(fileUri(path.join(outside, 'x.md')), 'see @|')).toEqual([]);
    expect(await fileItems(fileUri(path.join(outside, 'x.md')), 'see @sha|')).toEqual([]);
    expect(await fileItems('file:///etc/x.md', 'see @./|')).toEqual([]);
    expect(await fileItems('file:///etc/x.md', 'see @pass|')).toEqual([]);
    // Links out of the workspace are neither listed nor followed.
    expect(await fileItems(promptUri, 'see @link/sha|')).toEqual([]);
    expect(await fileItems(promptUri, 'see @link/|')).toEqual([]);
    expect(await fileItems(promptUri, 'see @etc-link/pass|')).toEqual([]);
    expect(await fileItems(promptUri, 'see @|')).toEqual(['my notes/', 'src/', 'README.md']);
  });

  it('follows the fileMentions setting: files before the sessions, or none', async () => {
    const { client, cleanup } = await startServer(
      { initializationOptions: { sessionsRoot: root, fileMentions: 'before' }, workspaceFolders: [{ uri: fileUri(folder), name: 'workspace' }], rootUri: fileUri(folder) },
      { settings: {} },
    );
    cleanups.push(cleanup);
    await waitForSessions(client, 3);
    await client.openDocument(promptUri, 'see @');
    const at = { line: 0, character: 5 };
    const before = await client.completion(promptUri, at);
    expect(before.items.map((item) => item.sortText![0])).toEqual(['a', 'a', 'a', 'b', 'b', 'b']);
    expect(before.items[0]!.label).toBe('my notes/');
    // The live section wins over initializationOptions.
    await client.changeConfiguration({ dshSessions: { fileMentions: 'off' } });
    const off = await pollUntil(async () => {
      const list = await client.completion(promptUri, at);
      return list.items.length === 3 ? list : undefined;
    }, 20_000, 'completion without files');
    expect(off.items.every((item) => (item.data as { kind: string }).kind === 'dsh-session')).toBe(true);
    // A bad value is refused with the setting's INVALID_CONFIG; the last good value stays.
    await client.changeConfiguration({ dshSessions: { fileMentions: 'sideways' } });
    const shown = await client.waitForMessage('window/showMessage', (params: { message: string }) => params.message.includes('fileMentions'));
    expect((shown.params as { message: string }).message).toBe(
      'SESSION_REFERENCE_INVALID_CONFIG: invalid setting dshSessions.fileMentions: fileMentions must be "after", "before" or "off", not "sideways"; keeping "off"',
    );
    expect((await client.completion(promptUri, at)).items).toHaveLength(3);
  });
});
