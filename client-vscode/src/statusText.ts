/** The `dshSession/status` notification the server sends when its view of the store changes (proposed contract). */
export interface SessionStoreStatus {
  /** The sessions root in use, or null when none could be determined. */
  root: string | null;
  /** How many sessions are indexed so far. */
  indexed: number;
  /** True while the store is still being (re)indexed. */
  indexing: boolean;
}

/** The status notification's method name. */
export const SESSION_STATUS_NOTIFICATION = 'dshSession/status';

/** What the status bar item shows. */
export interface StatusPresentation {
  text: string;
  tooltip: string;
}

/** True when a notification payload has the documented shape (the server is another process: check it). */
export function isSessionStoreStatus(value: unknown): value is SessionStoreStatus {
  if (typeof value !== 'object' || value === null) return false;
  const status = value as Record<string, unknown>;
  return (
    (status.root === null || typeof status.root === 'string') &&
    typeof status.indexed === 'number' &&
    Number.isSafeInteger(status.indexed) &&
    status.indexed >= 0 &&
    typeof status.indexing === 'boolean'
  );
}

/** The status bar text and tooltip for a store status. */
export function statusPresentation(status: SessionStoreStatus): StatusPresentation {
  const count = `${status.indexed} session${status.indexed === 1 ? '' : 's'}`;
  const text = status.indexing ? `$(sync~spin) dsh: indexing… ${count}` : `$(history) dsh: ${count}`;
  const store = status.root ?? '(no sessions root)';
  const state = status.indexing ? `${count} indexed so far` : `${count} indexed`;
  return { text, tooltip: `dsh sessions store: ${store}\n${state}` };
}
