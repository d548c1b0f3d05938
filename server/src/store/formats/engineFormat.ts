/**
 * What the disk engine (`../diskStore.ts`) needs of the format it serves a root in: dsh's
 * (`dsh.ts`), or another agent's adapter made one for a home (`../engine/homeFormat.ts`).
 */
import type { SessionSurface } from '../../resolver/sessionStore';
import type { IndexedTranscript, Listing } from '../listing';
import type { KnownFailure } from '../lookup';
import type { TranscriptSummary } from '../transcriptSummary';
import type { IndexFormat, ListingRule, SideFileRules } from './adapter';

/**
 * An index format (its resume state the format's own), the rule that makes its indexed entries the listing, a session's
 * surface read by id, and the side files the engine reads and watches for its listing rule.
 */
export interface EngineFormat extends IndexFormat<TranscriptSummary, unknown> {
  readonly listing: ListingRule<IndexedTranscript, Listing>;
  /** A fresh snapshot of one session's surface, found by id under `root` (undefined: no root). */
  readSurface(root: string | undefined, sessionId: string, signal?: AbortSignal, knownFailure?: KnownFailure): Promise<SessionSurface>;
  readonly sideFiles?: SideFileRules;
}
