/**
 * `dsh-session-ls/client`: a small typed client for people who script the server or test against it.
 * It starts the server over stdio (by default its own package's bin, run with this Node; or a command or
 * path given), initializes it with settings, and offers the server's answers as methods: the commands
 * (`candidates`, `prepare`, `parse`, `transcript`) and the editor features on a text (`completeAt`,
 * `diagnostics`, `hover`, `codeActions`). Errors come back as `SessionReferenceError` with one of the
 * seven codes (the JSON-RPC mapping of `shared/`, read back from `data.code`), anything else as
 * `DshSessionRequestError`; a server that cannot be started as `DshSessionStartError`.
 *
 * The public types are the client's own (types.ts, errors.ts) and the contract's (`@dsh-session-ls/shared`),
 * never the protocol library's, so the package's declarations need nothing else installed. This module is
 * the entry and the class; start.ts starts the server, connection.ts speaks JSON-RPC to it.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  SESSION_STATUS_NOTIFICATION,
  SETTINGS_SECTION,
  SessionCommands,
  type ContentBlock,
  type ParsedSessionReferenceText,
  type PreparedReferencedMessage,
  type SessionReferenceInput,
  type SessionReferenceMentionCandidate,
  type SessionStoreStatus,
} from '@dsh-session-ls/shared';
import type { ServerConnection } from './connection';
import { offsetAt, positionAt } from './positions';
import { startServer } from './start';
import type {
  CandidatesOptions,
  CodeActionsOptions,
  CompleteAtOptions,
  DocumentRequestOptions,
  DshSessionClientOptions,
  DshSessionSettings,
  PrepareOptions,
  RequestOptions,
  SessionCodeAction,
  SessionCompletionItem,
  SessionCompletionList,
  SessionDiagnostic,
  SessionHover,
  TextPosition,
  TextRange,
  TranscriptOptions,
} from './types';

export {
  SESSION_REFERENCE_ERROR_CODES,
  SESSION_REFERENCE_JSON_RPC_CODES,
  SessionCommands,
  SessionReferenceError,
  isSessionReferenceError,
  formatSessionReferenceMention,
  type AgentHomes,
  type AgentName,
  type ContentBlock,
  type ForeignAgent,
  type ParsedSessionReferenceText,
  type PreparedReferencedMessage,
  type SessionReferenceErrorCode,
  type SessionReferenceInput,
  type SessionReferenceMentionCandidate,
  type SessionReferenceTarget,
  type SessionStoreStatus,
} from '@dsh-session-ls/shared';
export { DshSessionRequestError, DshSessionStartError } from './errors';
export { positionAt } from './positions';
export type {
  CandidatesOptions,
  CodeActionsOptions,
  CompleteAtOptions,
  DocumentRequestOptions,
  DshSessionClientOptions,
  DshSessionSettings,
  PrepareOptions,
  RequestOptions,
  SessionCodeAction,
  SessionCommand,
  SessionCompletionItem,
  SessionCompletionList,
  SessionDiagnostic,
  SessionHover,
  SessionTextEdit,
  TextPosition,
  TextRange,
  TranscriptOptions,
} from './types';

/**
 * `Symbol.asyncDispose`, or where this Node lacks it the registered symbol that stands for it (the one
 * esbuild's lowered `await using` looks up then).
 */
