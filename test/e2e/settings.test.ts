import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionCommands, type PreparedReferencedMessage, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { fileUri, pollUntil, type LspTestClient } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, copyStore, cursorIn, removeTemporary, startServer, temporaryDirectory, waitForSessions } from './helpers';

const COUNT = Object.keys(EXAMPLE_SESSIONS).length;
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function temporary(prefix: string): string {
  const dir = temporaryDirectory(prefix);
  cleanups.push(() => removeTemporary(dir));
  return dir;
}

async function server(...args: Parameters<typeof startServer>): Promise<LspTestClient> {
  const { client, cleanup } = await startServer(...args);
  cleanups.push(cleanup);
  return client;
}

const candidates = (client: LspTestClient, argument: object = {}) =>
  client.executeCommand<SessionReferenceMentionCandidate[]>(SessionCommands.candidates, { limit: 100, ...argument });

/** The showMessage notifications of type Error so far. */
const errorMessages = (client: LspTestClient) =>
  client.messages('window/showMessage').map((message) => message.params as { type: number; message: string }).filter((params) => params.type === 1);

describe('where sessions come from', () => {
  it('takes the pulled dshSessions.sessionsRoot when initializationOptions has none', async () => {
    const client = await server({}, { settings: { sessionsRoot: EXAMPLE_STORE } });
    await waitForSessions(client, COUNT);
    expect(client.fromServer.some((message) => message.method === 'workspace/configuration')).toBe(true);
  });

  it('takes --sessions-root, then $DSH_HOME/sessions', async () => {
    await waitForSessions(await server({}, { args: ['--sessions-root', EXAMPLE_STORE] }), COUNT);
    const home = temporary('dsh-home');
    cpSync(EXAMPLE_STORE, path.join(home, 'sessions'), { recursive: true });
    await waitForSessions(await server({}, { env: { DSH_HOME: home } }), COUNT);
  });

  it('lets initializationOptions.sessionsRoot win over the setting and the flag', async () => {
    const empty = temporary('empty');
    const client = await server({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } }, { settings: { sessionsRoot: empty }, args: ['--sessions-root', empty] });
    await waitForSessions(client, COUNT);
  });

  it('expands ~ and resolves a relative root against the first workspace folder', async () => {
    const home = temporary('home');
    cpSync(EXAMPLE_STORE, path.join(home, 'my-sessions'), { recursive: true });
    await waitForSessions(await server({ initializationOptions: { sessionsRoot: '~/my-sessions' } }, { env: { HOME: home } }), COUNT);
    const folder = temporary('folder');
    cpSync(EXAMPLE_STORE, path.join(folder, 'store'), { recursive: true });
    const client = await server(
      { workspaceFolders: [{ uri: fileUri(folder), name: 'f' }], rootUri: fileUri(folder) },
      { settings: { sessionsRoot: 'store' } },
    );
    await waitForSessions(client, COUNT);
  });

  it('serves no candidates from a root that does not exist yet, and picks the sessions up once it appears', async () => {
    const base = temporary('late-root');
    const root = path.join(base, 'sessions');
    const client = await server({ initializationOptions: { sessionsRoot: root } });
    expect(await candidates(client)).toEqual([]);
    expect(errorMessages(client)).toEqual([]);
    mkdirSync(base, { recursive: true });
    cpSync(EXAMPLE_STORE, root, { recursive: true });
    await waitForSessions(client, COUNT);
  });

  it('reopens the store when a pushed setting changes the root', async () => {
    const other = copyStore();
    cleanups.push(() => removeTemporary(path.dirname(other)));
    const empty = temporary('empty-root');
    const client = await server({}, { settings: { sessionsRoot: empty } });
    expect(await candidates(client)).toEqual([]);
    await client.changeConfiguration({ dshSessions: { sessionsRoot: other } });
    await waitForSessions(client, COUNT);
    // A pull-model client sends no settings in the notification: the server pulls them again.
    client.settings = { sessionsRoot: empty };
    await client.changeConfiguration(null);
    await pollUntil(async () => ((await candidates(client)).length === 0 ? true : undefined), 20_000, 'the empty root again');
  });
});

