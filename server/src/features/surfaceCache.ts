import type { ForeignAgent } from '@dsh-session-ls/shared';
import { raceWithSignal, type SessionKey, type SessionStore, type SessionSurface } from '../resolver';
import { sessionKey } from './mentionAnalysis';

/**
 * Recent surface reads of mentioned sessions (of every agent, keyed by agent and id), so re-checking a document on each keystroke does not
 * re-read every referenced log. Entries hold the read's outcome (failures too) until `clear`, which
 * the owner calls whenever the store reports a change, or `forget`, when a session's content changed.
 */
export class SessionSurfaceCache {
  private readonly entries = new Map<string, Promise<SessionSurface>>();

  constructor(
    private readonly sessions: () => SessionStore,
    private readonly capacity = 32,
  ) {}

  /** One session's surface (`agent`: another agent's); the read itself is shared and not cancelled, the caller's wait is. */
  read(sessionId: string, signal?: AbortSignal, agent?: ForeignAgent): Promise<SessionSurface> {
    const key = sessionKey(sessionId, agent);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      // Not tied to one caller's signal: an abandoned keystroke's read still serves the next one.
      entry = agent === undefined ? this.sessions().readSurface(sessionId) : this.sessions().readSurface(sessionId, undefined, agent);
      entry.catch(() => undefined);
      this.entries.set(key, entry);
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    } else {
      // Most recently used last, so the oldest is evicted first.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return raceWithSignal(entry, signal);
  }

  /** Forget the sessions whose content changed. */
  forget(sessions: Iterable<SessionKey>): void {
    for (const session of sessions) this.entries.delete(sessionKey(session.id, session.agent));
  }

  /** Forget everything (the store changed). */
  clear(): void {
    this.entries.clear();
  }
}
