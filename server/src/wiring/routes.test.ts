import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { DIAGNOSTIC_SOURCE, encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { CancellationTokenSource, TextDocumentSyncKind, TextDocuments, createConnection, type CodeAction, type Diagnostic, type DocumentLink, type Hover } from 'vscode-languageserver/node';
import { LspTestClient, pollUntil, responseErrorOf } from '../../../test/support/lspClient';
import { credentialCorpus } from '../testing/credentialCorpus';
import { conversationSession } from '../testing/mentionFixtures';
import { DshLog } from '../testing/testLogs';
import { testWorkspace } from '../testing/testWorkspace';
import { createSessionLanguageService } from '../features';
import { registerSessionRoutes, sessionRouteCapabilities, type SessionRoutes } from './routes';

const URI = 'file:///w/message.md';
const stops: Array<() => void> = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

/** An in-process server with only the routes (no lifecycle), over an in-memory store, and a client talking to it. */
async function start(options: { indexing?: boolean } = {}) {
  const { workspace, store } = testWorkspace([conversationSession('a', { cwd: '/w', title: 'Alpha' })], { folders: ['/w'], indexing: options.indexing });
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const connection = createConnection(toServer, fromServer);
  const documents = new TextDocuments(TextDocument);
  const service = createSessionLanguageService(workspace);
  connection.onInitialize(() => ({ capabilities: { textDocumentSync: TextDocumentSyncKind.Incremental, ...sessionRouteCapabilities(service) } }));
  const logged: string[] = [];
  const features: SessionRoutes = registerSessionRoutes(connection, connection, documents, {
    service,
    currentStore: () => workspace.currentStore(),
    firstIndex: {
      indexed: () => workspace.indexed(),
      whenIndexed: (signal) => workspace.whenIndexed(signal),
      storeStatus: () => workspace.storeStatus(),
      onStatus: (listener) => workspace.currentStore()?.onStatus(listener),
    },
    capabilities: () => ({}),
    log: (m) => logged.push(m),
    diagnosticsDebounceMs: 5,
  });
  documents.listen(connection);
  connection.listen();
  const client = LspTestClient.overStreams(fromServer, toServer);
  stops.push(() => {
    features.dispose();
    client.dispose();
    connection.dispose();
  });
  await client.initialize();
  return { client, workspace, store, features, logged };
}

/** The latest diagnostics published for `uri` once they satisfy `match` (polling, generous deadline). */
async function diagnosticsOf(client: LspTestClient, match: (diagnostics: Diagnostic[]) => boolean): Promise<Diagnostic[]> {
  return pollUntil(() => {
    const published = client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === URI);
    const latest = published.at(-1)?.params as { diagnostics: Diagnostic[] } | undefined;
    return latest !== undefined && match(latest.diagnostics) ? latest.diagnostics : undefined;
  });
}

const codes = (diagnostics: Diagnostic[]) => diagnostics.map((d) => d.code);

