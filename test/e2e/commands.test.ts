/**
 * The commands of lsp-contract.md through the built server. The answers and the seven errors are
 * asked through `dsh-session-ls/client` (server/src/client), as a user's script asks them; what is
 * on the wire (the JSON-RPC codes, malformed requests) through the low-level test client.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  JsonRpcErrorCodes,
  SESSION_STATUS_NOTIFICATION,
  SESSION_REFERENCE_ERROR_CODES,
  SESSION_REFERENCE_JSON_RPC_CODES,
  SessionCommands,
  formatSessionReferenceMention,
  type PreparedReferencedMessage,
  type SessionReferenceErrorCode,
  type SessionStoreStatus,
} from '@dsh-session-ls/shared';
import { DshSessionClient, DshSessionRequestError, SessionReferenceError } from '../../server/src/client';
import { buildHeldIndexServer, holdArgument } from '../support/heldIndexServerBuild';
import { fileUri, pollUntil, responseErrorOf, type LspTestClient } from '../support/lspClient';
import type { CompletionItem } from 'vscode-languageserver-protocol';
import {
  EXAMPLE_SESSIONS,
  EXAMPLE_STORE,
  WEATHER_APP,
  acceptItem,
  copyStore,
  removeTemporary,
  startServer,
  startSessionClient,
  temporaryDirectory,
  waitForSessions,
} from './helpers';

const { cache, hourly, flakyTest, httpNotes, releaseNames } = EXAMPLE_SESSIONS;
const DOC_URI = fileUri(`${WEATHER_APP}/notes/PROMPT.md`);
const mention = (sessionId: string, label?: string) => formatSessionReferenceMention({ sessionId, ...(label === undefined ? {} : { label }) });
const DOC_TEXT = `Compare ${mention(cache, 'the cache work')} with ${mention(hourly)}.`;

/** The client a user's script would use. */
let session: DshSessionClient;
/** The low-level client, for what is on the wire. */
let client: LspTestClient;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const started = await startSessionClient({ settings: { sessionsRoot: EXAMPLE_STORE } });
  session = started.client;
  cleanups.push(started.cleanup);
  await session.openDocument(DOC_TEXT, { uri: DOC_URI });
  const low = await startServer({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } });
  client = low.client;
  cleanups.push(low.cleanup);
  await waitForSessions(client, Object.keys(EXAMPLE_SESSIONS).length);
  await client.openDocument(DOC_URI, DOC_TEXT);
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function stripId(prepared: PreparedReferencedMessage): unknown {
  if (prepared.additionalContext === undefined) return prepared;
  const { id, ...rest } = prepared.additionalContext;
  expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  return { ...prepared, additionalContext: rest };
}

async function errorCode(command: string, ...args: unknown[]) {
  return responseErrorOf(client.executeCommand(command, ...args));
}

/** The error a request through the client rejects with, or a failure if it resolved. */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    const result = await promise;
    throw new Error(`expected a rejection, got ${JSON.stringify(result)}`);
  } catch (error) {
    if (!(error instanceof Error) || error.message.startsWith('expected a rejection')) throw error;
    return error;
  }
}

describe('dshSession.candidates', () => {
  it('lists mention candidates for the target (the workspace folder by default), at once after start: it waits for the first index', async () => {
    const candidates = await session.candidates();
    expect(candidates.map((candidate) => candidate.sessionId)).toEqual([flakyTest, cache, hourly, releaseNames, httpNotes]);
    expect(candidates[3]).toEqual({
      sessionId: releaseNames,
      label: 'Release names [v2.0]',
      createdAt: 1794301920000,
      mention: mention(releaseNames, 'Release names [v2.0]'),
    });
    expect(await session.waitUntilIndexed()).toEqual({ root: EXAMPLE_STORE, indexed: 5, indexing: false, discovered: 5 });
  });

  it('takes query, limit, target and a JSON string argument', async () => {
    const byQuery = await session.executeCommand<Array<{ sessionId: string }>>(
      SessionCommands.candidates,
      JSON.stringify({ query: 'HTTP', target: { cwd: '/home/sam/notes' } }),
    );
    expect(byQuery.map((candidate) => candidate.sessionId)).toEqual([httpNotes]);
    expect((await session.candidates('HTTP', { target: { cwd: '/home/sam/notes' } })).map((candidate) => candidate.sessionId)).toEqual([httpNotes]);
    const ranked = await session.candidates('', { limit: 2, target: { sessionId: httpNotes } });
    // The target's own cwd ranks (its notes session itself is never offered).
    expect(ranked.map((candidate) => candidate.sessionId)).toEqual([releaseNames, flakyTest]);
  });
});

