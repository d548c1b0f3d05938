// A stand-in for `vscode-languageclient/node`'s LanguageClient (the real one needs a running VS
// Code): it records how it was built and answers requests through a test-supplied handler.

export enum TransportKind {
  stdio = 0,
  ipc = 1,
  pipe = 2,
  socket = 3,
}

export enum State {
  Stopped = 1,
  Starting = 3,
  Running = 2,
}

type RequestHandler = (method: string, params: any, token?: unknown) => Promise<unknown>;

/** A fake LanguageClient; the last one built is `FakeLanguageClient.last`. */
export class LanguageClient {
  static last: LanguageClient | undefined;
  /** How requests are answered (tests replace it). */
  static answer: RequestHandler = async (method) => {
    throw new Error(`unexpected request ${method}`);
  };

  readonly requests: Array<{ method: string; params: any }> = [];
  readonly notificationHandlers = new Map<string, (params: unknown) => void>();
  private readonly stateListeners: Array<(event: { oldState: State; newState: State }) => void> = [];
  started = false;
  stopped = false;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: any,
    readonly clientOptions: any,
  ) {
    LanguageClient.last = this;
  }

  async start(): Promise<void> {
    this.started = true;
    this.setState(State.Running);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.setState(State.Stopped);
  }

  sendRequest(type: { method: string }, params: unknown, token?: unknown): Promise<unknown> {
    this.requests.push({ method: type.method, params });
    return LanguageClient.answer(type.method, params, token);
  }

  onNotification(method: string, handler: (params: unknown) => void) {
    this.notificationHandlers.set(method, handler);
    return { dispose: () => this.notificationHandlers.delete(method) };
  }

  onDidChangeState(listener: (event: { oldState: State; newState: State }) => void) {
    this.stateListeners.push(listener);
    return { dispose: () => {} };
  }

  /** The server sends a notification. */
  notify(method: string, params: unknown): void {
    this.notificationHandlers.get(method)?.(params);
  }

  private setState(newState: State): void {
    for (const listener of this.stateListeners) listener({ oldState: State.Starting, newState });
  }
}
