/**
 * dsh's format as an adapter: a leaf folder per session (`<project>/<session>/`, the root being
 * the base) holding one of two transcript names; listing facts and resume state from a fold of its
 * framed log, raw or zstd, made in worker threads (`../summarize/pool.ts`), with the header held to
 * the path it was read from (`../binding.ts`); a surface read from the file (`../lookup.ts`); its
 * listing rule, `../listing.ts` (ambiguous ids and both encodings skipped, header problems reported).
 */
import type { SessionSurface } from '../../resolver/sessionStore';
import { pathBindingProblem } from '../binding';
import { transcriptEncoding, type TranscriptEncoding } from '../layout';
import { buildListing, patchListing, type IndexedTranscript, type Listing } from '../listing';
import { readSessionSurface, type KnownFailure } from '../lookup';
import type { SummarizePool } from '../summarize/pool';
import { mayResume, type ResumeState } from '../summarize/summarizeFile';
import type { TranscriptFiles } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';
import type { FactsOutcome, FactsRequest, IndexFormat, ListingRule } from './adapter';
import { dshLayout } from './dshLayout';

/** The encoding a dsh transcript key (`<project>/<session>/<name>`) stands for. */
export function encodingOfKey(key: string): TranscriptEncoding {
  return transcriptEncoding(key.slice(key.lastIndexOf('/') + 1)) ?? 'raw';
}

/** dsh's format for one store: its reads go through the store's worker pool. */
export interface DshFormat extends IndexFormat<TranscriptSummary, ResumeState> {
  /** Which indexed transcripts are served, and which are skipped for damage across entries. */
  readonly listing: ListingRule<IndexedTranscript, Listing>;
  /** A fresh snapshot of one session's surface, found by id under `root` (undefined: no root). */
  readSurface(root: string | undefined, sessionId: string, signal?: AbortSignal, knownFailure?: KnownFailure): Promise<SessionSurface>;
}

/** dsh's format, reading through `pool` (which the store owns) and `files`. */
export function dshFormat(pool: SummarizePool, files: TranscriptFiles): DshFormat {
  return {
    layout: dshLayout,
    mayResume,
    listing: { build: buildListing, patch: patchListing },
    // The cache is named by the root itself, and keeps the recently written transcripts' fold states.
    cache: { rootName: (realRoot) => realRoot, keepsResume: true },
    readFacts: (request, previousFacts) => readDshFacts(pool, files, request, previousFacts),
    readSurface: (root, sessionId, signal, knownFailure) => readSessionSurface(root, sessionId, files, signal, knownFailure),
  };
}

/**
 * One transcript folded (in a worker, or inline when small); a header that does not derive the
 * path read is header-level damage. The header never changes in an append, and neither does
 * whether it derives the path: a resumed read keeps the earlier finding.
 */
async function readDshFacts(
  pool: SummarizePool,
  files: TranscriptFiles,
  request: FactsRequest<ResumeState>,
  previousFacts: TranscriptSummary | undefined,
): Promise<FactsOutcome<TranscriptSummary, ResumeState>> {
  const { root, key, file, previous, resume, keepState, bytes } = request;
  const encoding = encodingOfKey(key);
  const outcome = await pool.run({ file, encoding, previous, saved: resume, keepState }, bytes);
  if (outcome.kind === 'failed') return { kind: 'failed', error: outcome.error };
  let facts = outcome.summary;
  const identity = { ...outcome.opened, size: outcome.position };
  if (facts.header) {
    try {
      const problem =
        outcome.resumed && previousFacts?.header !== undefined
          ? previousFacts.headerProblem
          : await pathBindingProblem(root, key, encoding, facts.header, identity, files);
      if (problem !== undefined) facts = { ...facts, headerProblem: problem };
    } catch (error) {
      return { kind: 'failed', error };
    }
  }
  return { kind: 'read', identity, facts, resumed: outcome.resumed, ...(outcome.saved === undefined ? {} : { resume: outcome.saved }) };
}
