/**
 * The shapes of the LSP params the server accepts, checked once at the wiring boundary: a request whose
 * params do not fit answers -32602 InvalidParams naming the faulty field, a notification is ignored with one
 * log line, so the features only ever see params of the protocol's shape. Each shape checks what the
 * handlers read, by the protocol's types (`uinteger` positions, string URIs).
 */
import { JsonRpcErrorCodes } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  ParameterStructures,
  RequestType,
  ResponseError,
  type CancellationToken,
  type CodeActionParams,
  type CompletionItem,
  type CompletionParams,
  type Connection,
  type DidChangeTextDocumentParams,
  type DidCloseTextDocumentParams,
  type DidOpenTextDocumentParams,
  type DidSaveTextDocumentParams,
  type Disposable,
  type HandlerResult,
  type DocumentLinkParams,
  type ExecuteCommandParams,
  type HoverParams,
  type TextDocuments,
  type WillSaveTextDocumentParams,
  type WorkspaceFoldersChangeEvent,
} from 'vscode-languageserver/node';
import { foregroundRequests } from '../store/concurrency';

/** What `TextDocuments.listen` subscribes to (the library does not export the type from its node entry). */
type TextDocumentConnection = Parameters<TextDocuments<TextDocument>['listen']>[0];

/** Checks one value: undefined when it fits, else what is wrong with it, named by its path `at`. */
type Check = (value: unknown, at: string) => string | undefined;

/** A check that, when it passes, lets the handlers use the value as a `T`. */
export interface ParamsShape<T> {
  readonly check: Check;
  /** The path of the checked value in the message (`params`, or `params.event` for a part of them). */
  readonly at: string;
  /** Never set: carries `T` for {@link checkParams}. */
  readonly type?: T;
}

/** The largest LSP `uinteger` (2^31 - 1). */
const MAX_UINTEGER = 2 ** 31 - 1;

