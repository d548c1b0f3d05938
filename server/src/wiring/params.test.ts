import { PassThrough } from 'node:stream';
import { JsonRpcErrorCodes } from '@dsh-session-ls/shared';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseError as ClientResponseError } from 'vscode-jsonrpc/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { ResponseError, TextDocuments, createConnection } from 'vscode-languageserver/node';
import { LspTestClient, pollUntil } from '../../../test/support/lspClient';
import {
  CODE_ACTION_PARAMS,
  COMPLETION_ITEM,
  COMPLETION_PARAMS,
  DID_CHANGE_PARAMS,
  DID_OPEN_PARAMS,
  DOCUMENT_LINK_PARAMS,
  EXECUTE_COMMAND_PARAMS,
  HOVER_PARAMS,
  WORKSPACE_FOLDERS_CHANGE,
  checkParams,
  checkedDocumentSync,
  checkedNotification,
  onCheckedRequest,
  paramsProblem,
  type ParamsShape,
} from './params';

const URI = 'file:///w/message.md';
const AT = { line: 0, character: 3 };
const RANGE = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };

/** Per shape: params a conforming client sends, and malformed variants with the field the problem must name. */
const CASES: Array<{ name: string; shape: ParamsShape<unknown>; valid: unknown[]; malformed: Array<[unknown, string]> }> = [
  {
    name: 'completion',
    shape: COMPLETION_PARAMS,
    valid: [
      { textDocument: { uri: URI }, position: AT },
      { textDocument: { uri: URI }, position: AT, context: { triggerKind: 2, triggerCharacter: '@' } },
      { textDocument: { uri: URI }, position: { line: 2 ** 31 - 1, character: 0 }, workDoneToken: 'w' },
    ],
    malformed: [
      [null, 'params must be an object (got null)'],
      [[], 'params must be an object (got an array)'],
      [{}, 'params.textDocument must be an object'],
      [{ textDocument: null, position: AT }, 'params.textDocument must be an object (got null)'],
      [{ textDocument: { uri: 42 }, position: AT }, 'params.textDocument.uri must be a string (got 42)'],
      [{ textDocument: { uri: URI } }, 'params.position must be an object'],
      [{ textDocument: { uri: URI }, position: { line: -1, character: 0 } }, 'params.position.line must be an integer'],
      [{ textDocument: { uri: URI }, position: { line: 0, character: 1.5 } }, 'params.position.character must be an integer'],
      [{ textDocument: { uri: URI }, position: { line: '0', character: 1 } }, 'params.position.line must be an integer'],
      [{ textDocument: { uri: URI }, position: { line: 2 ** 31, character: 0 } }, 'params.position.line must be an integer from 0 to 2147483647'],
      [{ textDocument: { uri: URI }, position: AT, context: null }, 'params.context must be an object'],
      [{ textDocument: { uri: URI }, position: AT, context: { triggerKind: 2, triggerCharacter: 5 } }, 'params.context.triggerCharacter must be a string'],
    ],
  },
  {
    name: 'completionItem/resolve',
    shape: COMPLETION_ITEM,
    valid: [{ label: 'x' }, { label: 'x', data: { kind: 'dsh-session', sessionId: 5 } }],
    malformed: [
      [{}, 'params.label must be a string'],
      [{ label: 5 }, 'params.label must be a string (got 5)'],
      ['label', 'params must be an object (got a string)'],
    ],
  },
  {
    name: 'hover',
    shape: HOVER_PARAMS,
    valid: [{ textDocument: { uri: URI }, position: AT }],
    malformed: [
      [{ textDocument: { uri: URI }, position: null }, 'params.position must be an object (got null)'],
      [{ position: AT }, 'params.textDocument must be an object'],
    ],
  },
  {
    name: 'codeAction',
    shape: CODE_ACTION_PARAMS,
    valid: [
      { textDocument: { uri: URI }, range: RANGE, context: { diagnostics: [] } },
      // A reversed range is the feature's to clamp, not malformed.
      { textDocument: { uri: URI }, range: { start: RANGE.end, end: RANGE.start }, context: { diagnostics: [{ range: RANGE, message: 'm' }], only: ['quickfix'] } },
    ],
    malformed: [
      [{ textDocument: { uri: URI }, range: 'everything', context: { diagnostics: [] } }, 'params.range must be an object'],
      [{ textDocument: { uri: URI }, range: { start: AT }, context: { diagnostics: [] } }, 'params.range.end must be an object'],
      [{ textDocument: { uri: URI }, range: RANGE, context: null }, 'params.context must be an object'],
      [{ textDocument: { uri: URI }, range: RANGE, context: { diagnostics: 'x' } }, 'params.context.diagnostics must be an array'],
      [{ textDocument: { uri: URI }, range: RANGE, context: { diagnostics: [null] } }, 'params.context.diagnostics[0] must be an object'],
      [{ textDocument: { uri: URI }, range: RANGE, context: { diagnostics: [{ range: RANGE }, { range: 1 }] } }, 'params.context.diagnostics[1].range must be an object'],
      [{ textDocument: { uri: URI }, range: RANGE, context: { diagnostics: [], only: 'quickfix' } }, 'params.context.only must be an array'],
    ],
  },
  {
    name: 'documentLink',
    shape: DOCUMENT_LINK_PARAMS,
    valid: [{ textDocument: { uri: URI } }],
    malformed: [[{ textDocument: 'x' }, 'params.textDocument must be an object (got a string)']],
  },
  {
    name: 'executeCommand (the commands judge command and arguments)',
    shape: EXECUTE_COMMAND_PARAMS,
    valid: [{ command: 'dshSession.parse', arguments: [{ text: 'x' }] }, { command: 42, arguments: 'not an array' }],
    malformed: [[null, 'params must be an object (got null)'], [0, 'params must be an object (got 0)']],
  },
  {
    name: 'didOpen',
    shape: DID_OPEN_PARAMS,
    valid: [{ textDocument: { uri: URI, languageId: 'markdown', version: 1, text: '' } }],
    malformed: [[{ textDocument: { uri: URI, languageId: 5, version: 'one', text: 42 } }, 'params.textDocument.languageId must be a string']],
  },
  {
    name: 'didChange',
    shape: DID_CHANGE_PARAMS,
    valid: [
      { textDocument: { uri: URI, version: 2 }, contentChanges: [{ text: 'all' }, { range: RANGE, text: 'x' }] },
      { textDocument: { uri: URI, version: 3 }, contentChanges: [] },
    ],
    malformed: [
      [{ textDocument: { uri: URI, version: 2 }, contentChanges: 'all of it' }, 'params.contentChanges must be an array'],
      [{ textDocument: { uri: URI, version: null }, contentChanges: [] }, 'params.textDocument.version must be an integer (got null)'],
      [{ textDocument: { uri: URI, version: 3 }, contentChanges: [{ range: { start: AT, end: { line: -4, character: 0 } }, text: 'x' }] }, 'params.contentChanges[0].range.end.line'],
      [{ textDocument: { uri: URI, version: 3 }, contentChanges: [{ text: 7 }] }, 'params.contentChanges[0].text must be a string'],
    ],
  },
  {
    name: 'workspace folders change',
    shape: WORKSPACE_FOLDERS_CHANGE,
    valid: [{ added: [{ uri: 'file:///w', name: 'w' }], removed: [] }],
    malformed: [
      [{ added: 'x', removed: null }, 'params.event.added must be an array'],
      [{ added: [], removed: [{ uri: 'file:///w' }] }, 'params.event.removed[0].name must be a string'],
    ],
  },
];

