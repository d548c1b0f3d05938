/**
 * The wiring, in process, over in-memory stores whose indexing the test drives: work-done progress,
 * answers before indexing ends, store (re)opening and problem logging. (The end-to-end suite under
 * test/e2e covers the same server as a process over a real store.)
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_STATUS_NOTIFICATION, SessionCommands, type SessionStoreStatus } from '@dsh-session-ls/shared';
import { CancellationTokenSource, StreamMessageReader, StreamMessageWriter, createConnection, type CompletionList } from 'vscode-languageserver/node';
import { FULL_CLIENT_CAPABILITIES, LspTestClient, pollUntil, responseErrorOf } from '../../test/support/lspClient';
import type { InMemorySession } from './testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from './testing/testLogs';
import { startSessionLanguageServer } from './server';
import { InMemoryStoreService } from './testing/inMemoryStoreService';

function session(id: string, createdAt: number): InMemorySession {
  const log = new SessionLogBuilder();
  log.user(`prompt of ${id}`);
  return { header: { id, cwd: '/w', createdAt }, events: log.events() };
}

const SESSIONS = [session('s1', 3), session('s2', 2), session('s3', 1)];

interface Harness {
  client: LspTestClient;
  stores: InMemoryStoreService[];
  log: string[];
}

const clients: LspTestClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) {
    await client.request('shutdown').catch(() => undefined);
    client.dispose();
  }
});

/** A server in this process; `indexing` stores finish only when the test says so. */
function harness(options: { indexing?: boolean; defaultRoot?: string; completionWaitMs?: number } = {}): Harness {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const stores: InMemoryStoreService[] = [];
  const log: string[] = [];
  const connection = createConnection(new StreamMessageReader(toServer), new StreamMessageWriter(fromServer));
  startSessionLanguageServer(connection, {
    openStore: (root) => {
      const store = new InMemoryStoreService(root, SESSIONS, { indexing: options.indexing });
      stores.push(store);
      return store;
    },
    defaultSessionsRoot: () => options.defaultRoot ?? '/default/sessions',
    env: {},
    log: (message) => log.push(message),
    version: 'test',
    configurationTimeoutMs: 5_000,
    ...(options.completionWaitMs === undefined ? {} : { completionFirstIndexWaitMs: options.completionWaitMs }),
  });
  const client = LspTestClient.overStreams(fromServer, toServer);
  clients.push(client);
  return { client, stores, log };
}

const completionAt = (client: LspTestClient) => client.completion('file:///w/p.md', { line: 0, character: 1 });

describe('indexing', () => {
  it('shows work-done progress while the store is first indexed, and answers before it ends', async () => {
    const { client, stores } = harness({ indexing: true });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    const created = await client.waitForMessage('window/workDoneProgress/create');
    const token = (created.params as { token: string }).token;
    const progress = () => client.messages('$/progress').filter((message) => (message.params as { token: string }).token === token);
    await pollUntil(() => (progress().length > 0 ? true : undefined));
    expect((progress()[0]!.params as { value: unknown }).value).toMatchObject({ kind: 'begin', title: 'Indexing dsh sessions', message: '0/3 sessions' });

    await client.openDocument('file:///w/p.md', '@');
    const early = await completionAt(client);
    expect(early.isIncomplete).toBe(true);

    stores[0]!.setStatus({ indexed: 2 });
    await pollUntil(() => progress().find((message) => (message.params as { value: { kind: string } }).value.kind === 'report'));
    expect((progress().at(-1)!.params as { value: unknown }).value).toMatchObject({ kind: 'report', percentage: 66, message: '2/3 sessions' });

    stores[0]!.setStatus({ indexed: 3, indexing: false });
    await pollUntil(() => progress().find((message) => (message.params as { value: { kind: string } }).value.kind === 'end'));
    const done = await completionAt(client);
    expect(done.isIncomplete).toBe(false);
    expect(done.items).toHaveLength(3);
  });

  it('asks for no progress token when the client does not support work-done progress', async () => {
    const { client } = harness({ indexing: true });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' }, capabilities: { ...FULL_CLIENT_CAPABILITIES, window: {} } });
    await client.executeCommand(SessionCommands.parse, { text: 'round trip' });
    expect(client.messages('window/workDoneProgress/create')).toEqual([]);
  });
});

