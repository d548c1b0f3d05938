import { raceWithSignal, type SessionStore, type SessionSurface } from '../resolver';

/**
 * Recent surface reads of mentioned sessions, so re-checking a document on each keystroke does not
 * re-read every referenced log. Entries hold the read's outcome (failures too) until `clear`, which
 * the owner calls whenever the store reports a change, or `forget`, when a session's content changed.
 */
export class SessionSurfaceCache {
  private readonly entries = new Map<string, Promise<SessionSurface>>();

  constructor(
    private readonly sessions: () => SessionStore,
    private readonly capacity = 32,
  ) {}

  /** One session's surface; the read itself is shared and not cancelled, the caller's wait is. */
  read(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    let entry = this.entries.get(sessionId);
    if (entry === undefined) {
      // Not tied to one caller's signal: an abandoned keystroke's read still serves the next one.
      entry = this.sessions().readSurface(sessionId);
      entry.catch(() => undefined);
      this.entries.set(sessionId, entry);
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    } else {
      // Most recently used last, so the oldest is evicted first.
      this.entries.delete(sessionId);
      this.entries.set(sessionId, entry);
    }
    return raceWithSignal(entry, signal);
  }

  /** Forget the sessions whose content changed. */
  forget(sessionIds: Iterable<string>): void {
    for (const sessionId of sessionIds) this.entries.delete(sessionId);
  }

  /** Forget everything (the store changed). */
  clear(): void {
    this.entries.clear();
  }
}