describe('the routes over a connection', () => {
  it('pushes diagnostics on open and after edits, with the document version, and clears them on close', async () => {
    const { client } = await start();
    await client.openDocument(URI, `see ${encodeSessionReferenceUri('nope')}`);
    const first = await diagnosticsOf(client, (d) => d.length === 1);
    expect(first[0]).toMatchObject({ source: DIAGNOSTIC_SOURCE, code: 'SESSION_REFERENCE_READ_FAILED' });
    await client.changeDocument(URI, 'see dsh-session:IiJ');
    expect(codes(await diagnosticsOf(client, (d) => d[0]?.code === 'SESSION_REFERENCE_INVALID_REFERENCE'))).toEqual(['SESSION_REFERENCE_INVALID_REFERENCE']);
    const versions = client.messages('textDocument/publishDiagnostics').map((m) => (m.params as { version?: number }).version);
    expect(versions.at(-1)).toBe(2);
    await client.closeDocument(URI);
    await diagnosticsOf(client, (d) => d.length === 0);
  });

  it('re-checks open documents when the store changes', async () => {
    const { client, store } = await start();
    await client.openDocument(URI, encodeSessionReferenceUri('late'));
    await diagnosticsOf(client, (d) => d.length === 1);
    store.put(conversationSession('late', { cwd: '/w' }));
    store.fireChange();
    expect(await diagnosticsOf(client, (d) => d.length === 0)).toEqual([]);
  });

  it('re-checks the documents mentioning a session whose content changed with no row change, reading it afresh', async () => {
    const { client, store } = await start();
    const other = 'file:///w/other.md';
    const publishedFor = (uri: string) => client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === uri);
    await client.openDocument(URI, formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha' }));
    await client.openDocument(other, encodeSessionReferenceUri('nope'));
    await diagnosticsOf(client, (d) => d.length === 0);
    await pollUntil(() => (publishedFor(other).length === 1 ? true : undefined));

    // The same header and title; a new turn brings a credential (a fake one, made by the corpus generator).
    const credential = credentialCorpus(11, 60).find((entry) => entry.kind === 'github-token')!;
    const log = new DshLog();
    log.user('question 0 about a'.padEnd(20, 'q'));
    log.assistant('answer 0 from a'.padEnd(20, 'a'));
    log.user(credential.text);
    log.title('Alpha');
    store.put({ header: { id: 'a', createdAt: 1_767_225_600_000, cwd: '/w' }, events: log.events() });
    store.fireContentChange([{ id: 'a' }]);
    expect(codes(await diagnosticsOf(client, (d) => d.length === 1))).toEqual(['REFERENCED_SECRETS']);
    // The document that mentions no changed session was not checked again.
    expect(publishedFor(other)).toHaveLength(1);
  });

  it('publishes no diagnostics before the first index is built, then what dsh would say', async () => {
    const { client, store } = await start({ indexing: true });
    await client.openDocument(URI, `${encodeSessionReferenceUri('nope')} ${formatSessionReferenceMention({ sessionId: 'a', label: 'Old' })}`);
    // The check of the opened document waits for the first index.
    await pollUntil(() => (store.indexWaiters === 1 ? true : undefined));
    expect(client.messages('textDocument/publishDiagnostics')).toEqual([]);
    store.setStatus({ indexing: false });
    expect(codes(await diagnosticsOf(client, (d) => d.length > 0))).toEqual(['SESSION_REFERENCE_READ_FAILED', undefined]);
    // The first publication was already the full one.
    const published = client.messages('textDocument/publishDiagnostics').map((m) => codes((m.params as { diagnostics: Diagnostic[] }).diagnostics));
    expect(published.every((list) => list.includes('SESSION_REFERENCE_READ_FAILED'))).toBe(true);
  });

  it('answers hover and document links once the first index is built; a hover cancelled while it waits answers RequestCancelled', async () => {
    const { client, store } = await start({ indexing: true });
    await client.openDocument(URI, `x ${formatSessionReferenceMention({ sessionId: 'a', label: 'Old' })}`);
    await pollUntil(() => (store.indexWaiters === 1 ? true : undefined));
    const position = { line: 0, character: 4 };
    const source = new CancellationTokenSource();
    const cancelled = client.connection.sendRequest('textDocument/hover', { textDocument: { uri: URI }, position }, source.token);
    await pollUntil(() => (store.indexWaiters === 2 ? true : undefined));
    source.cancel();
    expect(await responseErrorOf(cancelled)).toMatchObject({ code: -32800 });
    await pollUntil(() => (store.indexWaiters === 1 ? true : undefined));
    let answered = 0;
    const hover = client.request<Hover>('textDocument/hover', { textDocument: { uri: URI }, position }).finally(() => answered++);
    const links = client.request<DocumentLink[]>('textDocument/documentLink', { textDocument: { uri: URI } }).finally(() => answered++);
    // Both wait, beside the diagnostics.
    await pollUntil(() => (store.indexWaiters === 3 ? true : undefined));
    expect(answered).toBe(0);
    store.setStatus({ indexing: false });
    expect(((await hover).contents as { value: string }).value).toContain('**Alpha**');
    expect((await links).map((link) => link.tooltip)).toEqual(['Open the session Old']);
  });

  it('re-checks with new settings on refresh', async () => {
    const { client, workspace, features } = await start();
    await client.openDocument(URI, `${encodeSessionReferenceUri('a')} ${encodeSessionReferenceUri('nope')}`);
    await diagnosticsOf(client, (d) => d.length === 1);
    workspace.setSection({ maxReferences: 1 });
    features.refresh();
    expect(codes(await diagnosticsOf(client, (d) => d.length === 2))).toEqual(['SESSION_REFERENCE_TOO_MANY', 'SESSION_REFERENCE_READ_FAILED']);
  });

  it('answers hover, document links and code actions', async () => {
    const { client } = await start();
    const mention = formatSessionReferenceMention({ sessionId: 'a', label: 'Old' });
    await client.openDocument(URI, `x ${mention}`);
    const hover = await client.request<Hover>('textDocument/hover', { textDocument: { uri: URI }, position: { line: 0, character: 4 } });
    expect((hover.contents as { value: string }).value).toContain('**Alpha**');
    const links = await client.request<DocumentLink[]>('textDocument/documentLink', { textDocument: { uri: URI } });
    expect(links.map((link) => link.target)).toEqual([encodeSessionReferenceUri('a')]);
    const diagnostics = await diagnosticsOf(client, (d) => d.length === 1);
    const actions = await client.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri: URI },
      range: { start: { line: 0, character: 4 }, end: { line: 0, character: 4 } },
      context: { diagnostics },
    });
    expect(actions.map((action) => action.title)).toEqual(['Update the label to the session\'s title "Alpha"', 'Preview what the model will see']);
    expect(await client.request('textDocument/hover', { textDocument: { uri: 'file:///not-open.md' }, position: { line: 0, character: 0 } })).toBeNull();
  });
});
