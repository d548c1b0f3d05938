import { JsonRpcErrorCodes } from '@dsh-session-ls/shared';
import type { CancellationToken } from 'vscode-languageserver/node';
import { toResponseError } from './responseError';
import { cancelledError } from '../resolver';

/**
 * Run a request's work with an AbortSignal that follows `$/cancelRequest`: a cancelled request answers
 * RequestCancelled, any failure its JSON-RPC error (unexpected ones logged), and nothing escapes to stop
 * the server.
 */
export async function answerRequest<T>(
  token: CancellationToken,
  work: (signal: AbortSignal) => Promise<T> | T,
  log: (message: string) => void,
): Promise<T> {
  const controller = new AbortController();
  const cancel = (): void => controller.abort(new Error('request cancelled by the client'));
  const subscription = token.onCancellationRequested(cancel);
  if (token.isCancellationRequested) cancel();
  try {
    const result = await work(controller.signal);
    if (controller.signal.aborted) throw cancelledError(controller.signal);
    return result;
  } catch (error) {
    const response = toResponseError(controller.signal.aborted ? cancelledError(controller.signal) : error);
    if (response.code === JsonRpcErrorCodes.InternalError) {
      log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    throw response;
  } finally {
    subscription.dispose();
  }
}
