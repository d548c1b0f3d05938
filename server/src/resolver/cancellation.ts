import { SessionReferenceError } from '@dsh-session-ls/shared';

/** The message of every CANCELLED error (dsh's wording, also for candidate listing). */
export const CANCELLED_MESSAGE = 'session reference preparation was cancelled';

/** The CANCELLED error for an aborted signal; its cause is the abort reason. */
export function cancelledError(signal: AbortSignal): SessionReferenceError {
  return new SessionReferenceError('SESSION_REFERENCE_CANCELLED', CANCELLED_MESSAGE, { cause: signal.reason });
}

/** Throw CANCELLED when the signal is already aborted. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw cancelledError(signal);
}

/**
 * Settle with `work`, or reject with CANCELLED as soon as the signal aborts, even if `work` never
 * settles. A late rejection of `work` is absorbed, never left unhandled.
 */
export function raceWithSignal<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelledError(signal));
    if (signal.aborted) {
      onAbort();
    } else {
      signal.addEventListener('abort', onAbort, { once: true });
    }
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
