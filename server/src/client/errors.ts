// The errors of `dsh-session-ls/client` besides the contract's `SessionReferenceError`.

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