describe('textDocument/completion through completeAt', () => {
  it('completes `@` with the sessions in the order of dshSession.candidates, each inserting its mention', async () => {
    const list = await session.completeAt('See @');
    const sessions = list.items.filter((item) => item.data?.kind === 'dsh-session');
    const candidates = await session.candidates();
    expect(sessions.map((item) => item.data?.sessionId)).toEqual(candidates.map((candidate) => candidate.sessionId));
    // Accepting an item leaves exactly one `@` and the mention.
    expect(sessions.map((item) => acceptItem('See @', item as CompletionItem))).toEqual(candidates.map((candidate) => `See ${candidate.mention}`));
  });

  it('completes at a position inside the text, on a later line', async () => {
    const list = await session.completeAt('First line\r\nsee @Cach and more', { line: 1, character: 9 });
    const sessions = list.items.filter((item) => item.data?.kind === 'dsh-session');
    expect(sessions.map((item) => item.data?.sessionId)).toEqual((await session.candidates('Cach')).map((candidate) => candidate.sessionId));
    expect(sessions.length).toBeGreaterThan(0);
  });
});

describe('dshSession.prepare', () => {
  it('prepares content with references as given', async () => {
    const prepared = await session.prepare({
      content: [{ type: 'text', text: 'why?' }],
      references: [{ sessionId: flakyTest, label: 'flaky' }],
    });
    expect(prepared.content).toEqual([{ type: 'text', text: 'why?' }]);
    expect(prepared.additionalContext!.source.references).toEqual([
      {
        sessionId: flakyTest,
        label: 'flaky',
        capturedThroughSeq: 28,
        compacted: true,
        originalMessages: 3,
        retainedMessages: 3,
        omittedMessages: 0,
        omittedBytes: 0,
        truncated: false,
        inputIndex: 0,
      },
    ]);
    expect(prepared.additionalContext!.content).toHaveLength(1);
    expect((prepared.additionalContext!.content[0] as { text: string }).text).toMatch(/^## Referenced sessions\n[\s\S]*<\/referenced-sessions>$/);
  });

  it('gives the text form and the open-document form the same answer, mentions parsed as dsh parses them', async () => {
    const fromText = await session.prepare(DOC_TEXT);
    const fromDocument = await session.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { textDocument: { uri: DOC_URI } });
    expect(fromText.content).toEqual([{ type: 'text', text: `Compare @the cache work with @${hourly}.` }]);
    expect(stripId(fromDocument)).toEqual(stripId(fromText));
    expect(fromText.additionalContext!.source.references.map((reference) => reference.label)).toEqual(['the cache work', hourly]);
    const fromString = await session.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, JSON.stringify({ text: DOC_TEXT }));
    expect(stripId(fromString)).toEqual(stripId(fromText));
    // Every message gets a fresh id, as dsh gives one.
    expect(fromString.additionalContext!.id).not.toBe(fromText.additionalContext!.id);
  });

  it('applies a per-call config', async () => {
    const prepared = await session.prepare(DOC_TEXT, { config: { maxReferenceBytes: 400 } });
    expect(prepared.additionalContext!.source.references.some((reference) => reference.truncated)).toBe(true);
  });
});