const ASYNC_DISPOSE: typeof Symbol.asyncDispose = (Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')) as typeof Symbol.asyncDispose;

const PUBLISH_DIAGNOSTICS = 'textDocument/publishDiagnostics';

/** A started, initialized server. */
export class DshSessionClient {
  private documents = 0;

  private constructor(
    private readonly server: ServerConnection,
    private readonly options: DshSessionClientOptions,
  ) {}

  /**
   * Start the server and initialize it; resolves once `initialized` is sent. A server that cannot be
   * started, or stops before it answers `initialize`, rejects with a `DshSessionStartError` naming the
   * cause and the command run.
   */
  static async start(options: DshSessionClientOptions = {}): Promise<DshSessionClient> {
    return new DshSessionClient(await startServer(options), options);
  }

  /** What the server wrote to stderr (its log; the last 64 kB). */
  get stderr(): string {
    return this.server.stderrText;
  }

  /** The last `dshSession/status` the server sent, if any. */
  get status(): SessionStoreStatus | undefined {
    return this.server.status;
  }

  /**
   * Resolves with the store's status once its first index is built (a `dshSession/status` with
   * `indexing: false`; a root that does not exist counts as indexed, and empty). Commands wait for the
   * first index on their own; this is for scripts that want to know when it is there.
   */
  async waitUntilIndexed(timeoutMs = 60_000): Promise<SessionStoreStatus> {
    const now = this.server.indexedStatus();
    if (now !== undefined) return now;
    const indexed = this.server.waitForNotification(SESSION_STATUS_NOTIFICATION, () => this.server.indexedStatus());
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`dsh-session-ls: the store was not indexed within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([indexed.answer, late]);
    } finally {
      clearTimeout(timer);
      indexed.stop();
    }
  }

  /** `dshSession.candidates`: the sessions one may mention, best first, each with its mention. */
  candidates(query = '', options: CandidatesOptions = {}): Promise<SessionReferenceMentionCandidate[]> {
    const { signal, ...rest } = options;
    return this.executeCommand(SessionCommands.candidates, { query, ...rest }, { signal });
  }

  /**
   * `dshSession.prepare`: what dsh sends the model for a message. `text` is a message with mentions;
   * or give its content blocks and the references directly.
   */
  prepare(
    message: string | { content: ContentBlock[]; references: SessionReferenceInput[] },
    options: PrepareOptions = {},
  ): Promise<PreparedReferencedMessage> {
    const { signal, ...rest } = options;
    const argument = typeof message === 'string' ? { text: message, ...rest } : { ...message, ...rest };
    return this.executeCommand(SessionCommands.prepare, argument, { signal });
  }

  /** `dshSession.parse`: a message's readable text and its references, as dsh parses them. */
  parse(text: string, options: RequestOptions = {}): Promise<ParsedSessionReferenceText> {
    return this.executeCommand(SessionCommands.parse, { text }, options);
  }

  /**
   * Completion as an editor asks it: opens a document holding `text`, asks `textDocument/completion`
   * at `position` (a position or a UTF-16 offset; default the end of the text) — triggered by `@` when
   * the character before is one — and closes the document again.
   */
  async completeAt(text: string, position: TextPosition | number = text.length, options: CompleteAtOptions = {}): Promise<SessionCompletionList> {
    const at = typeof position === 'number' ? positionAt(text, position) : position;
    const offset = typeof position === 'number' ? position : offsetAt(text, position);
    const context = offset > 0 && text[offset - 1] === '@' ? { triggerKind: 2, triggerCharacter: '@' } : { triggerKind: 1 };
    const answer = await this.withDocument(text, options, (uri) =>
      this.request<SessionCompletionList | SessionCompletionItem[] | null>('textDocument/completion', { textDocument: { uri }, position: at, context }, options),
    );
    if (answer === null) return { isIncomplete: false, items: [] };
    return Array.isArray(answer) ? { isIncomplete: false, items: answer } : answer;
  }

  /**
   * The diagnostics of a text, as an editor shows them: waits for the first index (as commands do), opens
   * a document holding `text`, resolves with what the server publishes for that version of it, and
   * closes the document again. An empty array: dsh will accept the message as it is.
   */
  async diagnostics(text: string, options: DocumentRequestOptions = {}): Promise<SessionDiagnostic[]> {
    await this.server.untilIndexed(options.signal);
    const uri = options.uri ?? this.newDocumentUri();
    const published = this.server.waitForNotification(
      PUBLISH_DIAGNOSTICS,
      (params) => {
        const { uri: of, version, diagnostics } = params as { uri?: unknown; version?: unknown; diagnostics?: SessionDiagnostic[] };
        return of === uri && version === 1 ? (diagnostics ?? []) : undefined;
      },
      options.signal,
    );
    try {
      return await this.withDocument(text, { ...options, uri }, () => published.answer);
    } finally {
      published.stop();
    }
  }

  /**
   * `textDocument/hover` at `position` (a position or a UTF-16 offset) of a document holding `text`:
   * waits for the first index, opens the document, asks, closes it. Null where there is no mention.
   */
  async hover(text: string, position: TextPosition | number, options: DocumentRequestOptions = {}): Promise<SessionHover | null> {
    const at = typeof position === 'number' ? positionAt(text, position) : position;
    await this.server.untilIndexed(options.signal);
    return this.withDocument(text, options, (uri) => this.request<SessionHover | null>('textDocument/hover', { textDocument: { uri }, position: at }, options));
  }

  /**
   * `textDocument/codeAction` over `range` (a range, or a position or UTF-16 offset for an empty range at
   * the cursor) of a document holding `text`: waits for the first index, opens the document, asks, closes it.
   */
  async codeActions(text: string, range: TextRange | TextPosition | number, options: CodeActionsOptions = {}): Promise<SessionCodeAction[]> {
    const asPosition = (at: TextPosition | number) => (typeof at === 'number' ? positionAt(text, at) : at);
    const asked = typeof range === 'object' && 'start' in range ? range : { start: asPosition(range), end: asPosition(range) };
    const context = { diagnostics: options.diagnostics ?? [], ...(options.only === undefined ? {} : { only: options.only }), triggerKind: 1 };
    await this.server.untilIndexed(options.signal);
    // The client announces code action literals, so the server answers no bare commands.
    const answer = await this.withDocument(text, options, (uri) =>
      this.request<SessionCodeAction[] | null>('textDocument/codeAction', { textDocument: { uri }, range: asked, context }, options),
    );
    return answer ?? [];
  }

  /** `dshSession.transcript`: the session as the user saw it, as Markdown (`agent` for another agent's session). */
  transcript(sessionId: string, options: TranscriptOptions = {}): Promise<string> {
    const { signal, agent } = options;
    return this.executeCommand(SessionCommands.transcript, { sessionId, ...(agent === undefined ? {} : { agent }) }, { signal });
  }

  /**
   * `textDocument/didOpen`: a document the server then diagnoses and that `prepare` can name as
   * `{ textDocument: { uri } }`; resolves with its URI (default: a new `file:` URI, as in `completeAt`).
   */
  async openDocument(text: string, options: { uri?: string; languageId?: string } = {}): Promise<string> {
    if (this.server.closed) throw this.server.exitedError();
    const uri = options.uri ?? this.newDocumentUri();
    await this.server.notify('textDocument/didOpen', { textDocument: { uri, languageId: options.languageId ?? 'markdown', version: 1, text } });
    return uri;
  }

  /** `textDocument/didClose`. */
  async closeDocument(uri: string): Promise<void> {
    await this.server.notify('textDocument/didClose', { textDocument: { uri } });
  }

  /** Any `workspace/executeCommand`, with one argument. */
  executeCommand<T = unknown>(command: string, argument: unknown, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('workspace/executeCommand', { command, arguments: [argument] }, options);
  }

  /** New settings (`workspace/didChangeConfiguration`); later pulls of the section answer them too. */
  async changeSettings(settings: DshSessionSettings): Promise<void> {
    this.options.settings = settings;
    await this.server.notify('workspace/didChangeConfiguration', { settings: { [SETTINGS_SECTION]: settings } });
  }

  /** Any request; its error is mapped as the commands' are. */
  request<T = unknown>(method: string, params: unknown, options: RequestOptions = {}): Promise<T> {
    return this.server.request<T>(method, params, options);
  }

  /**
   * Listen to a notification from the server; returns a function that stops listening. Any number of
   * listeners, of any method, `dshSession/status` included (which `status` keeps following).
   */
  onNotification(method: string, handler: (params: unknown) => void): () => void {
    return this.server.onNotification(method, handler);
  }

  /** `shutdown`, then `exit`, then waits for the process to end (kills it after `timeoutMs`); resolves with its exit code. */
  shutdown(timeoutMs = 10_000): Promise<number | null> {
    return this.server.shutdown(timeoutMs);
  }

  /** Stop the server at once, whatever state it is in. */
  dispose(): void {
    this.server.dispose();
  }

  /**
   * For `await using client = await DshSessionClient.start()`: at the end of the scope the server is shut
   * down cleanly (`shutdown`), or stopped when that fails.
   */
  async [ASYNC_DISPOSE](): Promise<void> {
    try {
      await this.shutdown();
    } finally {
      this.dispose();
    }
  }

  /** Run `work` on a new document holding `text`, closing it again after. */
  private async withDocument<T>(text: string, options: { uri?: string; languageId?: string }, work: (uri: string) => Promise<T>): Promise<T> {
    const uri = await this.openDocument(text, options);
    try {
      return await work(uri);
    } finally {
      if (!this.server.closed) await this.closeDocument(uri).catch(() => undefined);
    }
  }

  private newDocumentUri(): string {
    const dir = this.options.workspaceFolder ?? this.options.cwd ?? process.cwd();
    return pathToFileURL(path.join(path.resolve(dir), `dsh-session-ls-client-${process.pid}-${++this.documents}.md`)).href;
  }
}
