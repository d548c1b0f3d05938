import {
  JsonRpcErrorCodes,
  SESSION_REFERENCE_JSON_RPC_CODES,
  isSessionReferenceError,
  type SessionReferenceErrorData,
} from '@dsh-session-ls/shared';
import { ResponseError } from 'vscode-languageserver/node';

/**
 * The JSON-RPC error a request answers with: a `SessionReferenceError` by the shared table, with its
 * message and `data: {code}` (never its cause); a protocol error as is; anything else InternalError.
 */
export function toResponseError(error: unknown): ResponseError<SessionReferenceErrorData | undefined> {
  if (error instanceof ResponseError) return error as ResponseError<SessionReferenceErrorData | undefined>;
  if (isSessionReferenceError(error)) {
    return new ResponseError<SessionReferenceErrorData>(SESSION_REFERENCE_JSON_RPC_CODES[error.code], error.message, {
      code: error.code,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ResponseError(JsonRpcErrorCodes.InternalError, `internal error: ${message}`, undefined);
}

/** The answer to an unknown command (MethodNotFound). */
export function unknownCommandError(command: unknown): ResponseError<undefined> {
  return new ResponseError(JsonRpcErrorCodes.MethodNotFound, `unknown command ${JSON.stringify(command) ?? String(command)}`, undefined);
}