describe('dshSession.parse and dshSession.formatMention', () => {
  it('parse returns the readable text and the references', async () => {
    expect(await session.parse(DOC_TEXT)).toEqual({
      text: `Compare @the cache work with @${hourly}.`,
      references: [
        { sessionId: cache, label: 'the cache work' },
        { sessionId: hourly, label: hourly },
      ],
    });
  });

  it('formatMention returns the canonical mention', async () => {
    expect(await session.executeCommand(SessionCommands.formatMention, { sessionId: 'a]b', label: 'x\\y]' })).toBe('@[x\\\\y\\]](dsh-session:ImFdYiI)');
    expect(await session.executeCommand(SessionCommands.formatMention, '{"sessionId":"source"}')).toBe('@[source](dsh-session:InNvdXJjZSI)');
  });
});

describe('errors through dsh-session-ls/client', () => {
  const raising: Record<Exclude<SessionReferenceErrorCode, 'SESSION_REFERENCE_CANCELLED'>, () => Promise<unknown>> = {
    SESSION_REFERENCE_INVALID_CONFIG: () => session.prepare('x', { config: { maxReferences: 4 } }),
    SESSION_REFERENCE_INVALID_REFERENCE: () => session.prepare('x @[a](dsh-session:IiJ)'),
    SESSION_REFERENCE_SELF_REFERENCE: () => session.prepare(DOC_TEXT, { target: { sessionId: cache } }),
    SESSION_REFERENCE_TOO_MANY: () => session.prepare({ content: [], references: [cache, hourly, flakyTest, httpNotes].map((sessionId) => ({ sessionId })) }),
    SESSION_REFERENCE_READ_FAILED: () => session.prepare({ content: [], references: [{ sessionId: 'no-such-session' }] }),
    SESSION_REFERENCE_BUDGET_EXCEEDED: () => session.prepare(DOC_TEXT, { config: { maxReferenceBytes: 16 } }),
  };

  it.each(Object.keys(raising) as Array<keyof typeof raising>)('rejects with a SessionReferenceError of code %s', async (code) => {
    const error = await rejectionOf(raising[code]());
    expect(error).toBeInstanceOf(SessionReferenceError);
    expect((error as SessionReferenceError).code).toBe(code);
    expect(error.message).not.toBe('');
  });

  it('uses dsh messages where they are pinned', async () => {
    expect((await rejectionOf(raising.SESSION_REFERENCE_READ_FAILED())).message).toBe('failed to read referenced session: session "no-such-session" not found');
    expect((await rejectionOf(raising.SESSION_REFERENCE_TOO_MANY())).message).toBe('a message may reference at most 3 sessions');
  });

  it('rejects an aborted request with SESSION_REFERENCE_CANCELLED (a request waiting for a first index held open by the store double)', async () => {
    const scratch = temporaryDirectory('cancel');
    const hold = path.join(scratch, 'hold');
    writeFileSync(hold, '');
    const server = await buildHeldIndexServer(path.join(scratch, 'held-server'));
    const held = await startSessionClient({ server, args: [holdArgument(hold)], settings: { sessionsRoot: EXAMPLE_STORE } });
    try {
      const abort = new AbortController();
      const waiting = held.client.candidates('', { signal: abort.signal });
      abort.abort();
      const error = await rejectionOf(waiting);
      expect(error).toBeInstanceOf(SessionReferenceError);
      expect((error as SessionReferenceError).code).toBe('SESSION_REFERENCE_CANCELLED');
      rmSync(hold);
      expect(await held.client.candidates()).toHaveLength(Object.keys(EXAMPLE_SESSIONS).length);
    } finally {
      await held.cleanup();
      removeTemporary(scratch);
    }
  });

  it('rejects an unknown command with a DshSessionRequestError carrying MethodNotFound', async () => {
    const error = await rejectionOf(session.executeCommand('dshSession.launchMissiles', {}));
    expect(error).toBeInstanceOf(DshSessionRequestError);
    expect((error as DshSessionRequestError).code).toBe(JsonRpcErrorCodes.MethodNotFound);
  });
});

