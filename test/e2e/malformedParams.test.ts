/**
 * Malformed params against the real server over stdio: every request method answers -32602 InvalidParams
 * naming the faulty field (never InternalError), `workspace/executeCommand` keeps the contract's codes, and
 * malformed notifications are ignored with one log line while the server keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseError, Trace, TraceFormat } from 'vscode-jsonrpc/node';
import { JsonRpcErrorCodes, SessionCommands } from '@dsh-session-ls/shared';
import { fileUri, pollUntil, type LspTestClient } from '../support/lspClient';
import { EXAMPLE_STORE, WEATHER_APP, startServer, waitForSessions } from './helpers';

const DOC = fileUri(`${WEATHER_APP}/PROMPT.md`);
const AT = { line: 0, character: 1 };
const RANGE = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };

let client: LspTestClient;
let cleanup: () => Promise<void>;
/** Every response the client received, as on the wire (traced), for requests written as raw bytes. */
const responses: Array<{ id?: unknown; result?: unknown; error?: { code: number; message: string } }> = [];

beforeAll(async () => {
  ({ client, cleanup } = await startServer({}, { args: ['--sessions-root', EXAMPLE_STORE] }));
  await waitForSessions(client, 5);
  await client.openDocument(DOC, '@');
  // The client's API sends non-object params by position (`[null]`); raw requests need their answers traced.
  await client.connection.trace(
    Trace.Messages,
    {
      log: (entry: unknown) => {
        const traced = entry as { type?: string; message?: (typeof responses)[number] };
        if (traced.type === 'receive-response' && traced.message !== undefined) responses.push(traced.message);
      },
    },
    { traceFormat: TraceFormat.JSON },
  );
});
afterAll(async () => {
  await cleanup();
});

/** The JSON-RPC error a request answered; fails when it answered a result. */
async function errorOf(method: string, params: unknown): Promise<ResponseError<unknown>> {
  const outcome = await client.request(method, params).then((value) => ({ answered: value }), (error: unknown) => error);
  expect({ method, params, outcome }).toEqual({ method, params, outcome: expect.any(ResponseError) });
  return outcome as ResponseError<unknown>;
}

/** The server still answers well-formed requests: completion on the open document, and a command. */
async function expectServing(): Promise<void> {
  expect(client.running).toBe(true);
  const list = await client.completion(DOC, AT);
  expect(list.items.length).toBeGreaterThan(0);
  expect(await client.executeCommand(SessionCommands.parse, { text: 'still here' })).toEqual({ text: 'still here', references: [] });
}

let rawRequests = 0;