describe('param shapes', () => {
  for (const { name, shape, valid, malformed } of CASES) {
    it(`${name}: accepts what a conforming client sends and names the faulty field of the rest`, () => {
      for (const params of valid) expect({ params, problem: paramsProblem(params, shape) }).toEqual({ params, problem: undefined });
      for (const [params, problem] of malformed) expect({ params, problem: paramsProblem(params, shape) }).toEqual({ params, problem: expect.stringContaining(problem) });
    });
  }

  it('checkParams returns the params as they are, or throws InvalidParams naming the method', () => {
    const params = { textDocument: { uri: URI }, position: AT };
    expect(checkParams('textDocument/hover', params, HOVER_PARAMS)).toBe(params);
    let thrown: unknown;
    try {
      checkParams('textDocument/hover', { textDocument: { uri: URI } }, HOVER_PARAMS);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ResponseError);
    expect((thrown as ResponseError<unknown>).code).toBe(JsonRpcErrorCodes.InvalidParams);
    expect((thrown as ResponseError<unknown>).message).toBe('textDocument/hover: params.position must be an object (got nothing)');
  });

  it('checkedNotification calls the handler with fitting params only, and logs one line for the others', async () => {
    const logged: string[] = [];
    const seen: unknown[] = [];
    const handler = checkedNotification('textDocument/didClose', DOCUMENT_LINK_PARAMS, (m) => logged.push(m), (p) => {
      seen.push(p);
    });
    await handler({ textDocument: { uri: URI } });
    await handler({ textDocument: null });
    await handler(undefined);
    expect(seen).toEqual([{ textDocument: { uri: URI } }]);
    expect(logged).toEqual([
      'ignored textDocument/didClose: params.textDocument must be an object (got null)',
      'ignored textDocument/didClose: params must be an object (got nothing)',
    ]);
  });

  it("checkedNotification hands a handler's promise back (vscode-jsonrpc awaits it and logs a rejection)", async () => {
    const failure = new Error('handler failed');
    const handler = checkedNotification('textDocument/didClose', DOCUMENT_LINK_PARAMS, () => undefined, () => Promise.reject(failure));
    await expect(handler({ textDocument: { uri: URI } })).rejects.toBe(failure);
  });
});

