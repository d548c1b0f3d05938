// Spec audit (docs/traceability.md): lsp-contract.md "Errors" and "Completion" — an unexpected fault
// answers InternalError (-32603) and the server goes on; `$/cancelRequest` aborts the work's signal and the
// request answers RequestCancelled (-32800); a SessionReferenceError keeps its code, message and no cause.
import { JsonRpcErrorCodes, SessionReferenceError } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { CancellationTokenSource, ResponseError } from 'vscode-languageserver/node';
import { answerRequest } from './requestAnswer';

async function rejectionOf(promise: Promise<unknown>): Promise<ResponseError<unknown>> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(ResponseError);
  return outcome as ResponseError<unknown>;
}

describe('answerRequest', () => {
  it('answers an unexpected fault with InternalError, logs it, and can answer the next request', async () => {
    const logged: string[] = [];
    const source = new CancellationTokenSource();
    const error = await rejectionOf(
      answerRequest(source.token, () => {
        throw new TypeError('boom');
      }, (line) => logged.push(line)),
    );
    expect(error.code).toBe(JsonRpcErrorCodes.InternalError);
    expect(logged.some((line) => line.includes('boom'))).toBe(true);
    // Nothing escaped: the same machinery keeps answering.
    expect(await answerRequest(new CancellationTokenSource().token, async () => 'next', () => {})).toBe('next');
  });

  it('maps a SessionReferenceError by the shared table, with data.code and without its cause', async () => {
    const cause = new Error('internal detail');
    const error = await rejectionOf(
      answerRequest(new CancellationTokenSource().token, async () => {
        throw new SessionReferenceError('SESSION_REFERENCE_READ_FAILED', 'failed to read referenced session: x', { cause });
      }, () => {}),
    );
    expect(error.code).toBe(JsonRpcErrorCodes.RequestFailed);
    expect(error.message).toBe('failed to read referenced session: x');
    expect(error.data).toEqual({ code: 'SESSION_REFERENCE_READ_FAILED' });
    expect(JSON.stringify(error.toJson())).not.toContain('internal detail');
  });

  it('aborts the signal given to the work when the request is cancelled mid-way, answering RequestCancelled', async () => {
    const source = new CancellationTokenSource();
    let seen: AbortSignal | undefined;
    const pending = answerRequest(source.token, (signal) => {
      seen = signal;
      // Work that never settles by itself: only the abort ends it.
      return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
    }, () => {});
    expect(seen?.aborted).toBe(false);
    source.cancel();
    const error = await rejectionOf(pending);
    expect(seen?.aborted).toBe(true);
    expect(error.code).toBe(JsonRpcErrorCodes.RequestCancelled);
    expect(error.data).toEqual({ code: 'SESSION_REFERENCE_CANCELLED' });
  });

  it('answers RequestCancelled even when the work finishes after the cancellation', async () => {
    const source = new CancellationTokenSource();
    const pending = answerRequest(source.token, async () => {
      source.cancel();
      return 'too late';
    }, () => {});
    expect((await rejectionOf(pending)).code).toBe(JsonRpcErrorCodes.RequestCancelled);
  });

  it('answers RequestCancelled for a request cancelled before its work starts', async () => {
    const source = new CancellationTokenSource();
    source.cancel();
    let sawAborted: boolean | undefined;
    const error = await rejectionOf(
      answerRequest(source.token, (signal) => {
        sawAborted = signal.aborted;
        return 'result';
      }, () => {}),
    );
    expect(sawAborted).toBe(true);
    expect(error.code).toBe(JsonRpcErrorCodes.RequestCancelled);
  });
});
