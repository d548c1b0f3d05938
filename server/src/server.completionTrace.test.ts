/**
 * The completion handler reports its own time as a `$/logTrace` line (what the benchmark reads as the
 * server-side figure): only when the client turned tracing on, and before the answer it belongs to.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { StreamMessageReader, StreamMessageWriter, createConnection } from 'vscode-languageserver/node';
import { LspTestClient } from '../../test/support/lspClient';
import { DshLog as SessionLogBuilder } from './testing/testLogs';
import { startSessionLanguageServer } from './server';
import { InMemoryStoreService } from './testing/inMemoryStoreService';

const SESSIONS = ['s1', 's2'].map((id, i) => {
  const log = new SessionLogBuilder();
  log.user(`prompt of ${id}`);
  return { header: { id, cwd: '/w', createdAt: i }, events: log.events() };
});

const clients: LspTestClient[] = [];
// vscode-jsonrpc routes `$/logTrace` to its own tracer, never to the catch-all handler; take it over as the benchmark does.
const traceLines = new WeakMap<LspTestClient, string[]>();
afterEach(async () => {
  for (const client of clients.splice(0)) {
    await client.request('shutdown').catch(() => undefined);
    client.dispose();
  }
});

function inProcessServer(): LspTestClient {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const connection = createConnection(new StreamMessageReader(toServer), new StreamMessageWriter(fromServer));
  startSessionLanguageServer(connection, {
    openStore: (root) => new InMemoryStoreService(root, SESSIONS),
    defaultSessionsRoot: () => '/default/sessions',
    env: {},
    log: () => undefined,
    version: 'test',
    configurationTimeoutMs: 5_000,
  });
  const client = LspTestClient.overStreams(fromServer, toServer);
  const lines: string[] = [];
  client.connection.onNotification('$/logTrace', (params: { message: string }) => void lines.push(params.message));
  traceLines.set(client, lines);
  clients.push(client);
  return client;
}

const TIMING = /^textDocument\/completion took (\d+\.\d{3}) ms$/;
const traces = (client: LspTestClient): string[] => [...traceLines.get(client)!];

describe('completion timing', () => {
  it('sends one timing line per completion before its answer when trace is on', async () => {
    const client = inProcessServer();
    await client.initialize({ trace: 'messages', initializationOptions: { sessionsRoot: '/store' } });
    await client.openDocument('file:///w/p.md', '@');
    const first = await client.completion('file:///w/p.md', { line: 0, character: 1 });
    expect(first.items).toHaveLength(2);
    // Already here when the answer resolved: the line went out before the response.
    expect(traces(client)).toHaveLength(1);
    await client.completion('file:///w/p.md', { line: 0, character: 1 });
    const lines = traces(client);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(Number(TIMING.exec(line)?.[1])).toBeGreaterThanOrEqual(0);
  });

  it('also times an answer for a document that is not open', async () => {
    const client = inProcessServer();
    await client.initialize({ trace: 'verbose', initializationOptions: { sessionsRoot: '/store' } });
    const answer = await client.completion('file:///w/closed.md', { line: 0, character: 1 });
    expect(answer.items).toEqual([]);
    expect(traces(client).filter((line) => TIMING.test(line))).toHaveLength(1);
  });

  it('sends nothing when trace is off, and starts once the client sets it', async () => {
    const client = inProcessServer();
    await client.initialize({ initializationOptions: { sessionsRoot: '/store' } });
    await client.openDocument('file:///w/p.md', '@');
    await client.completion('file:///w/p.md', { line: 0, character: 1 });
    expect(traces(client)).toEqual([]);
    await client.connection.sendNotification('$/setTrace', { value: 'messages' });
    await client.completion('file:///w/p.md', { line: 0, character: 1 });
    expect(traces(client)).toHaveLength(1);
  });
});
