/** The seven stable error codes; hosts route on these, never on message text. */
export const SESSION_REFERENCE_ERROR_CODES = [
  'SESSION_REFERENCE_INVALID_CONFIG',
  'SESSION_REFERENCE_INVALID_REFERENCE',
  'SESSION_REFERENCE_SELF_REFERENCE',
  'SESSION_REFERENCE_TOO_MANY',
  'SESSION_REFERENCE_READ_FAILED',
  'SESSION_REFERENCE_BUDGET_EXCEEDED',
  'SESSION_REFERENCE_CANCELLED',
] as const;

/** One of the seven stable error codes. */
export type SessionReferenceErrorCode = (typeof SESSION_REFERENCE_ERROR_CODES)[number];

/** The error every session-reference operation raises; `code` is the contract, `message` is for humans. */
export class SessionReferenceError extends Error {
  override readonly name = 'SessionReferenceError' as const;
  readonly code: SessionReferenceErrorCode;

  constructor(code: SessionReferenceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.code = code;
  }
}

/** True for a `SessionReferenceError` (also across realms/bundles, by name and a known code). */
export function isSessionReferenceError(value: unknown): value is SessionReferenceError {
  if (value instanceof SessionReferenceError) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { name?: unknown; code?: unknown };
  return (
    candidate.name === 'SessionReferenceError' &&
    (SESSION_REFERENCE_ERROR_CODES as readonly unknown[]).includes(candidate.code)
  );
}

/** JSON-RPC error codes used by the mapping (LSP names). */
export const JsonRpcErrorCodes = {
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestFailed: -32803,
  RequestCancelled: -32800,
} as const;

/** The one table mapping each error code to its JSON-RPC error code (lsp-contract.md, Errors). */
export const SESSION_REFERENCE_JSON_RPC_CODES: Readonly<Record<SessionReferenceErrorCode, number>> = {
  SESSION_REFERENCE_INVALID_CONFIG: JsonRpcErrorCodes.InvalidParams,
  SESSION_REFERENCE_INVALID_REFERENCE: JsonRpcErrorCodes.InvalidParams,
  SESSION_REFERENCE_SELF_REFERENCE: JsonRpcErrorCodes.InvalidParams,
  SESSION_REFERENCE_TOO_MANY: JsonRpcErrorCodes.InvalidParams,
  SESSION_REFERENCE_READ_FAILED: JsonRpcErrorCodes.RequestFailed,
  SESSION_REFERENCE_BUDGET_EXCEEDED: JsonRpcErrorCodes.RequestFailed,
  SESSION_REFERENCE_CANCELLED: JsonRpcErrorCodes.RequestCancelled,
};

/** The `data` a JSON-RPC error carries for a `SessionReferenceError`. */
export interface SessionReferenceErrorData {
  code: SessionReferenceErrorCode;
}

/** Rebuild a `SessionReferenceError` from a JSON-RPC error's `message` and `data` (client side), or undefined. */
export function sessionReferenceErrorFromJsonRpc(error: {
  message?: unknown;
  data?: unknown;
}): SessionReferenceError | undefined {
  const data = error.data as { code?: unknown } | undefined;
  const code = data?.code;
  if (!(SESSION_REFERENCE_ERROR_CODES as readonly unknown[]).includes(code)) return undefined;
  return new SessionReferenceError(code as SessionReferenceErrorCode, typeof error.message === 'string' ? error.message : '');
}
