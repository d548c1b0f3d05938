import type { ChildProcess } from 'node:child_process';
import { CancellationTokenSource, ErrorCodes, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import {
  JsonRpcErrorCodes,
  SESSION_STATUS_NOTIFICATION,
  SETTINGS_SECTION,
  SessionReferenceError,
  sessionReferenceErrorFromJsonRpc,
  type SessionStoreStatus,
} from '@dsh-session-ls/shared';
import { DshSessionRequestError } from './errors';
import type { DshSessionClientOptions, RequestOptions } from './types';

/**
 * The server process and the JSON-RPC connection to it: requests with their errors mapped to the
 * client's, the server's notifications (its last `dshSession/status` kept), answers to
 * `workspace/configuration` from the client's settings, and the end of the process.
 */
export class ServerConnection {
  /** What the server wrote to stderr (the last 64 kB). */
  stderrText = '';
  /** The last `dshSession/status` the server sent, if any. */
  status: SessionStoreStatus | undefined;
  /** True once the server stopped (or the client was disposed): nothing more is sent. */
  closed = false;
  /** Called once when the server stops (or the client is disposed). */
  private readonly closeWaiters = new Set<() => void>();
  /** The script's notification listeners by method (the connection takes one handler a method: ours). */
  private readonly listeners = new Map<string, Set<(params: unknown) => void>>();

  constructor(
    private readonly connection: MessageConnection,
    readonly child: ChildProcess,
    /** Settles with the exit code once the process has ended. */
    readonly exit: Promise<number | null>,
    /** The client's options: their `settings` (changed by `changeSettings`) answer `workspace/configuration`. */
    private readonly options: DshSessionClientOptions,
  ) {
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.stderrText = (this.stderrText + chunk).slice(-64_000);
    });
  }

  /** Any request; its error is mapped (`clientError`). */
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

  /** Any notification to the server. */
  async notify(method: string, params: unknown): Promise<void> {
    await this.connection.sendNotification(method, params);
  }

  /** Listen to a notification from the server; returns a function that stops listening. */
  onNotification(method: string, handler: (params: unknown) => void): () => void {
    let listeners = this.listeners.get(method);
    if (listeners === undefined) this.listeners.set(method, (listeners = new Set()));
    const listener = (params: unknown) => handler(params);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /**
   * The first notification `method` for which `pick` gives a value, listened to from now on; it rejects
   * when the server stops, or with SESSION_REFERENCE_CANCELLED when `signal` aborts. `stop` stops listening.
   */
  waitForNotification<T>(method: string, pick: (params: unknown) => T | undefined, signal?: AbortSignal): { answer: Promise<T>; stop: () => void } {
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
  async untilIndexed(signal?: AbortSignal): Promise<void> {
    if (this.indexedStatus() !== undefined) return;
    await this.waitForNotification(SESSION_STATUS_NOTIFICATION, () => this.indexedStatus(), signal).answer;
  }

  /** The last status when it says the first index is built. */
  indexedStatus(): SessionStoreStatus | undefined {
    const status = this.status;
    return status !== undefined && status.root !== null && !status.indexing ? status : undefined;
  }

  /** Answer the server's requests, follow its notifications and its end, and start reading. */
  listen(): void {
    this.connection.onRequest((method, params) => {
      if (method === 'workspace/configuration') {
        const items = (params as { items?: Array<{ section?: string }> } | undefined)?.items ?? [];
        return items.map((item) => (item.section === SETTINGS_SECTION ? (this.options.settings ?? null) : null));
      }
      return null;
    });
    this.connection.onNotification((method: string, params: unknown) => {
      if (method === SESSION_STATUS_NOTIFICATION) {
        this.status = params as SessionStoreStatus;
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

  /** `shutdown`, then `exit`, then waits for the process to end (kills it after `timeoutMs`); resolves with its exit code. */
  async shutdown(timeoutMs: number): Promise<number | null> {
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

  /** The error of anything asked of a server that stopped: its exit code and its last lines. */
  exitedError(): Error {
    const tail = this.stderrText.trim().split('\n').slice(-5).join('\n');
    return new Error(`dsh-session-ls is not running${this.child.exitCode === null ? '' : ` (exit code ${this.child.exitCode})`}${tail ? `: ${tail}` : ''}`);
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of [...this.closeWaiters]) waiter();
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

/** True for the codes the JSON-RPC connection raises itself (a failed write, a pending answer rejected), never a server's. */
export function isConnectionErrorCode(code: number): boolean {
  return code >= ErrorCodes.jsonrpcReservedErrorRangeStart && code <= ErrorCodes.jsonrpcReservedErrorRangeEnd;
}