function described(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return `a ${typeof value}`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const string: Check = (value, at) => (typeof value === 'string' ? undefined : `${at} must be a string (got ${described(value)})`);

const integer: Check = (value, at) => (Number.isInteger(value) ? undefined : `${at} must be an integer (got ${described(value)})`);

const uinteger: Check = (value, at) =>
  Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_UINTEGER
    ? undefined
    : `${at} must be an integer from 0 to ${MAX_UINTEGER} (got ${described(value)})`;

/** Absent (undefined) or fitting `check`. */
const optional =
  (check: Check): Check =>
  (value, at) =>
    value === undefined ? undefined : check(value, at);

const arrayOf =
  (check: Check): Check =>
  (value, at) => {
    if (!Array.isArray(value)) return `${at} must be an array (got ${described(value)})`;
    for (let index = 0; index < value.length; index++) {
      const problem = check(value[index], `${at}[${index}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };

/** An object whose listed fields fit their checks (other fields are left alone). */
const record =
  (fields: Record<string, Check>): Check =>
  (value, at) => {
    if (!isObject(value)) return `${at} must be an object (got ${described(value)})`;
    for (const [name, check] of Object.entries(fields)) {
      const problem = check(value[name], `${at}.${name}`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };

const shape = <T>(check: Check, at = 'params'): ParamsShape<T> => ({ check, at });

const textDocumentIdentifier = record({ uri: string });
const position = record({ line: uinteger, character: uinteger });
const range = record({ start: position, end: position });
const textDocumentPosition = { textDocument: textDocumentIdentifier, position };

/** `textDocument/completion`. */
export const COMPLETION_PARAMS = shape<CompletionParams>(
  record({ ...textDocumentPosition, context: optional(record({ triggerKind: integer, triggerCharacter: optional(string) })) }),
);
/** `completionItem/resolve` (its `data` is the feature's to recognise). */
export const COMPLETION_ITEM = shape<CompletionItem>(record({ label: string }));
/** `textDocument/hover`. */
export const HOVER_PARAMS = shape<HoverParams>(record(textDocumentPosition));
/** `textDocument/codeAction` (the client's diagnostics are matched by range). */
export const CODE_ACTION_PARAMS = shape<CodeActionParams>(
  record({
    textDocument: textDocumentIdentifier,
    range,
    context: record({ diagnostics: arrayOf(record({ range })), only: optional(arrayOf(string)) }),
  }),
);
/** `textDocument/documentLink`. */
export const DOCUMENT_LINK_PARAMS = shape<DocumentLinkParams>(record({ textDocument: textDocumentIdentifier }));
/**
 * `workspace/executeCommand`: only an object; an unknown `command` is MethodNotFound and wrong-shaped
 * `arguments` are INVALID_REFERENCE, both decided by the commands (lsp-contract.md "Errors").
 */
export const EXECUTE_COMMAND_PARAMS = shape<ExecuteCommandParams>(record({}));

/** `textDocument/didOpen`. */
export const DID_OPEN_PARAMS = shape<DidOpenTextDocumentParams>(
  record({ textDocument: record({ uri: string, languageId: string, version: integer, text: string }) }),
);
/** `textDocument/didChange`: whole-text or ranged changes. */
export const DID_CHANGE_PARAMS = shape<DidChangeTextDocumentParams>(
  record({
    textDocument: record({ uri: string, version: integer }),
    contentChanges: arrayOf(record({ range: optional(range), rangeLength: optional(uinteger), text: string })),
  }),
);
/** `textDocument/didClose`. */
export const DID_CLOSE_PARAMS = shape<DidCloseTextDocumentParams>(record({ textDocument: textDocumentIdentifier }));
/** `textDocument/didSave`. */
export const DID_SAVE_PARAMS = shape<DidSaveTextDocumentParams>(record({ textDocument: textDocumentIdentifier, text: optional(string) }));
/** `textDocument/willSave` and `textDocument/willSaveWaitUntil`. */
export const WILL_SAVE_PARAMS = shape<WillSaveTextDocumentParams>(record({ textDocument: textDocumentIdentifier, reason: integer }));
/** The `event` of `workspace/didChangeWorkspaceFolders`. */
export const WORKSPACE_FOLDERS_CHANGE = shape<WorkspaceFoldersChangeEvent>(
  record({ added: arrayOf(record({ uri: string, name: string })), removed: arrayOf(record({ uri: string, name: string })) }),
  'params.event',
);

/** What is wrong with `params` for `shape`, or undefined when they fit. */
export function paramsProblem(params: unknown, shape: ParamsShape<unknown>): string | undefined {
  return shape.check(params, shape.at);
}

/** `params` as a `T`, or a thrown -32602 InvalidParams naming the method and the faulty field. */
export function checkParams<T>(method: string, params: unknown, shape: ParamsShape<T>): T {
  const problem = paramsProblem(params, shape);
  if (problem !== undefined) throw new ResponseError(JsonRpcErrorCodes.InvalidParams, `${method}: ${problem}`);
  return params as T;
}

/**
 * Register a request handler that only sees params of `shape`. Params by position (an array) or none are
 * refused by the connection itself, also with InvalidParams.
 */
export function onCheckedRequest<P, R>(
  connection: Pick<Connection, 'onRequest'>,
  method: string,
  shape: ParamsShape<P>,
  handler: (params: P, token: CancellationToken) => HandlerResult<R, void>,
): Disposable {
  return connection.onRequest(new RequestType<P, R, void>(method, ParameterStructures.byName), async (params, token) => {
    // Counted while in progress: background store work waits for a quiet moment (store/concurrency.ts).
    const ended = foregroundRequests.begin();
    try {
      return await handler(checkParams(method, params, shape), token);
    } finally {
      ended();
    }
  });
}

/**
 * A notification handler that ignores params not of `shape`, with one log line. A handler's promise
 * is handed back to vscode-jsonrpc, which awaits it and logs a rejection.
 */
export function checkedNotification<P>(
  method: string,
  shape: ParamsShape<P>,
  log: (message: string) => void,
  handler: (params: P) => void | Promise<void>,
): (params: unknown) => void | Promise<void> {
  return (params) => {
    const problem = paramsProblem(params, shape);
    if (problem === undefined) return handler(params as P);
    log(`ignored ${method}: ${problem}`);
  };
}

/**
 * The document-sync side of `connection` for `TextDocuments.listen`, with every notification checked
 * (a malformed one is ignored and logged) and `willSaveWaitUntil` answering InvalidParams.
 */
export function checkedDocumentSync(connection: Connection, log: (message: string) => void): TextDocumentConnection {
  return {
    onDidOpenTextDocument: (handler) =>
      connection.onDidOpenTextDocument(checkedNotification('textDocument/didOpen', DID_OPEN_PARAMS, log, handler)),
    onDidChangeTextDocument: (handler) =>
      connection.onDidChangeTextDocument(checkedNotification('textDocument/didChange', DID_CHANGE_PARAMS, log, handler)),
    onDidCloseTextDocument: (handler) =>
      connection.onDidCloseTextDocument(checkedNotification('textDocument/didClose', DID_CLOSE_PARAMS, log, handler)),
    onDidSaveTextDocument: (handler) =>
      connection.onDidSaveTextDocument(checkedNotification('textDocument/didSave', DID_SAVE_PARAMS, log, handler)),
    onWillSaveTextDocument: (handler) =>
      connection.onWillSaveTextDocument(checkedNotification('textDocument/willSave', WILL_SAVE_PARAMS, log, handler)),
    onWillSaveTextDocumentWaitUntil: (handler) =>
      onCheckedRequest(connection, 'textDocument/willSaveWaitUntil', WILL_SAVE_PARAMS, handler),
  };
}
