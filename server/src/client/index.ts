/**
 * `dsh-session-ls/client`: a small typed client for people who script the server or test against it.
 * It starts the server over stdio (the installed `dsh-session-ls` bin, or a path), initializes it with
 * settings, and offers the server's main answers as methods: `candidates`, `prepare`, `completeAt`.
 * Errors come back as `SessionReferenceError` with one of the seven codes (the JSON-RPC mapping of
 * `shared/`, read back from `data.code`), anything else as `DshSessionRequestError`.
 *
 * The public types are this module's and the contract's (`@dsh-session-ls/shared`), never the protocol
 * library's, so the package's declarations need nothing else installed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CancellationTokenSource,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import {
  JsonRpcErrorCodes,
  SESSION_STATUS_NOTIFICATION,
  SETTINGS_SECTION,
  SessionCommands,
  SessionReferenceError,
  sessionReferenceErrorFromJsonRpc,
  type ParsedSessionReferenceText,
  type PreparedReferencedMessage,
  type SessionReferenceInput,
  type SessionReferenceMentionCandidate,
  type SessionReferenceTarget,
  type SessionStoreStatus,
  type ContentBlock,
} from '@dsh-session-ls/shared';

export {
  SESSION_REFERENCE_ERROR_CODES,
  SESSION_REFERENCE_JSON_RPC_CODES,
  SessionCommands,
  SessionReferenceError,
  isSessionReferenceError,
  formatSessionReferenceMention,
  type ContentBlock,
  type ParsedSessionReferenceText,
  type PreparedReferencedMessage,
  type SessionReferenceErrorCode,
  type SessionReferenceInput,
  type SessionReferenceMentionCandidate,
  type SessionReferenceTarget,
  type SessionStoreStatus,
} from '@dsh-session-ls/shared';

/** The server's settings (`initializationOptions` and the `dshSessions` section); unset ones take the server's defaults. */
export interface DshSessionSettings {
  /** The dsh sessions root; default `$DSH_HOME/sessions`, else `~/.dsh/sessions`. */
  sessionsRoot?: string;
  /** The session the message is for (never offered, never referenced). */
  targetSessionId?: string;
  maxReferences?: number;
  candidateLimit?: number;
  maxReferenceBytes?: number;
}

