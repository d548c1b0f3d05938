/**
 * A typed headless LSP client over JSON-RPC (vscode-jsonrpc) for end-to-end tests: it starts the BUILT
 * server (`node server/bin/dsh-session-ls.js --stdio`), or talks to an in-process server over streams,
 * and records what the server sends on its own (notifications, requests, progress, logs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import {
  AbstractMessageWriter,
  CancellationTokenSource,
  IPCMessageReader,
  IPCMessageWriter,
  ResponseError,
  StreamMessageReader,
  createClientPipeTransport,
  createClientSocketTransport,
  createMessageConnection,
  generateRandomPipeName,
  type Message,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';
import type {
  ClientCapabilities,
  CompletionItem,
  CompletionList,
  InitializeParams,
  InitializeResult,
  Position,
  TextDocumentContentChangeEvent,
} from 'vscode-languageserver-protocol';

/** The repository root (this file lives in test/support/). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The committed bin that loads the built server. */
export const SERVER_BIN = path.join(REPO_ROOT, 'server', 'bin', 'dsh-session-ls.js');

/** A message the server sent without being asked (a notification or a request to the client). */
export interface ServerMessage {
  method: string;
  params: unknown;
}

/** A JSON-RPC error as the client received it. */
export interface ReceivedError {
  code: number;
  message: string;
  data: unknown;
}

/** A client capable of everything the server can use: pulled settings, dynamic registration, progress, folders. */
export const FULL_CLIENT_CAPABILITIES: ClientCapabilities = {
  workspace: {
    configuration: true,
    didChangeConfiguration: { dynamicRegistration: true },
    workspaceFolders: true,
    executeCommand: { dynamicRegistration: false },
  },
  window: { workDoneProgress: true, showMessage: {} },
  textDocument: {
    synchronization: { dynamicRegistration: false },
    completion: { contextSupport: true, completionItem: { labelDetailsSupport: true, snippetSupport: false } },
  },
};

/** How the client talks to the server process (the transports of every vscode-languageserver server). */
export type Transport = 'stdio' | 'node-ipc' | 'pipe' | 'socket';

/** Options for starting the built server. */
export interface StartOptions {
  /** The server's script, run with this Node (default {@link SERVER_BIN}). */
  server?: string;
  /** Extra command-line arguments after `--stdio` (e.g. `--sessions-root DIR`). */
  args?: string[];
  /** The server's environment (merged over a copy of this process's). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** A `file:` URI for a path. */
export function fileUri(file: string): string {
  return pathToFileURL(file).href;
}

/** Poll `check` until it returns a value other than undefined, or fail after `timeoutMs` (a generous deadline, not a timing claim). */
export async function pollUntil<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The JSON-RPC error of a rejected request, or a failure if it did not reject with one. */
export async function responseErrorOf(promise: Promise<unknown>): Promise<ReceivedError> {
  try {
    const result = await promise;
    throw new Error(`expected a JSON-RPC error, got ${JSON.stringify(result)}`);
  } catch (error) {
    if (!(error instanceof ResponseError)) throw error;
    return { code: error.code, message: error.message, data: error.data };
  }
}

/**
 * Writes each JSON-RPC message as one framed buffer, in call order, and can put several messages in
 * ONE write, so the server reads them together (vscode-jsonrpc's own stream writer writes a header and
 * a body per message, each after the previous write completed).
 */
class FramedMessageWriter extends AbstractMessageWriter {
  private held: Buffer[] | undefined;

  constructor(private readonly output: Writable) {
    super();
    output.on('error', (error) => this.fireError(error));
    output.on('close', () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const frame = Buffer.concat([Buffer.from(`Content-Length: ${body.byteLength}\r\n\r\n`, 'ascii'), body]);
    if (this.held !== undefined) {
      this.held.push(frame);
      return Promise.resolve();
    }
    return this.send(frame);
  }

  /** Run `writeMessages`, which writes messages synchronously, and send all it wrote in one write; resolves with how many. */
  async inOneWrite(writeMessages: () => void): Promise<number> {
    const held: Buffer[] = [];
    this.held = held;
    try {
      writeMessages();
    } finally {
      this.held = undefined;
    }
    await this.send(Buffer.concat(held));
    return held.length;
  }

  end(): void {
    this.output.end();
  }

  private send(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.output.write(bytes, (error) => (error ? reject(error) : resolve()));
    });
  }
}

/** A headless LSP client. */
export class LspTestClient {
  /** Notifications and requests the server sent, in arrival order. */
  readonly fromServer: ServerMessage[] = [];
  /** Errors reading the server's output (anything on stdout that is not protocol shows up here). */
  readonly protocolErrors: string[] = [];
  /** The value answered for `workspace/configuration` of the `dshSessions` section (null = unset). */
  settings: unknown = null;
  private stderrText = '';
  private versions = new Map<string, number>();

