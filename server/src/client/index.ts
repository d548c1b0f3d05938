/**
 * `dsh-session-ls/client`: a small typed client for people who script the server or test against it.
 * It starts the server over stdio (by default its own package's bin, run with this Node; or a command or
 * path given), initializes it with settings, and offers the server's answers as methods: the commands
 * (`candidates`, `prepare`, `parse`, `transcript`) and the editor features on a text (`completeAt`,
 * `diagnostics`, `hover`, `codeActions`). Errors come back as `SessionReferenceError` with one of the
 * seven codes (the JSON-RPC mapping of `shared/`, read back from `data.code`), anything else as
 * `DshSessionRequestError`; a server that cannot be started as `DshSessionStartError`.
 *
 * The public types are this module's and the contract's (`@dsh-session-ls/shared`), never the protocol
 * library's, so the package's declarations need nothing else installed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CancellationTokenSource,
  ErrorCodes,
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
  type AgentName,
  type ForeignAgent,
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

/**
 * The server's settings (`initializationOptions` and the `dshSessions` section), every key the server
 * reads; unset ones take the server's defaults.
 */
export interface DshSessionSettings {
  /** The dsh sessions root; default `$DSH_HOME/sessions`, else `~/.dsh/sessions`. */
  sessionsRoot?: string;
  /** The session the message is for (never offered, never referenced). */
  targetSessionId?: string;
  /** At most this many sessions in one message, 1 to 3 (default 3). */
  maxReferences?: number;
  /** At most this many candidates (default 50). */
  candidateLimit?: number;
  /** The byte budget of one referenced session (default 65536). */
  maxReferenceBytes?: number;
  /** Whose sessions are offered and read (default `['dsh']`): add `'claude-code'` and `'codex'` for theirs. */
  agents?: readonly AgentName[];
  /** Claude Code's home (default `$CLAUDE_CONFIG_DIR`, else `~/.claude`); read when `agents` has `'claude-code'`. */
  claudeCodeHome?: string;
  /** Codex's home (default `$CODEX_HOME`, else `~/.codex`); read when `agents` has `'codex'`. */
  codexHome?: string;
  /** Where `@` completion lists workspace files: `after` the sessions (default), `before` them, or `off`. */
  fileMentions?: 'after' | 'before' | 'off';
}

/** How to start the server. */
export interface DshSessionClientOptions {
  /**
   * The server. Default: this package's own bin (`dsh-session-ls/bin/dsh-session-ls.js`), run with this
   * Node (`process.execPath`), whatever is on PATH. Else a command found on PATH (e.g. `dsh-session-ls`)
   * or a path to one; a path ending in `.js`, `.cjs` or `.mjs` is run with this Node.
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

/** The server could not be started or did not answer `initialize`: why, and the command that was run. */
export class DshSessionStartError extends Error {
  override readonly name = 'DshSessionStartError' as const;
  /** The command run, its arguments after it (also in the message). */
  declare readonly command: readonly string[];
  constructor(message: string, command: readonly string[]) {
    super(message);
    // Not enumerable: Node prints an uncaught error's own enumerable properties after its stack.
    Object.defineProperty(this, 'command', { value: command, enumerable: false });
  }
}

/** A zero-based position in a document, `character` in UTF-16 code units (LSP's default). */
export interface TextPosition {
  line: number;
  character: number;
}

/** A range of a document, its end exclusive. */
export interface TextRange {
  start: TextPosition;
  end: TextPosition;
}

/** An edit of a document. */
export interface SessionTextEdit {
  range: TextRange;
  newText: string;
}

/** A diagnostic the server publishes (`source` `dsh-session`, `code` the `SESSION_REFERENCE_*` code dsh would raise). */
export interface SessionDiagnostic {
  range: TextRange;
  /** 1 Error, 2 Warning, 3 Information, 4 Hint. */
  severity?: 1 | 2 | 3 | 4;
  code?: string | number;
  source?: string;
  message: string;
  /** What the code actions need to fix it. */
  data?: unknown;
  [key: string]: unknown;
}

/** What `hover` answers over a mention. */
export interface SessionHover {
  contents: { kind: 'markdown' | 'plaintext'; value: string };
  /** The mention's range. */
  range?: TextRange;
}

/** A command, as code actions and completion items carry one. */
export interface SessionCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}