/** Write a request with `params` (raw JSON text, or none) as bytes, and wait for its answer. */
async function rawAnswer(method: string, params: string | undefined): Promise<(typeof responses)[number]> {
  const id = `raw-${++rawRequests}`;
  const body = `{"jsonrpc":"2.0","id":"${id}","method":"${method}"${params === undefined ? '' : `,"params":${params}`}}`;
  client.writeRaw(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return pollUntil(() => responses.find((response) => response.id === id), 20_000, `the answer to ${method} ${params}`);
}

/** Params that are not an object, as raw JSON (the protocol's params are always an object; none is malformed too). */
const NOT_AN_OBJECT: Array<string | undefined> = [undefined, 'null', '0', '"text"', '[]', '[1,2]', '[{"textDocument":{"uri":"file:///x"}}]'];

/** Per method: malformed params, each with the field its error message must name. */
const MALFORMED: Record<string, Array<[unknown, string]>> = {
  'textDocument/completion': [
    [{}, 'params.textDocument'],
    [{ textDocument: null, position: AT }, 'params.textDocument'],
    [{ textDocument: { uri: 42 }, position: AT }, 'params.textDocument.uri'],
    [{ textDocument: 42, position: AT }, 'params.textDocument'],
    [{ textDocument: { uri: DOC } }, 'params.position'],
    [{ textDocument: { uri: DOC }, position: null }, 'params.position'],
    [{ textDocument: { uri: DOC }, position: { line: -1, character: -1 } }, 'params.position.line'],
    [{ textDocument: { uri: DOC }, position: { line: '0', character: '1' } }, 'params.position.line'],
    [{ textDocument: { uri: DOC }, position: { line: 0, character: 1e15 } }, 'params.position.character'],
    [{ textDocument: { uri: DOC }, position: AT, context: { triggerKind: 'typed' } }, 'params.context.triggerKind'],
  ],
  'completionItem/resolve': [
    [{}, 'params.label'],
    [{ label: 5, data: { kind: 'dsh-session', sessionId: { toString: 1 }, label: null, createdAt: 'x' } }, 'params.label'],
  ],
  'textDocument/hover': [
    [{}, 'params.textDocument'],
    [{ textDocument: { uri: DOC }, position: null }, 'params.position'],
    [{ textDocument: { uri: DOC }, position: { line: 0.5, character: 0 } }, 'params.position.line'],
  ],
  'textDocument/codeAction': [
    [{ textDocument: { uri: DOC }, range: 'everything', context: null }, 'params.range'],
    [{ textDocument: { uri: DOC }, range: RANGE }, 'params.context'],
    [{ textDocument: { uri: DOC }, range: { start: { line: 5, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: 'x' } }, 'params.context.diagnostics'],
    [{ textDocument: { uri: DOC }, range: RANGE, context: { diagnostics: [null] } }, 'params.context.diagnostics[0]'],
    [{ textDocument: { uri: DOC }, range: RANGE, context: { diagnostics: [], only: 'quickfix' } }, 'params.context.only'],
  ],
  'textDocument/documentLink': [
    [{}, 'params.textDocument'],
    [{ textDocument: { uri: null } }, 'params.textDocument.uri'],
  ],
  'workspace/executeCommand': [],
};

describe('malformed request params', () => {
  for (const [method, cases] of Object.entries(MALFORMED)) {
    it(`${method} answers InvalidParams naming the field, and the server keeps serving`, async () => {
      for (const params of NOT_AN_OBJECT) {
        const answer = await rawAnswer(method, params);
        expect({ params, code: answer.error?.code }).toEqual({ params, code: JsonRpcErrorCodes.InvalidParams });
      }
      for (const [params, field] of cases) {
        const error = await errorOf(method, params);
        expect({ params, code: error.code, message: error.message }).toEqual({
          params,
          code: JsonRpcErrorCodes.InvalidParams,
          message: expect.stringContaining(`${method}: ${field} must be`),
        });
      }
      await expectServing();
    });
  }

  it('workspace/executeCommand keeps its contract: an unknown command is MethodNotFound, wrong arguments INVALID_REFERENCE', async () => {
    expect((await errorOf('workspace/executeCommand', { command: 42, arguments: 'not an array' })).code).toBe(JsonRpcErrorCodes.MethodNotFound);
    const wrongArguments = await errorOf('workspace/executeCommand', { command: SessionCommands.prepare, arguments: { text: 'not an array' } });
    expect({ code: wrongArguments.code, data: wrongArguments.data }).toEqual({
      code: JsonRpcErrorCodes.InvalidParams,
      data: { code: 'SESSION_REFERENCE_INVALID_REFERENCE' },
    });
    await expectServing();
  });

  it('well-formed params still reach the features: hover, code actions, links and resolve answer results', async () => {
    expect(await client.request('textDocument/hover', { textDocument: { uri: DOC }, position: AT })).toBeNull();
    expect(await client.request('textDocument/documentLink', { textDocument: { uri: DOC } })).toEqual([]);
    expect(await client.request('textDocument/codeAction', { textDocument: { uri: DOC }, range: RANGE, context: { diagnostics: [] } })).toEqual([]);
    // An item that is not a session's is the feature's to leave alone.
    const foreign = { label: 'x', data: { kind: 'dsh-session', sessionId: 5 } };
    expect(await client.resolve(foreign)).toEqual(foreign);
  });

  it('nothing it sent was an internal error', () => {
    expect(client.stderr).not.toMatch(/internal error/i);
  });
});

describe('malformed notifications', () => {
  it('are ignored with one log line each, and the document keeps syncing', async () => {
    const uri = fileUri(`${WEATHER_APP}/NOTES.md`);
    const before = client.stderr.split('\n').filter((line) => line.includes('ignored ')).length;
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 5, version: 'one', text: 42 } });
    await client.connection.sendNotification('textDocument/didOpen', null);
    await client.openDocument(uri, 'plain');
    await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: 'all of it' });
    await client.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 99, character: 99 }, end: { line: -4, character: 0 } }, text: 7 }],
    });
    await client.connection.sendNotification('textDocument/didClose', { textDocument: null });
    await client.connection.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added: 'x', removed: null } });
    const ignored = await pollUntil(() => {
      const lines = client.stderr.split('\n').filter((line) => line.includes('ignored '));
      return lines.length >= before + 6 ? lines.slice(before) : undefined;
    }, 20_000, 'six ignored notifications logged');
    expect(ignored).toEqual([
      expect.stringContaining('ignored textDocument/didOpen: params.textDocument.languageId must be a string'),
      expect.stringContaining('ignored textDocument/didOpen: params must be an object (got null)'),
      expect.stringContaining('ignored textDocument/didChange: params.contentChanges must be an array'),
      expect.stringContaining('ignored textDocument/didChange: params.contentChanges[0].range.end.line must be an integer'),
      expect.stringContaining('ignored textDocument/didClose: params.textDocument must be an object (got null)'),
      expect.stringContaining('ignored workspace/didChangeWorkspaceFolders: params.event.added must be an array'),
    ]);
    // The document is still open with its text: a well-formed edit applies and completion sees it.
    await client.changeDocument(uri, 'plain @');
    const list = await client.completion(uri, { line: 0, character: 'plain @'.length });
    expect(list.items.length).toBeGreaterThan(0);
    await expectServing();
  });
});