describe('settings', () => {
  it('applies per key: the pulled section over initializationOptions', async () => {
    const client = await server(
      { initializationOptions: { sessionsRoot: EXAMPLE_STORE, candidateLimit: 1, maxReferenceBytes: 300 } },
      { settings: { candidateLimit: 2, maxReferenceBytes: null } },
    );
    await waitForSessions(client, COUNT);
    const uri = fileUri('/home/sam/weather-app/p.md');
    const { text, position } = cursorIn('@|');
    await client.openDocument(uri, text);
    expect((await client.completion(uri, position)).items).toHaveLength(2);
    // maxReferenceBytes: null in the section means unset, so initializationOptions' 300 applies.
    const prepared = await client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, {
      content: [],
      references: [{ sessionId: EXAMPLE_SESSIONS.cache }],
    });
    expect(prepared.additionalContext!.source.references[0]!.truncated).toBe(true);
  });

  it('takes the targetSessionId setting as the default target', async () => {
    const client = await server({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } }, { settings: { targetSessionId: EXAMPLE_SESSIONS.httpNotes } });
    await waitForSessions(client, COUNT - 1);
    const listed = await candidates(client);
    expect(listed.map((candidate) => candidate.sessionId)).not.toContain(EXAMPLE_SESSIONS.httpNotes);
    // Its recorded cwd (/home/sam/notes) ranks: no session shares it, so no-cwd sessions come first.
    expect(listed[0]!.sessionId).toBe(EXAMPLE_SESSIONS.releaseNames);
  });

  it('reports an invalid setting once with showMessage naming INVALID_CONFIG; that key keeps its value, the others apply', async () => {
    const client = await server({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } }, { settings: { maxReferences: 9, candidateLimit: 2 } });
    await waitForSessions(client, COUNT);
    const reported = await client.waitForMessage('window/showMessage', (params: { message: string }) => params.message.includes('maxReferences'));
    expect(reported.params).toMatchObject({ type: 1 });
    expect((reported.params as { message: string }).message).toContain('SESSION_REFERENCE_INVALID_CONFIG');
    const uri = fileUri('/home/sam/weather-app/p.md');
    await client.openDocument(uri, '@');
    expect((await client.completion(uri, { line: 0, character: 1 })).items).toHaveLength(2);
    // maxReferences kept its default of 3: three references prepare, four do not.
    const three = [EXAMPLE_SESSIONS.cache, EXAMPLE_SESSIONS.hourly, EXAMPLE_SESSIONS.flakyTest].map((sessionId) => ({ sessionId }));
    await expect(client.executeCommand(SessionCommands.prepare, { content: [], references: three })).resolves.toHaveProperty('additionalContext');
    // The same invalid value again is not reported again; the server keeps serving.
    await client.changeConfiguration({ dshSessions: { maxReferences: 9, candidateLimit: 2 } });
    await client.changeConfiguration({ dshSessions: { maxReferences: 'three', candidateLimit: 2 } });
    // A different invalid value is reported (a round trip after the first push shows it stayed silent).
    await pollUntil(() => (errorMessages(client).filter((params) => params.message.includes('maxReferences')).length >= 2 ? true : undefined));
    const maxReferencesMessages = errorMessages(client).filter((params) => params.message.includes('maxReferences'));
    expect(maxReferencesMessages).toHaveLength(2);
    expect(maxReferencesMessages[1]!.message).toContain('maxReferences must be a positive safe integer');
    expect(await candidates(client)).toHaveLength(COUNT);
  });

  it('reports invalid initializationOptions once the client is initialized, and serves with the defaults', async () => {
    const client = await server({ initializationOptions: { sessionsRoot: EXAMPLE_STORE, maxReferenceBytes: -5 } });
    const reported = await client.waitForMessage('window/showMessage');
    expect(reported.params).toMatchObject({ type: 1 });
    expect((reported.params as { message: string }).message).toMatch(
      /^SESSION_REFERENCE_INVALID_CONFIG: .*initializationOptions\.maxReferenceBytes.*maxReferenceBytes must be a positive safe integer/,
    );
    await waitForSessions(client, COUNT);
    const prepared = await client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, {
      content: [],
      references: [{ sessionId: EXAMPLE_SESSIONS.cache }],
    });
    expect(prepared.additionalContext!.source.references[0]!.truncated).toBe(false);
  });

  it('takes pushed settings from a client without workspace/configuration', async () => {
    const client = await server({ initializationOptions: { sessionsRoot: EXAMPLE_STORE }, capabilities: { workspace: { configuration: false } } });
    await waitForSessions(client, COUNT);
    expect(client.messages('workspace/configuration')).toEqual([]);
    await client.changeConfiguration({ dshSessions: { candidateLimit: 1 } });
    await client.openDocument(fileUri('/home/sam/weather-app/p.md'), '@');
    await pollUntil(async () => ((await client.completion(fileUri('/home/sam/weather-app/p.md'), { line: 0, character: 1 })).items.length === 1 ? true : undefined));
  });
});
