/** What a call under fuzzing gave: its value, or the SessionReferenceError it raised; anything else escapes. */
import { SessionReferenceError } from '@dsh-session-ls/shared';

/** A call's outcome when only `SessionReferenceError`s may escape it. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: SessionReferenceError };

function caught<T>(error: unknown): Outcome<T> {
  // Anything else is a bug the property must report, with its own stack.
  if (!(error instanceof SessionReferenceError)) throw error;
  expectWellFormed(error);
  return { ok: false, error };
}

/** A SessionReferenceError as the contract wants it: its name, a known code, a message for humans. */
export function expectWellFormed(error: SessionReferenceError): void {
  if (error.name !== 'SessionReferenceError' || typeof error.message !== 'string' || error.message === '') {
    throw new Error(`malformed SessionReferenceError: ${String(error.name)} ${String(error.code)} ${JSON.stringify(error.message)}`);
  }
}

/** Run `call`; a `SessionReferenceError` becomes an outcome, any other throw escapes. */
export function outcomeOf<T>(call: () => T): Outcome<T> {
  try {
    return { ok: true, value: call() };
  } catch (error) {
    return caught<T>(error);
  }
}

/** `outcomeOf` for async calls. */
export async function asyncOutcomeOf<T>(call: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    return caught<T>(error);
  }
}
