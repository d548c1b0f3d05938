/** The `dshSession/status` notification the server sends when its view of the store changes (proposed contract). */
export interface SessionStoreStatus {
  /** The sessions root in use, or null when none could be determined. */
  root: string | null;
  /** How many sessions are indexed so far. */
  indexed: number;
  /** True while the store is still being (re)indexed. */
  indexing: boolean;
  /** How many sessions were found so far (indexed or not), when the server knows. */
  discovered?: number;
}

/** The status notification's method name. */
export const SESSION_STATUS_NOTIFICATION = 'dshSession/status';

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
    (status.discovered === undefined || isCount(status.discovered))
  );
}

/** The status bar text and tooltip for a store status. */
export function statusPresentation(status: SessionStoreStatus): StatusPresentation {
  const sessions = (n: number) => `${n} session${n === 1 ? '' : 's'}`;
  const count = sessions(status.indexed);
  // While indexing, "5/12 sessions" when the server says how many it found.
  const progress =
    status.discovered !== undefined && status.discovered >= status.indexed ? `${status.indexed}/${sessions(status.discovered)}` : count;
  const text = status.indexing ? `$(sync~spin) dsh: indexing… ${progress}` : `$(history) dsh: ${count}`;
  const store = status.root ?? '(no sessions root)';
  const state = status.indexing ? `${progress} indexed so far` : `${count} indexed`;
  return { text, tooltip: `dsh sessions store: ${store}\n${state}` };
}