describe('first answers', () => {
  const progressOf = (client: LspTestClient, token: string) =>
    client
      .messages('$/progress')
      .filter((message) => (message.params as { token: unknown }).token === token)
      .map((message) => (message.params as { value: { kind: string; title?: string; message?: string } }).value);

  it('a command waits for the first index, with progress on its workDoneToken, then answers the full listing', async () => {
    const { client, stores } = harness({ indexing: true });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    let answered = false;
    const answer = client
      .request<Array<{ sessionId: string }>>('workspace/executeCommand', { command: SessionCommands.candidates, arguments: [{}], workDoneToken: 'wait-1' })
      .finally(() => (answered = true));
    await pollUntil(() => (progressOf(client, 'wait-1').length > 0 ? true : undefined));
    expect(progressOf(client, 'wait-1')[0]).toMatchObject({ kind: 'begin', title: 'Waiting for the dsh session index', message: '0/3 sessions' });
    expect(answered).toBe(false);
    stores[0]!.setStatus({ indexed: 3, indexing: false });
    expect((await answer).map((candidate) => candidate.sessionId)).toEqual(['s1', 's2', 's3']);
    await pollUntil(() => (progressOf(client, 'wait-1').at(-1)?.kind === 'end' ? true : undefined));
  });

  it('a command sent before any store is open waits for the store and its first index', async () => {
    const { client, stores } = harness({ indexing: true });
    // The client answers workspace/configuration (and so lets the server open its store) when the test says so.
    let answerConfiguration!: () => void;
    const configuration = new Promise<unknown[]>((resolve) => (answerConfiguration = () => resolve([{ sessionsRoot: '/pulled' }])));
    client.connection.onRequest('workspace/configuration', () => configuration);
    await client.initialize();
    let answered = false;
    const answer = client
      .request<unknown[]>('workspace/executeCommand', { command: SessionCommands.candidates, arguments: [{}], workDoneToken: 'wait-0' })
      .finally(() => (answered = true));
    await pollUntil(() => (progressOf(client, 'wait-0').length > 0 ? true : undefined));
    expect(stores).toEqual([]);
    answerConfiguration();
    await pollUntil(() => (stores.length === 1 ? true : undefined));
    await client.executeCommand(SessionCommands.parse, { text: 'in order' });
    expect(answered).toBe(false);
    stores[0]!.setStatus({ indexed: 3, indexing: false });
    expect(await answer).toHaveLength(3);
    expect(stores.map((store) => store.root)).toEqual(['/pulled']);
  });

  it('a command cancelled while it waits answers RequestCancelled and ends its progress', async () => {
    const { client } = harness({ indexing: true });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    const source = new CancellationTokenSource();
    const answer = client.connection.sendRequest(
      'workspace/executeCommand',
      { command: SessionCommands.candidates, arguments: [{}], workDoneToken: 'wait-2' },
      source.token,
    );
    await pollUntil(() => (progressOf(client, 'wait-2').length > 0 ? true : undefined));
    source.cancel();
    expect(await responseErrorOf(answer)).toMatchObject({ code: -32800 });
    await pollUntil(() => (progressOf(client, 'wait-2').at(-1)?.kind === 'end' ? true : undefined));
  });

  it('a command that does not read the listing does not wait', async () => {
    const { client } = harness({ indexing: true });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    expect(await client.request('workspace/executeCommand', { command: SessionCommands.parse, arguments: [{ text: 'x' }], workDoneToken: 'w' })).toEqual({
      text: 'x',
      references: [],
    });
    expect(progressOf(client, 'w')).toEqual([]);
  });

  it('completion waits for the first index, and answers complete once it is built', async () => {
    const { client, stores } = harness({ indexing: true, completionWaitMs: 60_000 });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    await client.openDocument('file:///w/p.md', '@');
    let answered = false;
    const answer = completionAt(client).finally(() => (answered = true));
    // Requests are handled in order: once this one is answered, the completion is waiting.
    await client.executeCommand(SessionCommands.parse, { text: 'in order' });
    expect(answered).toBe(false);
    stores[0]!.setStatus({ indexed: 3, indexing: false });
    const list = await answer;
    expect(list.isIncomplete).toBe(false);
    expect(list.items).toHaveLength(3);
  });

  it('completion past its bound answers what is indexed, incomplete', async () => {
    const { client } = harness({ indexing: true, completionWaitMs: 1 });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    await client.openDocument('file:///w/p.md', '@');
    const list = await completionAt(client);
    expect(list.isIncomplete).toBe(true);
    // The in-memory store lists every session while it "indexes": what is indexed so far is all of them.
    expect(list.items.map((item) => item.label)).toEqual(SESSIONS.map((session) => session.header.id));
  });

  it('a newer completion of the same document supersedes a waiting one, which answers RequestCancelled', async () => {
    const { client, stores } = harness({ indexing: true, completionWaitMs: 60_000 });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    await client.openDocument('file:///w/p.md', '@');
    await client.openDocument('file:///w/other.md', '@');
    const request = (uri: string) => ({
      method: 'textDocument/completion',
      params: { textDocument: { uri }, position: { line: 0, character: 1 }, context: { triggerKind: 2, triggerCharacter: '@' } },
    });
    const [older, other, newer] = await client.requestsAtOnce<CompletionList>([request('file:///w/p.md'), request('file:///w/other.md'), request('file:///w/p.md')]);
    expect(await responseErrorOf(older!)).toMatchObject({ code: -32800 });
    stores[0]!.setStatus({ indexed: 3, indexing: false });
    // Another document's request is not superseded.
    for (const answer of [newer!, other!]) expect(await answer).toMatchObject({ isIncomplete: false, items: expect.arrayContaining([expect.anything()]) });
  });
});