/** A code action the server offers (update a stale label, label a bare URI, remove a broken mention, preview). */
export interface SessionCodeAction {
  title: string;
  /** e.g. `quickfix` or `refactor.rewrite`. */
  kind?: string;
  /** The diagnostics (of those given to `codeActions`) it fixes. */
  diagnostics?: SessionDiagnostic[];
  isPreferred?: boolean;
  /** The edit to apply, by document URI. */
  edit?: { changes?: Record<string, SessionTextEdit[]> };
  command?: SessionCommand;
  [key: string]: unknown;
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
  textEdit?: SessionTextEdit;
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

/** Options of `completeAt`, `diagnostics` and `hover`: the document the text is opened as. */
export interface DocumentRequestOptions extends RequestOptions {
  /** The document's URI (default: a new `file:` URI in the workspace folder, else the server's cwd). */
  uri?: string;
  /** Default `markdown`. */
  languageId?: string;
}

/** Options of `completeAt` (the name it had before the other document requests came). */
export type CompleteAtOptions = DocumentRequestOptions;

/** Options of `codeActions`. */
export interface CodeActionsOptions extends DocumentRequestOptions {
  /** The diagnostics the editor shows in the range (e.g. from `diagnostics`), so the actions can name those they fix. */
  diagnostics?: SessionDiagnostic[];
  /** Only actions of these kinds (and their sub-kinds), e.g. `['quickfix']`. */
  only?: string[];
}

/** Options of `transcript`. */
export interface TranscriptOptions extends RequestOptions {
  /** Another agent's session (when that agent is in the `agents` setting); absent for a dsh session. */
  agent?: ForeignAgent;
}

/**
 * `Symbol.asyncDispose`, or where this Node lacks it the registered symbol that stands for it (the one
 * esbuild's lowered `await using` looks up then).
 */
const ASYNC_DISPOSE: typeof Symbol.asyncDispose = (Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')) as typeof Symbol.asyncDispose;

/** How long a start that failed waits for the server process to end on its own, to report how it ended. */
const STOPPING_SERVER_WAIT_MS = 2000;

/** The name of this package, whose bin the client starts by default. */
const PACKAGE_NAME = 'dsh-session-ls';

/**
 * The bin of the package this module belongs to: the nearest package.json above this file (the
 * published package's root above dist/client.js; server/ in the repository), when it is this package's.
 */
function packageServerBin(): string | undefined {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const { name, bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; bin?: unknown };
        const file = typeof bin === 'string' ? bin : (bin as Record<string, unknown> | undefined)?.[PACKAGE_NAME];
        return name === PACKAGE_NAME && typeof file === 'string' ? path.join(dir, file) : undefined;
      } catch {
        return undefined;
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** True for the codes the JSON-RPC connection raises itself (a failed write, a pending answer rejected), never a server's. */
function isConnectionErrorCode(code: number): boolean {
  return code >= ErrorCodes.jsonrpcReservedErrorRangeStart && code <= ErrorCodes.jsonrpcReservedErrorRangeEnd;
}

/** A command line as one would type it (arguments with spaces or quotes quoted). */
function commandLine(command: readonly string[]): string {
  return command.map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
}

/** The line of a server's stderr that says why it stopped: the last `CODE: message` or `…Error: message` line, else the last line. */
function stderrReason(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^Node\.js v\d/.test(line));
  const reason = [...lines].reverse().find((line) => /^(?:[A-Z][A-Z_]*|\w*Error): /.test(line)) ?? lines.at(-1);
  return reason === undefined ? undefined : reason.length > 300 ? `${reason.slice(0, 299)}…` : reason;
}

const CLIENT_CAPABILITIES = {
  workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: false }, workspaceFolders: true },
  textDocument: {
    synchronization: { dynamicRegistration: false },
    completion: { contextSupport: true, completionItem: { labelDetailsSupport: true, snippetSupport: false } },
    hover: { contentFormat: ['markdown', 'plaintext'] },
    codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'refactor', 'refactor.rewrite'] } }, isPreferredSupport: true },
    publishDiagnostics: { versionSupport: true },
  },
};

