import type { StoredSessionSummary } from './sessionStore';

// `localeCompare` without arguments is specified as a default-locale Intl.Collator; one cached collator is the same order, faster.
// Made on the first tie: building it loads the locale's collation data (15-25 ms at start), and most stores never tie.
let idCollator: Intl.Collator | undefined;

/** Store order: newest `createdAt` first, then `a.id.localeCompare(b.id)` (dsh's `listSessions`). */
export function compareStoreOrder(a: StoredSessionSummary, b: StoredSessionSummary): number {
  return b.createdAt - a.createdAt || (idCollator ??= new Intl.Collator()).compare(a.id, b.id);
}
