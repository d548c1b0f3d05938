/**
 * What the index keeps of one transcript. Its own module, below both the summarizer
 * (`summarize/*`, which produces it) and the index (which stores it), so neither imports the other.
 */
import type { SessionReadError } from '../resolver/sessionStore';
import type { SessionHeaderFields } from './binding';

/** What the listing needs to know about one transcript. */
export interface TranscriptSummary {
  /** Present when the header line/frame is complete and valid. */
  header?: SessionHeaderFields;
  /** Header-level damage (the entry is skipped and reported): incomplete, invalid or unbound header. */
  headerProblem?: string;
  /** Latest title; undefined when there is none or the title read failed. */
  title?: string;
  /** Body-level damage: still listed (label = id), `readSurface` rejects. */
  bodyError?: { reason: SessionReadError['reason']; message: string };
  capturedThroughSeq: number | null;
  /** The decoder's surface counts, opaque to the store. */
  surfaceCounts?: unknown;
  eventCount: number;
}