describe('the store', () => {
  it('waits for the pulled settings before opening a store, so the default root is never indexed for nothing', async () => {
    const { client, stores } = harness();
    client.settings = { sessionsRoot: '/pulled' };
    await client.initialize();
    expect(await client.executeCommand<unknown[]>(SessionCommands.candidates, {})).toHaveLength(3);
    expect(stores.map((store) => store.root)).toEqual(['/pulled']);
  });

  it('opens the default root at once for a client without workspace/configuration', async () => {
    const { client, stores } = harness();
    await client.initialize({ capabilities: { window: { workDoneProgress: true } } });
    await client.executeCommand(SessionCommands.candidates, {});
    expect(stores.map((store) => store.root)).toEqual(['/default/sessions']);
  });

  it('reopens the store when the root changes and closes the old one', async () => {
    const { client, stores } = harness();
    client.settings = { sessionsRoot: '/first' };
    await client.initialize();
    await client.executeCommand(SessionCommands.candidates, {});
    await client.changeConfiguration({ dshSessions: { sessionsRoot: '/second' } });
    await pollUntil(() => (stores.length === 2 ? true : undefined));
    expect(stores.map((store) => store.root)).toEqual(['/first', '/second']);
    expect(stores[0]!.disposed).toBe(true);
    expect(stores[1]!.disposed).toBe(false);
    // Settings that leave the root alone do not reopen it.
    await client.changeConfiguration({ dshSessions: { sessionsRoot: '/second', candidateLimit: 2 } });
    expect(await client.executeCommand<unknown[]>(SessionCommands.candidates, {})).toHaveLength(2);
    expect(stores).toHaveLength(2);
  });

  it('logs store problems to the server log and with window/logMessage', async () => {
    const { client, stores, log } = harness();
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    stores[0]!.reportProblem({ path: '/store/--p--/x.jsonl', reason: 'unsupported flat-file layout' });
    const logged = await client.waitForMessage('window/logMessage', (params: { message: string }) => params.message.includes('x.jsonl'));
    expect((logged.params as { message: string }).message).toBe('dsh session store: skipped /store/--p--/x.jsonl: unsupported flat-file layout');
    expect(log).toContain('dsh session store: skipped /store/--p--/x.jsonl: unsupported flat-file layout');
  });

  it('closes the store on shutdown', async () => {
    const { client, stores } = harness();
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    await client.request('shutdown');
    expect(stores[0]!.disposed).toBe(true);
  });
});

describe('dshSession/status', () => {
  const statuses = (client: LspTestClient) => client.messages(SESSION_STATUS_NOTIFICATION).map((message) => message.params as SessionStoreStatus);
  const statusArrives = (client: LspTestClient, expected: SessionStoreStatus) =>
    client.waitForMessage(SESSION_STATUS_NOTIFICATION, (params) => JSON.stringify(params) === JSON.stringify(expected));

  it('reports a store opened during initialize once initialized, then as its indexing advances', async () => {
    const { client, stores } = harness({ indexing: true });
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    await statusArrives(client, { root: '/store', indexed: 0, indexing: true, discovered: 3 });
    stores[0]!.setStatus({ indexed: 2 });
    await statusArrives(client, { root: '/store', indexed: 2, indexing: true, discovered: 3 });
    stores[0]!.setStatus({ indexed: 3, indexing: false });
    await statusArrives(client, { root: '/store', indexed: 3, indexing: false, discovered: 3 });
    expect(statuses(client).map((status) => status.indexed)).toEqual([0, 2, 3]);
  });

  it('reports the new root when it changes, and nothing more from the store it replaced', async () => {
    const { client, stores } = harness();
    client.settings = { sessionsRoot: '/first' };
    await client.initialize();
    await statusArrives(client, { root: '/first', indexed: 3, indexing: false, discovered: 3 });
    await client.changeConfiguration({ dshSessions: { sessionsRoot: '/second' } });
    await statusArrives(client, { root: '/second', indexed: 3, indexing: false, discovered: 3 });
    // The replaced store's listeners are still there (an in-memory store keeps them): the server must have let go.
    stores[0]!.setStatus({ indexed: 1 });
    stores[1]!.setStatus({ indexed: 2, discovered: 4 });
    await statusArrives(client, { root: '/second', indexed: 2, indexing: false, discovered: 4 });
    expect(statuses(client).filter((status) => status.root === '/first')).toEqual([{ root: '/first', indexed: 3, indexing: false, discovered: 3 }]);
  });
});
