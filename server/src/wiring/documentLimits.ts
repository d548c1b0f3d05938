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
  type DidChangeTextDocumentParams,
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

/** The refused documents of one connection, and how the user hears of them. */
class DocumentSizeGuard {
  /** Documents refused, with their language (to reopen one replaced whole by a small text); told once each. */
  private readonly refused = new Map<string, string>();
  // TextDocuments' own handlers (synchronous, though typed as possibly not).
  private close: ((params: DidCloseTextDocumentParams) => void | Promise<void>) | undefined;
  private open: ((params: DidOpenTextDocumentParams) => void | Promise<void>) | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly documents: TextDocuments<TextDocument>,
    private readonly log: (message: string) => void,
  ) {}

  private tell(message: string): void {
    this.log(message);
    try {
      this.connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Warning, message }).catch(() => undefined);
    } catch {
      // The connection is closing: nobody is left to tell.
    }
  }

  /** Refuse `uri` (dropping it if it was open), telling the user the first time. */
  private refuse(uri: string, languageId: string, size: string): void {
    if (this.documents.get(uri) !== undefined) void this.close?.({ textDocument: { uri } });
    if (this.refused.has(uri)) return;
    this.refused.set(uri, languageId);
    this.tell(
      `dsh-session-ls: ${uri} is too large (${size}; the limit is ${megabytes(MAX_DOCUMENT_LENGTH)}): ` +
        'no session completion, hover, links or diagnostics in it. A prompt is far smaller; split the file to use them.',
    );
  }

  /** Answer the framing's stand-in for a message too long to read: a request with an error, a document refused. */
  answerMessagesTooLarge(): void {
    this.connection.onRequest(MESSAGE_TOO_LARGE, (params: MessageTooLargeParams) => {
      const what = typeof params?.method === 'string' ? params.method : 'a request';
      throw new ResponseError(JsonRpcErrorCodes.RequestFailed, `${what} is ${params?.length} bytes, over the limit of ${params?.limit}: it was not read`, {
        code: MESSAGE_TOO_LARGE_CODE,
        length: params?.length,
        limit: params?.limit,
      });
    });
    this.connection.onNotification(MESSAGE_TOO_LARGE, (params: MessageTooLargeParams) => {
      const size = `${megabytes(Number(params?.length))} of protocol message`;
      if (typeof params?.uri === 'string' && (params.method === 'textDocument/didOpen' || params.method === 'textDocument/didChange')) {
        this.refuse(params.uri, this.documents.get(params.uri)?.languageId ?? 'markdown', size);
      } else {
        this.tell(`dsh-session-ls: a message of ${size} (${params?.method ?? 'unknown method'}) is over the limit of ${megabytes(Number(params?.limit))} and was not read.`);
      }
    });
  }

  /** A change to a refused document: only a whole new text under the limit brings it back (its edits are against a text not kept). */
  private changeRefused(params: DidChangeTextDocumentParams, languageId: string): void {
    const { uri, version } = params.textDocument;
    const [change, ...more] = params.contentChanges;
    const whole = change !== undefined && more.length === 0 && !('range' in change) ? change.text : undefined;
    if (whole !== undefined && whole.length <= MAX_DOCUMENT_LENGTH) {
      this.refused.delete(uri);
      void this.open?.({ textDocument: { uri, languageId, version, text: whole } });
    }
  }

  /** `sync` with the size limit applied. */
  limit(sync: TextDocumentConnection): TextDocumentConnection {
    return {
      ...sync,
      onDidOpenTextDocument: (handler) => {
        this.open = handler;
        return sync.onDidOpenTextDocument((params) => {
          const { uri, text, languageId } = params.textDocument;
          if (text.length > MAX_DOCUMENT_LENGTH) return this.refuse(uri, languageId, `${megabytes(text.length)} of text`);
          this.refused.delete(uri);
          return handler(params);
        });
      },
      onDidChangeTextDocument: (handler) =>
        sync.onDidChangeTextDocument((params) => {
          const { uri } = params.textDocument;
          const languageId = this.refused.get(uri);
          if (languageId !== undefined) return this.changeRefused(params, languageId);
          const result = handler(params);
          const length = this.documents.get(uri)?.getText().length ?? 0;
          if (length > MAX_DOCUMENT_LENGTH) this.refuse(uri, this.documents.get(uri)!.languageId, `${megabytes(length)} of text after an edit`);
          return result;
        }),
      onDidCloseTextDocument: (handler) => {
        this.close = handler;
        return sync.onDidCloseTextDocument((params) => {
          this.refused.delete(params.textDocument.uri);
          return handler(params);
        });
      },
    };
  }
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
  const guard = new DocumentSizeGuard(connection, documents, log);
  guard.answerMessagesTooLarge();
  return guard.limit(sync);
}
