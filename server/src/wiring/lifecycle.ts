/**
 * The LSP lifecycle, enforced on every message before vscode-languageserver sees it (the library leaves
 * it to each handler, so a request sent before `initialize` used to wait for a store that never opened):
 *
 * - before `initialize`, a request answers ServerNotInitialized (-32002) and a notification is dropped;
 * - `initialize` is taken once; its `processId` goes to the server's own parent watchdog and is hidden from
 *   the library, whose watchdog takes EPERM for a dead parent;
 * - after `shutdown`, a request answers InvalidRequest (-32600) and a notification is dropped;
 * - `exit` ends the process at any time: code 0 after `shutdown`, 1 without.
 */
import {
  ErrorCodes,
  Message,
  type DataCallback,
  type Disposable,
  type MessageReader,
  type MessageWriter,
  type RequestMessage,
} from 'vscode-languageserver/node';

export type LifecycleState = 'starting' | 'running' | 'shut down';

export interface LifecycleHooks {
  /** `initialize` arrived with this `processId` (whatever it is; the library sees null). */
  onInitialize(processId: unknown): void;
  /** `exit` arrived: end the process with this code. */
  onExit(code: number): void;
  /** A message arrived (any, before it is routed). */
  onMessage?(): void;
  log(message: string): void;
}

/** A MessageReader that lets through only what the lifecycle allows, answering the rest itself. */
export class LifecycleGate implements MessageReader {
  private current: LifecycleState = 'starting';
  private dropped = 0;

  constructor(
    private readonly inner: MessageReader,
    private readonly writer: MessageWriter,
    private readonly hooks: LifecycleHooks,
  ) {}

  get state(): LifecycleState {
    return this.current;
  }

  get onError() {
    return this.inner.onError;
  }

  get onClose() {
    return this.inner.onClose;
  }

  get onPartialMessage() {
    return this.inner.onPartialMessage;
  }

  listen(callback: DataCallback): Disposable {
    return this.inner.listen((message) => {
      this.hooks.onMessage?.();
      this.route(message, callback);
    });
  }

  dispose(): void {
    this.inner.dispose();
  }

  private route(message: Message, forward: DataCallback): void {
    if (Message.isRequest(message)) {
      if (message.method === 'initialize' && this.current === 'starting') {
        this.current = 'running';
        const params = message.params as { processId?: unknown } | null | undefined;
        if (typeof params === 'object' && params !== null && !Array.isArray(params)) {
          this.hooks.onInitialize(params.processId);
          params.processId = null;
        }
        forward(message);
      } else if (this.current === 'starting') {
        this.refuse(message, ErrorCodes.ServerNotInitialized, `the server is not initialized: ${message.method} before initialize`);
      } else if (this.current === 'shut down') {
        this.refuse(message, ErrorCodes.InvalidRequest, `the server is shut down: ${message.method} after shutdown`);
      } else if (message.method === 'initialize') {
        this.refuse(message, ErrorCodes.InvalidRequest, 'initialize was already received');
      } else {
        if (message.method === 'shutdown') this.current = 'shut down';
        forward(message);
      }
      return;
    }
    if (Message.isNotification(message)) {
      if (message.method === 'exit') {
        this.hooks.onExit(this.current === 'shut down' ? 0 : 1);
      } else if (this.current === 'running') {
        forward(message);
      } else if (this.dropped++ === 0) {
        this.hooks.log(`dropped ${message.method} ${this.current === 'starting' ? 'before initialize' : 'after shutdown'} (further drops are not logged)`);
      }
      return;
    }
    forward(message);
  }

  private refuse(request: RequestMessage, code: number, text: string): void {
    this.writer.write({ jsonrpc: '2.0', id: request.id, error: { code, message: text } } as Message).catch(() => undefined);
  }
}
