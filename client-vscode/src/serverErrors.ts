import { JsonRpcErrorCodes, isSessionReferenceError, sessionReferenceErrorFromJsonRpc } from '@dsh-session-ls/shared';

function errorFields(error: unknown): { message?: unknown; data?: unknown; code?: unknown } {
  return typeof error === 'object' && error !== null ? (error as { message?: unknown; data?: unknown; code?: unknown }) : {};
}

/**
 * The text to show for a failure: `CODE: message` for a session-reference error (from the server,
 * its JSON-RPC `data.code`; or raised here), as the CLI prints it; else the plain message.
 */
export function describeServerError(error: unknown): string {
  const fields = errorFields(error);
  const referenceError = isSessionReferenceError(error) ? error : sessionReferenceErrorFromJsonRpc(fields);
  if (referenceError) return `${referenceError.code}: ${referenceError.message}`;
  const message = typeof fields.message === 'string' && fields.message !== '' ? fields.message : String(error);
  return `dsh sessions: ${message}`;
}

/** True when a request ended because it was cancelled (by us, or the server's CANCELLED code): nothing to show. */
export function isCancellation(error: unknown): boolean {
  const fields = errorFields(error);
  if (fields.code === JsonRpcErrorCodes.RequestCancelled) return true;
  return sessionReferenceErrorFromJsonRpc(fields)?.code === 'SESSION_REFERENCE_CANCELLED';
}
