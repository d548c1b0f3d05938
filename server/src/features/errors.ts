/**
 * The errors the language service raises besides `SessionReferenceError`: plain values, no
 * protocol. The wiring turns each into its JSON-RPC error (`wiring/responseError.ts`).
 */

/** A command the service has no entry for; a host answers MethodNotFound. */
export class UnknownCommandError extends Error {
  override readonly name = 'UnknownCommandError' as const;

  constructor(readonly command: unknown) {
    super(`unknown command ${JSON.stringify(command) ?? String(command)}`);
  }
}

/** True for an {@link UnknownCommandError}. */
export function isUnknownCommandError(value: unknown): value is UnknownCommandError {
  return value instanceof UnknownCommandError;
}