const PUBLISH_DIAGNOSTICS = 'textDocument/publishDiagnostics';

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
  /** Called once when the server stops (or the client is disposed). */
  private readonly closeWaiters = new Set<() => void>();
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

  /**
   * Start the server and initialize it; resolves once `initialized` is sent. A server that cannot be
   * started, or stops before it answers `initialize`, rejects with a `DshSessionStartError` naming the
   * cause and the command run.
   */
  static async start(options: DshSessionClientOptions = {}): Promise<DshSessionClient> {
    const args = ['--stdio', ...(options.args ?? [])];
    const server = options.server ?? packageServerBin();
    if (server === undefined) {
      throw new DshSessionStartError(
        `cannot start ${PACKAGE_NAME}: no ${PACKAGE_NAME} package with a bin was found above ${__dirname}; pass the \`server\` option`,
        [],
      );
    }
    const runWithNode = /\.[cm]?js$/.test(server);
    const command = runWithNode ? [process.execPath, server, ...args] : [server, ...args];
    const child = spawn(command[0]!, command.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: !runWithNode && process.platform === 'win32',
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
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
    let started = false;
    try {
      await spawned;
      started = true;
      await client.initialize();
    } catch (error) {
      // Unless the server answered with an error, it is going away (a write to it failed, its output
      // closed): its exit code and last words tell why better than the pipe does.
      if (started && !DshSessionClient.answeredByServer(error)) {
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, STOPPING_SERVER_WAIT_MS).unref())]);
      }
      client.dispose();
      const problem = started ? client.initializeProblem(error) : DshSessionClient.spawnProblem(error, options.server !== undefined);
      throw new DshSessionStartError(`cannot start ${PACKAGE_NAME} (\`${commandLine(command)}\`): ${problem}`, command);
    }
    return client;
  }

  /** True for an error the server answered with (not one the connection raised: a failed write, a closed pipe). */
  private static answeredByServer(error: unknown): boolean {
    return error instanceof SessionReferenceError || (error instanceof DshSessionRequestError && !isConnectionErrorCode(error.code));
  }

  /** Why the process could not be spawned (e.g. `spawn dsh-session-ls ENOENT`), with a hint for a command not found. */
  private static spawnProblem(error: unknown, serverGiven: boolean): string {
    const message = error instanceof Error ? error.message : String(error);
    const notFound = (error as { code?: unknown } | undefined)?.code === 'ENOENT';
    return notFound && serverGiven ? `${message} (no such command; without the \`server\` option the client starts its own package's server)` : message;
  }

  /** Why a started server did not answer `initialize`: it stopped (and what it said last), or it answered an error. */
  private initializeProblem(error: unknown): string {
    const { exitCode, signalCode } = this.child;
    if (exitCode !== null || signalCode !== null) {
      const reason = stderrReason(this.stderrText);
      const how = exitCode !== null ? `exited with code ${exitCode}` : `was killed by ${signalCode}`;
      return `the server ${how} before it answered initialize${reason === undefined ? '' : `: ${reason}`}`;
    }
    return `initialize failed: ${error instanceof Error ? error.message : String(error)}`;
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
    const now = this.indexedStatus();
    if (now !== undefined) return now;
    const indexed = this.waitForNotification(SESSION_STATUS_NOTIFICATION, () => this.indexedStatus());
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
    await this.untilIndexed(options.signal);
    const uri = options.uri ?? this.newDocumentUri();
    const published = this.waitForNotification(
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
    await this.untilIndexed(options.signal);
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
    await this.untilIndexed(options.signal);
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
    if (this.closed) throw this.exitedError();
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
    this.markClosed();
    this.connection.dispose();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
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
      if (!this.closed) await this.closeDocument(uri).catch(() => undefined);
    }
  }

  /**
   * The first notification `method` for which `pick` gives a value, listened to from now on; it rejects
   * when the server stops, or with SESSION_REFERENCE_CANCELLED when `signal` aborts. `stop` stops listening.
   */
  private waitForNotification<T>(method: string, pick: (params: unknown) => T | undefined, signal?: AbortSignal): { answer: Promise<T>; stop: () => void } {
    let stop: () => void = () => undefined;
    const answer = new Promise<T>((resolve, reject) => {
      const fail = (error: Error) => {
        stop();
        reject(error);
      };
      const closed = () => fail(this.exitedError());
      const aborted = () => fail(new SessionReferenceError('SESSION_REFERENCE_CANCELLED', `waiting for ${method} was cancelled`));
      const unlisten = this.onNotification(method, (params) => {
        const value = pick(params);
        if (value === undefined) return;
        stop();
        resolve(value);
      });
      this.closeWaiters.add(closed);
      signal?.addEventListener('abort', aborted, { once: true });
      stop = () => {
        unlisten();
        this.closeWaiters.delete(closed);
        signal?.removeEventListener('abort', aborted);
      };
      if (signal?.aborted) aborted();
      else if (this.closed) closed();
    });
    // Settled or not, a caller that stopped waiting early must not leave an unhandled rejection.
    answer.catch(() => undefined);
    return { answer, stop };
  }

  /** Resolves once the first index is built (as `waitUntilIndexed`, without a deadline, cancellable). */
  private async untilIndexed(signal?: AbortSignal): Promise<void> {
    if (this.indexedStatus() !== undefined) return;
    await this.waitForNotification(SESSION_STATUS_NOTIFICATION, () => this.indexedStatus(), signal).answer;
  }

  /** The last status when it says the first index is built. */
  private indexedStatus(): SessionStoreStatus | undefined {
    const status = this.statusValue;
    return status !== undefined && status.root !== null && !status.indexing ? status : undefined;
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
      }
      for (const listener of [...(this.listeners.get(method) ?? [])]) listener(params);
    });
    this.connection.onClose(() => this.markClosed());
    // A server that stopped answers nothing more: its pending requests reject (with `exitedError`).
    this.exit.then(
      () => {
        this.markClosed();
        this.connection.dispose();
      },
      () => undefined,
    );
    this.connection.listen();
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of [...this.closeWaiters]) waiter();
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
    // Once the server is gone, the connection's own errors (a pending answer rejected, a failed write) say less than that.
    if (!(error instanceof ResponseError) || (this.closed && isConnectionErrorCode(error.code))) {
      return this.closed ? this.exitedError() : error instanceof Error ? error : new Error(String(error));
    }
    const mapped = sessionReferenceErrorFromJsonRpc(error);
    if (mapped !== undefined) return mapped;
    if (error.code === JsonRpcErrorCodes.RequestCancelled) return new SessionReferenceError('SESSION_REFERENCE_CANCELLED', error.message);
    return new DshSessionRequestError(error.message, error.code, error.data);
  }
}