describe('checked handlers on a connection', () => {
  const stops: Array<() => void> = [];
  afterEach(() => stops.splice(0).forEach((stop) => stop()));

  /** An in-process connection with a checked hover handler and checked document sync, and a client. */
  async function start() {
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const connection = createConnection(toServer, fromServer);
    const documents = new TextDocuments(TextDocument);
    const logged: string[] = [];
    connection.onInitialize(() => ({ capabilities: { hoverProvider: true, textDocumentSync: 2 } }));
    onCheckedRequest(connection, 'textDocument/hover', HOVER_PARAMS, (params) => {
      const document = documents.get(params.textDocument.uri);
      return { contents: `${document?.getText() ?? 'closed'} at ${params.position.line}:${params.position.character}` };
    });
    documents.listen(checkedDocumentSync(connection, (m) => logged.push(m)));
    connection.listen();
    const client = LspTestClient.overStreams(fromServer, toServer);
    stops.push(() => {
      client.dispose();
      connection.dispose();
    });
    await client.initialize();
    return { client, documents, logged };
  }

  /** The JSON-RPC error a request answered (the test client's own jsonrpc copy). */
  async function errorOf(promise: Promise<unknown>): Promise<ClientResponseError<unknown>> {
    const outcome = await promise.then((value) => ({ value }), (error: unknown) => error);
    expect(outcome).toBeInstanceOf(ClientResponseError);
    return outcome as ClientResponseError<unknown>;
  }

  it('answers malformed params, params by position and no params with InvalidParams, then answers well-formed ones', async () => {
    const { client } = await start();
    for (const params of [{}, { textDocument: { uri: URI }, position: { line: -1, character: 0 } }, [{ textDocument: { uri: URI }, position: AT }], undefined]) {
      const error = await errorOf(client.request('textDocument/hover', params));
      expect({ params, code: error.code }).toEqual({ params, code: JsonRpcErrorCodes.InvalidParams });
    }
    const bad = await errorOf(client.request('textDocument/hover', { textDocument: { uri: URI }, position: null }));
    expect(bad.message).toBe('textDocument/hover: params.position must be an object (got null)');
    expect(await client.request('textDocument/hover', { textDocument: { uri: URI }, position: AT })).toEqual({ contents: 'closed at 0:3' });
  });

  it('ignores malformed document notifications with one log line each, and keeps syncing well-formed ones', async () => {
    const { client, documents, logged } = await start();
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: URI, languageId: 5, version: 'one', text: 42 } });
    await client.connection.sendNotification('textDocument/didOpen', null);
    await client.openDocument(URI, 'hello');
    await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri: URI, version: 2 }, contentChanges: [{ text: 7 }] });
    await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri: URI, version: 2 }, contentChanges: [{ range: { start: AT, end: null }, text: 'x' }] });
    await client.changeDocument(URI, 'hello again');
    await client.connection.sendNotification('textDocument/didClose', { textDocument: 'x' });
    // The hover reads the synced text: the well-formed edits applied, the malformed ones did nothing.
    expect(await client.request('textDocument/hover', { textDocument: { uri: URI }, position: AT })).toEqual({ contents: 'hello again at 0:3' });
    await pollUntil(() => (logged.length >= 5 ? true : undefined), 20_000, 'five log lines');
    expect(logged).toEqual([
      'ignored textDocument/didOpen: params.textDocument.languageId must be a string (got 5)',
      'ignored textDocument/didOpen: params must be an object (got null)',
      'ignored textDocument/didChange: params.contentChanges[0].text must be a string (got 7)',
      'ignored textDocument/didChange: params.contentChanges[0].range.end must be an object (got null)',
      'ignored textDocument/didClose: params.textDocument must be an object (got a string)',
    ]);
    expect(documents.get(URI)?.version).toBe(2);
  });
});