describe("the client's status, notifications, settings and log", () => {
  it('follows the store status alongside any listener, takes new settings, and keeps the server log', async () => {
    const root = copyStore();
    const started = await startSessionClient({ settings: { sessionsRoot: root } });
    const own = started.client;
    const total = Object.keys(EXAMPLE_SESSIONS).length;
    try {
      const first: SessionStoreStatus[] = [];
      const stopFirst = own.onNotification(SESSION_STATUS_NOTIFICATION, (params) => first.push(params as SessionStoreStatus));
      // Listening to the status does not take it from the client: it still follows it.
      const indexed = await own.waitUntilIndexed();
      expect(indexed).toMatchObject({ root, indexing: false, indexed: total });
      expect(own.status).toEqual(indexed);
      expect(first.at(-1)).toEqual(indexed);

      // A listener that stopped hears nothing more; another one, and the client, hear what follows.
      stopFirst();
      const heardBefore = first.length;
      const second: SessionStoreStatus[] = [];
      own.onNotification(SESSION_STATUS_NOTIFICATION, (params) => second.push(params as SessionStoreStatus));
      rmSync(path.join(root, '--home-sam-notes--'), { recursive: true, force: true });
      const shrunk = await pollUntil(() => (own.status !== undefined && own.status.indexed < total ? own.status : undefined), 30_000, 'a status without the removed sessions');
      expect(second.at(-1)).toEqual(shrunk);
      expect(first).toHaveLength(heardBefore);

      // New settings: the section wins over the start's, key by key (the root stays the start's).
      expect((await own.candidates()).length).toBe(shrunk.indexed);
      await own.changeSettings({ sessionsRoot: root, candidateLimit: 1 });
      await pollUntil(async () => ((await own.candidates()).length === 1 ? true : undefined), 30_000, 'candidates cut to the new candidateLimit');
    } finally {
      await started.cleanup();
      removeTemporary(path.dirname(root));
    }
    expect(own.stderr).toContain('[dsh-session-ls] stopping (exit)');
  });
});

