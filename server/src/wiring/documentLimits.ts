/**
 * Documents too big to keep ({@link MAX_DOCUMENT_LENGTH}): refused when opened or when an edit makes
 * them so, and when the framing could not even read the message carrying them (MESSAGE_TOO_LARGE).
 * The user hears it once per document (`window/showMessage`, and a log line), never a silent absence;
 * the document is then not open for the server, so every feature answers for it as for a document it
 * does not know (no completion, hover or links, no diagnostics) instead of working through it. It
 * becomes a document again when it is reopened, or replaced whole by a text under the limit.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  MessageType,
  ResponseError,
  ShowMessageNotification,
  type Connection,
  type DidCloseTextDocumentParams,
  type DidOpenTextDocumentParams,
  type TextDocuments,
} from 'vscode-languageserver/node';
import { JsonRpcErrorCodes } from '@dsh-session-ls/shared';
import { MAX_DOCUMENT_LENGTH, MESSAGE_TOO_LARGE, type MessageTooLargeParams } from './sizeLimits';

/** What `TextDocuments.listen` subscribes to (the library does not export the type from its node entry). */
type TextDocumentConnection = Parameters<TextDocuments<TextDocument>['listen']>[0];

/** The `code` in the error data of a request the framing could not read. */
export const MESSAGE_TOO_LARGE_CODE = 'MESSAGE_TOO_LARGE';

function megabytes(size: number): string {
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * `sync` (what the open documents follow) with the size limit applied, and the framing's stand-in for
 * a message too long to read answered on `connection`: a request with an error, a document with the
 * same message as one opened too big.
 */
export function limitDocumentSizes(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  sync: TextDocumentConnection,
  log: (message: string) => void,
): TextDocumentConnection {
  /** Documents refused, with their language (to reopen one replaced whole by a small text); told once each. */
  const refused = new Map<string, string>();
  // TextDocuments' own handlers (synchronous, though typed as possibly not).
  let close: ((params: DidCloseTextDocumentParams) => void | Promise<void>) | undefined;
  let open: ((params: DidOpenTextDocumentParams) => void | Promise<void>) | undefined;

  function tell(message: string): void {
    log(message);
    try {
      connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Warning, message }).catch(() => undefined);
    } catch {
      // The connection is closing: nobody is left to tell.
    }
  }

  /** Refuse `uri` (dropping it if it was open), telling the user the first time. */
  function refuse(uri: string, languageId: string, size: string): void {
    if (documents.get(uri) !== undefined) void close?.({ textDocument: { uri } });
    if (refused.has(uri)) return;
    refused.set(uri, languageId);
    tell(
      `dsh-session-ls: ${uri} is too large (${size}; the limit is ${megabytes(MAX_DOCUMENT_LENGTH)}): ` +
        'no session completion, hover, links or diagnostics in it. A prompt is far smaller; split the file to use them.',
    );
  }

  connection.onRequest(MESSAGE_TOO_LARGE, (params: MessageTooLargeParams) => {
    const what = typeof params?.method === 'string' ? params.method : 'a request';
    throw new ResponseError(JsonRpcErrorCodes.RequestFailed, `${what} is ${params?.length} bytes, over the limit of ${params?.limit}: it was not read`, {
      code: MESSAGE_TOO_LARGE_CODE,
      length: params?.length,
      limit: params?.limit,
    });
  });
  connection.onNotification(MESSAGE_TOO_LARGE, (params: MessageTooLargeParams) => {
    const size = `${megabytes(Number(params?.length))} of protocol message`;
    if (typeof params?.uri === 'string' && (params.method === 'textDocument/didOpen' || params.method === 'textDocument/didChange')) {
      refuse(params.uri, documents.get(params.uri)?.languageId ?? 'markdown', size);
    } else {
      tell(`dsh-session-ls: a message of ${size} (${params?.method ?? 'unknown method'}) is over the limit of ${megabytes(Number(params?.limit))} and was not read.`);
    }
  });

  return {
    ...sync,
    onDidOpenTextDocument: (handler) => {
      open = handler;
      return sync.onDidOpenTextDocument((params) => {
        const { uri, text, languageId } = params.textDocument;
        if (text.length > MAX_DOCUMENT_LENGTH) return refuse(uri, languageId, `${megabytes(text.length)} of text`);
        refused.delete(uri);
        return handler(params);
      });
    },
    onDidChangeTextDocument: (handler) =>
      sync.onDidChangeTextDocument((params) => {
        const { uri, version } = params.textDocument;
        const languageId = refused.get(uri);
        if (languageId !== undefined) {
          // Refused: only a whole new text can bring it back (its edits are against a text not kept).
          const whole = params.contentChanges.length === 1 && !('range' in params.contentChanges[0]!) ? params.contentChanges[0]!.text : undefined;
          if (whole !== undefined && whole.length <= MAX_DOCUMENT_LENGTH) {
            refused.delete(uri);
            void open?.({ textDocument: { uri, languageId, version, text: whole } });
          }
          return;
        }
        const result = handler(params);
        const length = documents.get(uri)?.getText().length ?? 0;
        if (length > MAX_DOCUMENT_LENGTH) refuse(uri, documents.get(uri)!.languageId, `${megabytes(length)} of text after an edit`);
        return result;
      }),
    onDidCloseTextDocument: (handler) => {
      close = handler;
      return sync.onDidCloseTextDocument((params) => {
        refused.delete(params.textDocument.uri);
        return handler(params);
      });
    },
  };
}
