import type { SessionStoreStatus } from '@dsh-session-ls/shared';

/** What the status bar item shows. */
export interface StatusPresentation {
  text: string;
  tooltip: string;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** True when a notification payload has the documented shape (the server is another process: check it). */
export function isSessionStoreStatus(value: unknown): value is SessionStoreStatus {
  if (typeof value !== 'object' || value === null) return false;
  const status = value as Record<string, unknown>;
  return (
    (status.root === null || typeof status.root === 'string') &&
    isCount(status.indexed) &&
    typeof status.indexing === 'boolean' &&
    isCount(status.discovered)
  );
}

/** The status bar text and tooltip for a store status. */
export function statusPresentation(status: SessionStoreStatus): StatusPresentation {
  const sessions = (n: number) => `${n} session${n === 1 ? '' : 's'}`;
  const count = sessions(status.indexed);
  // While indexing, "5/12 sessions" once the server has found some (before that, "0/0" says nothing).
  const progress = status.discovered > 0 && status.discovered >= status.indexed ? `${status.indexed}/${sessions(status.discovered)}` : count;
  const text = status.indexing ? `$(sync~spin) dsh: indexing… ${progress}` : `$(history) dsh: ${count}`;
  const store = status.root ?? '(no sessions root)';
  const state = status.indexing ? `${progress} indexed so far` : `${count} indexed`;
  return { text, tooltip: `dsh sessions store: ${store}\n${state}` };
}