  private constructor(
    readonly connection: MessageConnection,
    private readonly input: Writable,
    /** The message writer, when this client frames messages itself (stream transports). */
    private readonly writer?: FramedMessageWriter,
    private readonly process?: ChildProcess,
    /** Resolves with the exit code once the server process ended. */
    readonly exited: Promise<number | null> = new Promise(() => {}),
  ) {
    connection.onRequest((method, params) => {
      this.fromServer.push({ method, params });
      if (method === 'workspace/configuration') {
        const items = (params as { items?: Array<{ section?: string }> }).items ?? [];
        return items.map((item) => (item.section === 'dshSessions' ? this.settings : null));
      }
      return null;
    });
    connection.onNotification((method, params) => {
      this.fromServer.push({ method, params });
    });
    // vscode-jsonrpc routes `$/progress` itself; record it like any other notification.
    connection.onUnhandledProgress((params) => {
      this.fromServer.push({ method: '$/progress', params });
    });
    connection.onError(([error]) => {
      this.protocolErrors.push(error.message);
    });
    connection.listen();
  }

  /** Start the built server over stdio. */
  static start(options: StartOptions = {}): LspTestClient {
    const child = spawn(process.execPath, [options.server ?? SERVER_BIN, '--stdio', ...(options.args ?? [])], {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const writer = new FramedMessageWriter(child.stdin);
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), writer);
    const client = new LspTestClient(connection, child.stdin, writer, child, exited);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (client.stderrText += chunk));
    // A server that died must fail the test, not hang it.
    child.stdin.on('error', () => {});
    return client;
  }

  /**
   * Start the built server over another transport: `--node-ipc`, `--pipe=NAME` (the client listens on
   * a named pipe) or `--socket=PORT` (the client listens on a port); the server connects to it.
   */
  static async startOver(transport: Exclude<Transport, 'stdio'>, options: StartOptions = {}): Promise<LspTestClient> {
    const spawnServer = (transportArgs: string[], ipc: boolean): ChildProcess =>
      spawn(process.execPath, [options.server ?? SERVER_BIN, ...transportArgs, ...(options.args ?? [])], {
        cwd: options.cwd ?? REPO_ROOT,
        env: { ...process.env, ...options.env },
        stdio: ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : ['pipe', 'pipe', 'pipe'],
      });
    let child: ChildProcess;
    let reader: MessageReader;
    let writer: MessageWriter;
    if (transport === 'node-ipc') {
      child = spawnServer(['--node-ipc'], true);
      reader = new IPCMessageReader(child);
      writer = new IPCMessageWriter(child);
    } else if (transport === 'pipe') {
      const name = generateRandomPipeName();
      const pipe = await createClientPipeTransport(name);
      child = spawnServer([`--pipe=${name}`], false);
      [reader, writer] = await pipe.onConnected();
    } else {
      const socket = await createClientSocketTransport(0);
      child = spawnServer([`--socket=${socket.port()}`], false);
      [reader, writer] = await socket.onConnected();
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const client = new LspTestClient(createMessageConnection(reader, writer), child.stdin!, undefined, child, exited);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => (client.stderrText += chunk));
    child.stdin!.on('error', () => {});
    return client;
  }

  /** Talk to a server over a pair of streams (an in-process server). */
  static overStreams(fromServer: Readable, toServer: Writable): LspTestClient {
    const writer = new FramedMessageWriter(toServer);
    const connection = createMessageConnection(new StreamMessageReader(fromServer), writer);
    return new LspTestClient(connection, toServer, writer);
  }

  /** What the server wrote to stderr so far (its log). */
  get stderr(): string {
    return this.stderrText;
  }

  /** True while the server process runs (always true in-process). */
  get running(): boolean {
    return this.process === undefined || (this.process.exitCode === null && this.process.signalCode === null);
  }

  /** `initialize` then `initialized`; the default client has every capability and no workspace folder. */
  async initialize(params: Partial<InitializeParams> = {}): Promise<InitializeResult> {
    const result = await this.connection.sendRequest<InitializeResult>('initialize', {
      processId: null,
      rootUri: null,
      capabilities: FULL_CLIENT_CAPABILITIES,
      workspaceFolders: null,
      ...params,
    });
    await this.connection.sendNotification('initialized', {});
    return result;
  }

  /** `textDocument/didOpen`. */
  async openDocument(uri: string, text: string, languageId = 'markdown'): Promise<void> {
    this.versions.set(uri, 1);
    await this.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
  }

  /** `textDocument/didChange` (whole text by default, or the given changes). */
  async changeDocument(uri: string, change: string | TextDocumentContentChangeEvent[]): Promise<void> {
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    const contentChanges = typeof change === 'string' ? [{ text: change }] : change;
    await this.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges });
  }

  /** `textDocument/didClose`. */
  async closeDocument(uri: string): Promise<void> {
    this.versions.delete(uri);
    await this.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  /** `textDocument/completion` at a position, triggered by `@` as an editor does after typing it. */
  completion(uri: string, position: Position, triggerCharacter: string | undefined = '@'): Promise<CompletionList> {
    const context = triggerCharacter === undefined ? { triggerKind: 1 } : { triggerKind: 2, triggerCharacter };
    return this.connection.sendRequest<CompletionList>('textDocument/completion', { textDocument: { uri }, position, context });
  }

  /** `completionItem/resolve`. */
  resolve(item: CompletionItem): Promise<CompletionItem> {
    return this.connection.sendRequest<CompletionItem>('completionItem/resolve', item);
  }

  /** `workspace/executeCommand` with the given arguments as they are. */
  executeCommand<T = unknown>(command: string, ...args: unknown[]): Promise<T> {
    return this.connection.sendRequest<T>('workspace/executeCommand', { command, arguments: args });
  }

  /** `workspace/didChangeConfiguration` with the given `settings`. */
  async changeConfiguration(settings: unknown): Promise<void> {
    await this.connection.sendNotification('workspace/didChangeConfiguration', { settings });
  }

  /** Any request. */
  request<T = unknown>(method: string, params?: unknown): Promise<T> {
    return this.connection.sendRequest<T>(method, params);
  }

  /**
   * Send a request and its `$/cancelRequest` in ONE write (stream transports), so the server reads both
   * before it starts the work, whatever the timing; resolves with what the server answered (normally a
   * RequestCancelled error).
   */
  async requestCancelledAtOnce<T = unknown>(method: string, params: unknown): Promise<T> {
    if (this.writer === undefined) throw new Error('requestCancelledAtOnce needs a stream transport (stdio or in-process streams)');
    const source = new CancellationTokenSource();
    let answer!: Promise<T>;
    // vscode-jsonrpc hands the request, and on cancel() the cancellation, to the writer synchronously.
    const written = await this.writer.inOneWrite(() => {
      answer = this.connection.sendRequest<T>(method, params, source.token);
      source.cancel();
    });
    if (written !== 2) {
      answer.catch(() => undefined);
      throw new Error(`expected the request and its cancellation in one write, wrote ${written} messages`);
    }
    return answer;
  }

  /**
   * Send several requests in ONE write (stream transports), so the server reads them together, in order,
   * whatever the timing; returns each request's answer.
   */
  async requestsAtOnce<T = unknown>(requests: ReadonlyArray<{ method: string; params?: unknown }>): Promise<Array<Promise<T>>> {
    if (this.writer === undefined) throw new Error('requestsAtOnce needs a stream transport (stdio or in-process streams)');
    const answers: Array<Promise<T>> = [];
    const written = await this.writer.inOneWrite(() => {
      for (const { method, params } of requests) answers.push(this.connection.sendRequest<T>(method, params));
    });
    if (written !== requests.length) {
      for (const answer of answers) answer.catch(() => undefined);
      throw new Error(`expected ${requests.length} requests in one write, wrote ${written} messages`);
    }
    return answers;
  }

  /** Write raw bytes to the server (for malformed-message tests). */
  writeRaw(bytes: string | Buffer): void {
    this.input.write(bytes);
  }

  /** Write raw bytes to the server; resolves once they are handed to the system (so a long stream never piles up here). */
  writeRawDrained(bytes: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.input.write(bytes, (error) => (error ? reject(error) : resolve())));
  }

  /** Messages from the server with this method, so far. */
  messages(method: string): ServerMessage[] {
    return this.fromServer.filter((message) => message.method === method);
  }

  /** Wait (polling, generous deadline) for a message from the server that satisfies `match`. */
  waitForMessage(method: string, match: (params: any) => boolean = () => true, timeoutMs = 20_000): Promise<ServerMessage> {
    return pollUntil(() => this.fromServer.find((message) => message.method === method && match(message.params)), timeoutMs, method);
  }

  /** `shutdown` then `exit`; resolves with the process exit code (undefined in-process). */
  async shutdown(): Promise<number | null | undefined> {
    await this.connection.sendRequest('shutdown');
    await this.connection.sendNotification('exit');
    if (this.process === undefined) {
      this.connection.dispose();
      return undefined;
    }
    const code = await this.exited;
    this.connection.dispose();
    return code;
  }

  /** Stop the server whatever state it is in. */
  dispose(): void {
    this.connection.dispose();
    if (this.process !== undefined && this.running) this.process.kill();
  }
}