describe('errors on the wire (low-level client)', () => {
  const raising: Record<SessionReferenceErrorCode, () => Promise<{ code: number; message: string; data: unknown }>> = {
    SESSION_REFERENCE_INVALID_CONFIG: () => errorCode(SessionCommands.prepare, { text: 'x', config: { maxReferences: 4 } }),
    SESSION_REFERENCE_INVALID_REFERENCE: () => errorCode(SessionCommands.prepare, { text: 'x @[a](dsh-session:IiJ)' }),
    SESSION_REFERENCE_SELF_REFERENCE: () => errorCode(SessionCommands.prepare, { text: DOC_TEXT, target: { sessionId: cache } }),
    SESSION_REFERENCE_TOO_MANY: () =>
      errorCode(SessionCommands.prepare, { content: [], references: [cache, hourly, flakyTest, httpNotes].map((sessionId) => ({ sessionId })) }),
    SESSION_REFERENCE_READ_FAILED: () => errorCode(SessionCommands.prepare, { content: [], references: [{ sessionId: 'no-such-session' }] }),
    SESSION_REFERENCE_BUDGET_EXCEEDED: () => errorCode(SessionCommands.prepare, { text: DOC_TEXT, config: { maxReferenceBytes: 16 } }),
    SESSION_REFERENCE_CANCELLED: () =>
      responseErrorOf(client.requestCancelledAtOnce('workspace/executeCommand', { command: SessionCommands.prepare, arguments: [{ text: DOC_TEXT }] })),
  };

  it.each([...SESSION_REFERENCE_ERROR_CODES])('maps %s by the shared table, with data.code and no cause', async (code) => {
    const error = await raising[code]();
    expect(error.code).toBe(SESSION_REFERENCE_JSON_RPC_CODES[code]);
    expect(error.data).toEqual({ code });
    expect(error.message).not.toBe('');
  });

  it('uses dsh messages where they are pinned', async () => {
    expect((await raising.SESSION_REFERENCE_READ_FAILED()).message).toBe('failed to read referenced session: session "no-such-session" not found');
    expect((await raising.SESSION_REFERENCE_TOO_MANY()).message).toBe('a message may reference at most 3 sessions');
    expect((await raising.SESSION_REFERENCE_SELF_REFERENCE()).message).toBe(`session ${JSON.stringify(cache)} cannot reference itself`);
    expect((await raising.SESSION_REFERENCE_INVALID_CONFIG()).message).toBe('session-reference: maxReferences must not exceed 3');
    expect((await raising.SESSION_REFERENCE_BUDGET_EXCEEDED()).message).toBe('referenced session snapshot cannot fit the configured byte budget');
    expect((await raising.SESSION_REFERENCE_CANCELLED()).message).toBe('session reference preparation was cancelled');
  });

  it('answers arguments of the wrong shape with INVALID_REFERENCE', async () => {
    for (const args of [[], [{}, {}], [42], ['not json'], [null], [{ text: 'a', textDocument: { uri: DOC_URI } }], [{ textDocument: { uri: fileUri('/closed.md') } }]]) {
      const error = await responseErrorOf(client.connection.sendRequest('workspace/executeCommand', { command: SessionCommands.prepare, arguments: args }));
      expect(error.code).toBe(JsonRpcErrorCodes.InvalidParams);
      expect(error.data).toEqual({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
    }
    const noArguments = await responseErrorOf(client.connection.sendRequest('workspace/executeCommand', { command: SessionCommands.parse }));
    expect(noArguments.data).toEqual({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
  });

  it('answers an unknown command with MethodNotFound', async () => {
    expect((await errorCode('dshSession.launchMissiles', {})).code).toBe(JsonRpcErrorCodes.MethodNotFound);
  });

  it('survives malformed requests and bytes, and keeps answering', async () => {
    // Params of the wrong shape for every handler: InvalidParams, an unchanged answer, or another JSON-RPC error.
    expect((await responseErrorOf(client.request('textDocument/completion', { textDocument: 42 }))).code).toBe(JsonRpcErrorCodes.InvalidParams);
    const strangeItem = { label: 'x', data: { kind: 'dsh-session', sessionId: 5 } };
    expect(await client.request('completionItem/resolve', strangeItem)).toEqual(strangeItem);
    expect((await responseErrorOf(client.request('workspace/executeCommand', { command: 42 }))).code).toBe(JsonRpcErrorCodes.MethodNotFound);
    expect(
      (await responseErrorOf(client.request('workspace/executeCommand', { command: SessionCommands.candidates, arguments: [{ limit: 'ten' }] }))).data,
    ).toEqual({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
    const badPosition = await client
      .request('textDocument/completion', { textDocument: { uri: DOC_URI }, position: { line: 'x', character: null } })
      .then(
        () => 'answered',
        (error: { code?: unknown }) => (typeof error.code === 'number' ? 'json-rpc error' : 'other'),
      );
    expect(['answered', 'json-rpc error']).toContain(badPosition);
    // Notifications of the wrong shape, and bytes that are not JSON.
    await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri: 'file:///never-opened.md', version: 2 }, contentChanges: [{ text: 'x' }] });
    await client.connection.sendNotification('workspace/didChangeConfiguration', { settings: { dshSessions: 'not an object' } });
    client.writeRaw('Content-Length: 10\r\n\r\n{not json}');
    const answer = await client.executeCommand(SessionCommands.parse, { text: 'still here' });
    expect(answer).toEqual({ text: 'still here', references: [] });
    expect(client.running).toBe(true);
  });
});
