/**
 * Another agent's format adapter as an index format (`../formats/adapter.ts`): a session file's
 * bytes and the fold an earlier read kept → its listing facts, as dsh's index keeps them
 * (`../transcriptSummary.ts`), and the fold an append resumes, read by `foreignRead.ts` through
 * the adapter's line fold. The same interface dsh's format reads through (`../formats/dsh.ts`),
 * so the engine asks every format the same question.
 */
import { MAX_FOREIGN_FILE_BYTES, type FactsOutcome, type FactsRequest, type FormatAdapter, type IndexFormat, type SessionFacts } from '../formats/adapter';
import { PlaintextTooLarge } from '../formats/compressed';
import type { TranscriptSummary } from '../transcriptSummary';
import { foreignCacheRoot } from './foreignCache';
import { readForeignFile, type ForeignFiles, type ForeignResume } from './foreignRead';

/** Why a file lists no session (its header problem). */
export const NO_SESSION_REASONS = { noSession: 'no session records', tooLarge: 'too large to read' } as const;

const TOO_LARGE: TranscriptSummary = Object.freeze({ headerProblem: NO_SESSION_REASONS.tooLarge, capturedThroughSeq: null, eventCount: 0 });
const NO_SESSION: TranscriptSummary = Object.freeze({ headerProblem: NO_SESSION_REASONS.noSession, capturedThroughSeq: null, eventCount: 0 });

/** A session file's listing facts as the index keeps them: the session as the header, its title. */
export function sessionSummary(facts: SessionFacts): TranscriptSummary {
  return {
    header: { id: facts.id, ...(facts.cwd === undefined ? {} : { cwd: facts.cwd }), createdAt: facts.createdAt },
    ...(facts.title === undefined ? {} : { title: facts.title }),
    capturedThroughSeq: null,
    eventCount: 0,
  };
}

/** `format` read for an index, its files opened through `files` (default: the file system). */
export function foreignIndexFormat(format: FormatAdapter, files?: ForeignFiles): IndexFormat<TranscriptSummary, ForeignResume> {
  return {
    layout: format,
    // A line fold is no state a cache line keeps: an append after a restart is read whole.
    cache: { rootName: (realHome) => foreignCacheRoot(format.agent, realHome), keepsResume: false },
    // A line fold carries no damage forward: every resume state may be continued.
    mayResume: () => true,
    readFacts: (request) => readFacts(format, files, request),
  };
}

/**
 * One file: past the read limit (as stat'ed, or decoded) no session, without reading it; a
 * failure of the file system is an outcome, never a throw.
 */
async function readFacts(format: FormatAdapter, files: ForeignFiles | undefined, request: FactsRequest<ForeignResume>): Promise<FactsOutcome<TranscriptSummary, ForeignResume>> {
  const { file, identity, previous, resume, keepState } = request;
  if (identity === undefined) throw new Error('a foreign read needs the identity the engine stat\'ed');
  if (identity.size > MAX_FOREIGN_FILE_BYTES) return { kind: 'read', identity, facts: TOO_LARGE, resumed: false };
  try {
    const known = previous === undefined ? undefined : { identity: previous, ...(resume === undefined ? {} : { resume }) };
    const read = await readForeignFile(format, file, identity, known, { keepState, ...(files === undefined ? {} : { files }) });
    const facts = read.summary === undefined ? NO_SESSION : sessionSummary(read.summary);
    return { kind: 'read', identity, facts, resumed: read.resumed, ...(read.resume === undefined ? {} : { resume: read.resume }) };
  } catch (error) {
    if (error instanceof PlaintextTooLarge) return { kind: 'read', identity, facts: TOO_LARGE, resumed: false };
    return { kind: 'failed', error };
  }
}