/** How to start the server. */
export interface DshSessionClientOptions {
  /**
   * The server: a command found on PATH (default `dsh-session-ls`, the installed bin) or a path to it;
   * a path ending in `.js`, `.cjs` or `.mjs` is run with this Node (`process.execPath`).
   */
  server?: string;
  /** More command-line arguments after `--stdio`. */
  args?: string[];
  /** Sent as `initializationOptions` and answered for `workspace/configuration`. */
  settings?: DshSessionSettings;
  /** A workspace folder (a directory path): sessions started there rank first, documents open there. */
  workspaceFolder?: string;
  /** The server's working directory (default: this process's). */
  cwd?: string;
  /** The server's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** A JSON-RPC error that is not one of the seven session-reference errors (e.g. MethodNotFound). */
export class DshSessionRequestError extends Error {
  override readonly name = 'DshSessionRequestError' as const;
  constructor(
    message: string,
    /** The JSON-RPC error code. */
    readonly code: number,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A zero-based position in a document, `character` in UTF-16 code units (LSP's default). */
export interface TextPosition {
  line: number;
  character: number;
}

/** The parts of an LSP completion item this server fills in. */
export interface SessionCompletionItem {
  label: string;
  kind?: number;
  detail?: string;
  labelDetails?: { detail?: string; description?: string };
  documentation?: string | { kind: string; value: string };
  filterText?: string;
  sortText?: string;
  insertText?: string;
  textEdit?: { range: { start: TextPosition; end: TextPosition }; newText: string };
  /** `{ kind: 'dsh-session', sessionId }` for a session, another `kind` for a workspace file. */
  data?: { kind?: string; sessionId?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** What `completeAt` answers: the completion list (sessions, and workspace files as `@path`). */
export interface SessionCompletionList {
  isIncomplete: boolean;
  items: SessionCompletionItem[];
}

/** Options of one request. */
export interface RequestOptions {
  /** Aborting sends `$/cancelRequest`; the request then rejects with SESSION_REFERENCE_CANCELLED. */
  signal?: AbortSignal;
}

/** Options of `candidates`. */
export interface CandidatesOptions extends RequestOptions {
  /** At most this many (default: the `candidateLimit` setting, 50). */
  limit?: number;
  /** The session the message is for: its own cwd ranks first, and it is never offered. */
  target?: SessionReferenceTarget;
}

/** Options of `prepare`. */
export interface PrepareOptions extends RequestOptions {
  target?: SessionReferenceTarget;
  /** Limits for this call only. */
  config?: Pick<DshSessionSettings, 'maxReferences' | 'maxReferenceBytes' | 'candidateLimit'>;
}

/** Options of `completeAt`. */
export interface CompleteAtOptions extends RequestOptions {
  /** The document's URI (default: a new `file:` URI in the workspace folder, else the server's cwd). */
  uri?: string;
  languageId?: string;
}

const CLIENT_CAPABILITIES = {
  workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: false }, workspaceFolders: true },
  textDocument: {
    synchronization: { dynamicRegistration: false },
    completion: { contextSupport: true, completionItem: { labelDetailsSupport: true, snippetSupport: false } },
  },
};

/** The position of a UTF-16 offset in a text, lines broken by \n, \r\n or \r (as LSP breaks them). */
export function positionAt(text: string, offset: number = text.length): TextPosition {
  const end = Math.max(0, Math.min(offset, text.length));
  let line = 0;
  let lineStart = 0;
  for (let index = 0; index < end; index++) {
    const char = text.charCodeAt(index);
    if (char === 10 || char === 13) {
      if (char === 13 && text.charCodeAt(index + 1) === 10) {
        // An offset between \r and \n is the end of the line.
        if (index + 1 === end) return { line, character: index - lineStart };
        index++;
      }
      line++;
      lineStart = index + 1;
    }
  }
  return { line, character: end - lineStart };
}

/** The UTF-16 offset of a position in a text (the inverse of `positionAt`). */
function offsetAt(text: string, position: TextPosition): number {
  let line = 0;
  let index = 0;
  while (line < position.line && index < text.length) {
    const char = text.charCodeAt(index++);
    if (char === 13 && text.charCodeAt(index) === 10) index++;
    if (char === 10 || char === 13) line++;
  }
  return Math.min(index + position.character, text.length);
}

/** A started, initialized server. */
export class DshSessionClient {
  private stderrText = '';
  private statusValue: SessionStoreStatus | undefined;
  private readonly statusWaiters = new Set<() => void>();
  /** The script's notification listeners by method (the connection takes one handler a method: ours). */
  private readonly listeners = new Map<string, Set<(params: unknown) => void>>();
  private documents = 0;
  private closed = false;

  private constructor(
    private readonly connection: MessageConnection,
    private readonly child: ChildProcess,
    private readonly exit: Promise<number | null>,
    private readonly options: DshSessionClientOptions,
  ) {}

  /** Start the server and initialize it; resolves once `initialized` is sent. */
  static async start(options: DshSessionClientOptions = {}): Promise<DshSessionClient> {
    const server = options.server ?? 'dsh-session-ls';
    const args = ['--stdio', ...(options.args ?? [])];
    const runWithNode = /\.[cm]?js$/.test(server);
    const child = spawn(runWithNode ? process.execPath : server, runWithNode ? [server, ...args] : args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: !runWithNode && process.platform === 'win32',
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) => reject(new Error(`cannot start ${server}: ${error.message}`, { cause: error })));
    });
    const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    child.stdin!.on('error', () => undefined);
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const client = new DshSessionClient(connection, child, exit, options);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      client.stderrText = (client.stderrText + chunk).slice(-64_000);
    });
    client.listen();
    try {
      await spawned;
      await client.initialize();
    } catch (error) {
      client.dispose();
      throw error;
    }
    return client;
  }

  /** What the server wrote to stderr (its log; the last 64 kB). */
  get stderr(): string {
    return this.stderrText;
  }

  /** The last `dshSession/status` the server sent, if any. */
  get status(): SessionStoreStatus | undefined {
    return this.statusValue;
  }

  /**
   * Resolves with the store's status once its first index is built (a `dshSession/status` with
   * `indexing: false`; a root that does not exist counts as indexed, and empty). Commands wait for the
   * first index on their own; this is for scripts that want to know when it is there.
   */
  async waitUntilIndexed(timeoutMs = 60_000): Promise<SessionStoreStatus> {
    const ready = () => (this.statusValue !== undefined && this.statusValue.root !== null && !this.statusValue.indexing ? this.statusValue : undefined);
    const now = ready();
    if (now !== undefined) return now;
    return new Promise<SessionStoreStatus>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.statusWaiters.delete(check);
        reject(new Error(`dsh-session-ls: the store was not indexed within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        const status = ready();
        if (status !== undefined || this.closed) {
          clearTimeout(timer);
          this.statusWaiters.delete(check);
          if (status !== undefined) resolve(status);
          else reject(this.exitedError());
        }
      };
      this.statusWaiters.add(check);
    });
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
    const uri = await this.openDocument(text, options);
    const context = offset > 0 && text[offset - 1] === '@' ? { triggerKind: 2, triggerCharacter: '@' } : { triggerKind: 1 };
    try {
      const answer = await this.request<SessionCompletionList | SessionCompletionItem[] | null>(
        'textDocument/completion',
        { textDocument: { uri }, position: at, context },
        options,
      );
      if (answer === null) return { isIncomplete: false, items: [] };
      return Array.isArray(answer) ? { isIncomplete: false, items: answer } : answer;
    } finally {
      if (!this.closed) await this.closeDocument(uri).catch(() => undefined);
    }
  }

  /**
   * `textDocument/didOpen`: a document the server then diagnoses and that `prepare` can name as
   * `{ textDocument: { uri } }`; resolves with its URI (default: a new `file:` URI, as in `completeAt`).
   */
  async openDocument(text: string, options: { uri?: string; languageId?: string } = {}): Promise<string> {
    const uri = options.uri ?? this.newDocumentUri();
    await this.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: options.languageId ?? 'markdown', version: 1, text } });
    return uri;
  }

  /** `textDocument/didClose`. */
  async closeDocument(uri: string): Promise<void> {
    await this.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  /** Any `workspace/executeCommand`, with one argument. */
  executeCommand<T = unknown>(command: string, argument: unknown, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('workspace/executeCommand', { command, arguments: [argument] }, options);
  }

  /** New settings (`workspace/didChangeConfiguration`); later pulls of the section answer them too. */
  async changeSettings(settings: DshSessionSettings): Promise<void> {
    this.options.settings = settings;
    await this.connection.sendNotification('workspace/didChangeConfiguration', { settings: { [SETTINGS_SECTION]: settings } });
  }

  /** Any request; its error is mapped as the commands' are. */
  async request<T = unknown>(method: string, params: unknown, options: RequestOptions = {}): Promise<T> {
    if (this.closed) throw this.exitedError();
    const source = new CancellationTokenSource();
    const abort = () => source.cancel();
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      return await this.connection.sendRequest<T>(method, params, source.token);
    } catch (error) {
      throw this.clientError(error);
    } finally {
      options.signal?.removeEventListener('abort', abort);
      source.dispose();
    }
  }

  /**
   * Listen to a notification from the server; returns a function that stops listening. Any number of
   * listeners, of any method, `dshSession/status` included (which `status` keeps following).
   */
  onNotification(method: string, handler: (params: unknown) => void): () => void {
    let listeners = this.listeners.get(method);
    if (listeners === undefined) this.listeners.set(method, (listeners = new Set()));
    const listener = (params: unknown) => handler(params);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** `shutdown`, then `exit`, then waits for the process to end (kills it after `timeoutMs`); resolves with its exit code. */
  async shutdown(timeoutMs = 10_000): Promise<number | null> {
    if (!this.closed) {
      try {
        await this.connection.sendRequest('shutdown');
        await this.connection.sendNotification('exit');
      } catch {
        // The server is already gone: wait for the process below.
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        resolve();
      }, timeoutMs);
    });
    const code = await Promise.race([this.exit, killed.then(() => this.exit)]);
    clearTimeout(timer);
    this.connection.dispose();
    return code;
  }

  /** Stop the server at once, whatever state it is in. */
  dispose(): void {
    this.closed = true;
    this.connection.dispose();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }

  private listen(): void {
    this.connection.onRequest((method, params) => {
      if (method === 'workspace/configuration') {
        const items = (params as { items?: Array<{ section?: string }> } | undefined)?.items ?? [];
        return items.map((item) => (item.section === SETTINGS_SECTION ? (this.options.settings ?? null) : null));
      }
      return null;
    });
    this.connection.onNotification((method: string, params: unknown) => {
      if (method === SESSION_STATUS_NOTIFICATION) {
        this.statusValue = params as SessionStoreStatus;
        for (const check of [...this.statusWaiters]) check();
      }
      for (const listener of [...(this.listeners.get(method) ?? [])]) listener(params);
    });
    this.connection.onClose(() => this.markClosed());
    this.exit.then(() => this.markClosed(), () => undefined);
    this.connection.listen();
  }

  private markClosed(): void {
    this.closed = true;
    for (const check of [...this.statusWaiters]) check();
  }

  private async initialize(): Promise<void> {
    const folder = this.options.workspaceFolder === undefined ? undefined : path.resolve(this.options.workspaceFolder);
    const folderUri = folder === undefined ? null : pathToFileURL(folder).href;
    await this.request('initialize', {
      processId: process.pid,
      clientInfo: { name: 'dsh-session-ls/client' },
      rootUri: folderUri,
      workspaceFolders: folder === undefined ? null : [{ uri: folderUri, name: path.basename(folder) || folder }],
      capabilities: CLIENT_CAPABILITIES,
      initializationOptions: this.options.settings ?? {},
    });
    await this.connection.sendNotification('initialized', {});
  }

  private newDocumentUri(): string {
    const dir = this.options.workspaceFolder ?? this.options.cwd ?? process.cwd();
    return pathToFileURL(path.join(path.resolve(dir), `dsh-session-ls-client-${process.pid}-${++this.documents}.md`)).href;
  }

  private exitedError(): Error {
    const tail = this.stderrText.trim().split('\n').slice(-5).join('\n');
    return new Error(`dsh-session-ls is not running${this.child.exitCode === null ? '' : ` (exit code ${this.child.exitCode})`}${tail ? `: ${tail}` : ''}`);
  }

  /** A JSON-RPC error as one of the seven codes when it carries one (RequestCancelled is CANCELLED), else DshSessionRequestError. */
  private clientError(error: unknown): Error {
    if (!(error instanceof ResponseError)) return this.closed ? this.exitedError() : error instanceof Error ? error : new Error(String(error));
    const mapped = sessionReferenceErrorFromJsonRpc(error);
    if (mapped !== undefined) return mapped;
    if (error.code === JsonRpcErrorCodes.RequestCancelled) return new SessionReferenceError('SESSION_REFERENCE_CANCELLED', error.message);
    return new DshSessionRequestError(error.message, error.code, error.data);
  }
}
