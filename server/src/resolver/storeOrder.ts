import type { StoredSessionSummary } from './sessionStore';

// `localeCompare` without arguments is specified as a default-locale Intl.Collator; one cached collator is the same order, faster.
const idCollator = new Intl.Collator();

/** Store order: newest `createdAt` first, then `a.id.localeCompare(b.id)` (dsh's `listSessions`). */
export function compareStoreOrder(a: StoredSessionSummary, b: StoredSessionSummary): number {
  return b.createdAt - a.createdAt || idCollator.compare(a.id, b.id);
}
