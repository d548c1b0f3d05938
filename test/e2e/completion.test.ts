import { afterEach, describe, expect, it } from 'vitest';
import { JsonRpcErrorCodes, SessionCommands, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import type { CompletionItem, CompletionList, MarkupContent, TextEdit } from 'vscode-languageserver-protocol';
import { fileUri, responseErrorOf, type LspTestClient } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, WEATHER_APP, acceptItem, cursorIn, startServer, waitForSessions } from './helpers';

const EXAMPLE_SESSION_COUNT = Object.keys(EXAMPLE_SESSIONS).length;

const PROMPT_URI = fileUri(`${WEATHER_APP}/PROMPT.md`);
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function server(settings: unknown = null): Promise<LspTestClient> {
  const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: EXAMPLE_STORE } }, { settings });
  cleanups.push(cleanup);
  return client;
}

/** Open `marked` (cursor at `|`) and complete there, once the store is indexed. */
async function completeIn(client: LspTestClient, marked: string, uri = PROMPT_URI): Promise<{ list: CompletionList; text: string }> {
  await waitForSessions(client, EXAMPLE_SESSION_COUNT);
  const { text, position } = cursorIn(marked);
  await client.openDocument(uri, text);
  const list = await client.completion(uri, position);
  await client.closeDocument(uri);
  return { list, text };
}

describe('textDocument/completion over the real server and store', () => {
  it('offers the sessions in candidate order; accepting an item leaves @ + the candidate mention', async () => {
    const client = await server();
    await waitForSessions(client, EXAMPLE_SESSION_COUNT);
    const candidates = await client.executeCommand<SessionReferenceMentionCandidate[]>(SessionCommands.candidates, {
      textDocument: { uri: PROMPT_URI },
    });
    const { list, text } = await completeIn(client, 'Reuse what we did in @|');
    expect(list.isIncomplete).toBe(false);
    expect(list.items.map((item) => item.label)).toEqual(candidates.map((candidate) => candidate.label));
    expect(list.items[0]!.label).toBe('Fix flaky time zone test');
    for (const [index, item] of list.items.entries()) {
      // The example labels are display-safe already, so the inserted mention is the candidate's own.
      expect(acceptItem(text, item)).toBe(`Reuse what we did in ${candidates[index]!.mention}`);
      expect((item.textEdit as TextEdit).newText.startsWith('@')).toBe(false);
      expect(item.sortText).toBe(`b${String(index).padStart(6, '0')}`);
      expect(item.kind).toBe(18);
    }
    const releaseNames = list.items.find((item) => item.label === 'Release names [v2.0]')!;
    expect(releaseNames.detail).toBe('(no cwd)');
    expect(acceptItem(text, releaseNames)).toContain('@[Release names [v2.0\\]](dsh-session:');
  });

  it('replaces the whole token when the cursor is inside it, and filters by the query as typed', async () => {
    const client = await server();
    const { list, text } = await completeIn(client, 'see @OpenW|eXYZ and more');
    expect(list.items.map((item) => item.label)).toEqual(['Cache OpenWeather responses']);
    const item = list.items[0]!;
    expect(item.filterText).toBe(`OpenW Cache OpenWeather responses ${EXAMPLE_SESSIONS.cache} ${WEATHER_APP}`);
    expect(item.labelDetails?.description).toMatch(/ ago$|^just now$/);
    expect(item.detail).toBe(WEATHER_APP);
    expect(acceptItem(text, item)).toBe(`see @[Cache OpenWeather responses](dsh-session:IjdkMmE5ZTQ0LTBjNjEtNGI4Zi1hM2Q1LTZlN2Y4MDkxYTJiMyI) and more`);
  });

  it('works on CRLF documents with UTF-16 positions', async () => {
    const client = await server();
    const { list, text } = await completeIn(client, 'first line\r\n😀 日本 @hourly|\r\nlast');
    expect(list.items).toHaveLength(1);
    expect((list.items[0]!.textEdit as TextEdit).range).toEqual({ start: { line: 1, character: 7 }, end: { line: 1, character: 13 } });
    expect(acceptItem(text, list.items[0]!).split('\r\n')[1]).toBe(
      '😀 日本 @[Hourly forecast endpoint](dsh-session:IjBiNmYzYzFlLTVhN2QtNGMyZS05ZjExLTNkOGUyYTRiNmMwMSI)',
    );
  });

  it('offers nothing for an e-mail address, a quoted path or inside an existing mention', async () => {
    const client = await server();
    for (const marked of ['mail me@exam|', 'see @"docs/a|', 'x @[Fix](dsh-session:ImMzZThmMWEyLTRiNWQtNGY2MC04ZTcxLTkyYTNiNGM1ZDZlNyI|)']) {
      expect((await completeIn(client, marked)).list.items).toEqual([]);
    }
  });

  it('is incomplete exactly when the list was cut at candidateLimit', async () => {
    const cut = await completeIn(await server({ candidateLimit: 2 }), '@|');
    expect(cut.list.items).toHaveLength(2);
    expect(cut.list.isIncomplete).toBe(true);
    const whole = await completeIn(await server({ candidateLimit: 5 }), '@|');
    expect(whole.list.items).toHaveLength(5);
    expect(whole.list.isIncomplete).toBe(false);
  });

  it('resolves an item with a Markdown preview of the session', async () => {
    const client = await server();
    const { list } = await completeIn(client, '@flaky|');
    const resolved = await client.resolve(list.items[0]!);
    const documentation = resolved.documentation as MarkupContent;
    expect(documentation.kind).toBe('markdown');
    expect(documentation.value).toContain('**Fix flaky time zone test**');
    expect(documentation.value).toContain('cwd: /home/sam/weather-app\n');
    expect(documentation.value).toContain('3 messages: 1 prompt, 1 answer, 1 compaction summary');
    expect(documentation.value).toContain('**Latest exchange**');
    expect({ ...resolved, documentation: undefined }).toEqual({ ...list.items[0]!, documentation: undefined });
  });

  it('answers a completion cancelled by $/cancelRequest with RequestCancelled, then keeps serving', async () => {
    const client = await server();
    // Indexed first, so "keeps serving" can expect every session (the cancellation itself does not depend on it).
    await waitForSessions(client, EXAMPLE_SESSION_COUNT);
    const { text, position } = cursorIn('@|');
    await client.openDocument(PROMPT_URI, text);
    const error = await responseErrorOf(
      client.requestCancelledAtOnce('textDocument/completion', { textDocument: { uri: PROMPT_URI }, position }),
    );
    expect(error.code).toBe(JsonRpcErrorCodes.RequestCancelled);
    expect(error.data).toEqual({ code: 'SESSION_REFERENCE_CANCELLED' });
    const cancelledCommand = await responseErrorOf(
      client.requestCancelledAtOnce('workspace/executeCommand', { command: SessionCommands.candidates, arguments: [{}] }),
    );
    expect(cancelledCommand.code).toBe(JsonRpcErrorCodes.RequestCancelled);
    const after = await client.completion(PROMPT_URI, position);
    expect(after.items).toHaveLength(EXAMPLE_SESSION_COUNT);
  });

  it('answers an unknown document with no items', async () => {
    const client = await server();
    const list = await client.completion(fileUri('/not/open.md'), { line: 0, character: 1 });
    expect(list).toEqual({ isIncomplete: false, items: [] as CompletionItem[] });
  });
});
