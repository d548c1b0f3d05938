import {
  JsonRpcErrorCodes,
  SESSION_REFERENCE_JSON_RPC_CODES,
  isSessionReferenceError,
  type SessionReferenceErrorData,
} from '@dsh-session-ls/shared';
import { ResponseError } from 'vscode-languageserver/node';
import { isUnknownCommandError } from '../features/errors';

/**
 * The JSON-RPC error a request answers with: a `SessionReferenceError` by the shared table, with its
 * message and `data: {code}` (never its cause); an unknown command MethodNotFound; a protocol error as
 * is; anything else InternalError.
 */
export function toResponseError(error: unknown): ResponseError<SessionReferenceErrorData | undefined> {
  if (error instanceof ResponseError) return error as ResponseError<SessionReferenceErrorData | undefined>;
  if (isSessionReferenceError(error)) {
    return new ResponseError<SessionReferenceErrorData>(SESSION_REFERENCE_JSON_RPC_CODES[error.code], error.message, {
      code: error.code,
    });
  }
  if (isUnknownCommandError(error)) return new ResponseError(JsonRpcErrorCodes.MethodNotFound, error.message, undefined);
  const message = error instanceof Error ? error.message : String(error);
  return new ResponseError(JsonRpcErrorCodes.InternalError, `internal error: ${message}`, undefined);
}
