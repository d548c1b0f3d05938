/**
 * Another agent's format adapter as an index format (`../formats/adapter.ts`): a session file's
 * bytes and the fold an earlier read kept → its listing facts and the fold an append resumes,
 * read by `foreignRead.ts` through the adapter's line fold. The same interface dsh's format reads
 * through (`../formats/dsh.ts`), so the engine asks every format the same question.
 */
import { MAX_FOREIGN_FILE_BYTES, type FactsOutcome, type FactsRequest, type FormatAdapter, type IndexFormat, type SessionFacts } from '../formats/adapter';
import { PlaintextTooLarge } from '../formats/compressed';
import { readForeignFile, type ForeignFiles, type ForeignResume } from './foreignRead';

/** What a read finds: the file's listing facts, or why it lists none. */
export type ForeignFacts = { readonly row: SessionFacts } | { readonly row: undefined; readonly why: 'no session records' | 'too large to read' };

const TOO_LARGE: ForeignFacts = { row: undefined, why: 'too large to read' };
const NO_SESSION: ForeignFacts = { row: undefined, why: 'no session records' };

/** `format` read for an index, its files opened through `files` (default: the file system). */
export function foreignIndexFormat(format: FormatAdapter, files?: ForeignFiles): IndexFormat<ForeignFacts, ForeignResume> {
  return {
    layout: format,
    // A line fold carries no damage forward: every resume state may be continued.
    mayResume: () => true,
    readFacts: (request) => readFacts(format, files, request),
  };
}

/**
 * One file: past the read limit (as stat'ed, or decoded) no session, without reading it; a
 * failure of the file system is an outcome, never a throw.
 */
async function readFacts(format: FormatAdapter, files: ForeignFiles | undefined, request: FactsRequest<ForeignResume>): Promise<FactsOutcome<ForeignFacts, ForeignResume>> {
  const { file, identity, previous, resume, keepState } = request;
  if (identity === undefined) throw new Error('a foreign read needs the identity the engine stat\'ed');
  if (identity.size > MAX_FOREIGN_FILE_BYTES) return { kind: 'read', identity, facts: TOO_LARGE, resumed: false };
  try {
    const known = previous === undefined ? undefined : { identity: previous, ...(resume === undefined ? {} : { resume }) };
    const read = await readForeignFile(format, file, identity, known, { keepState, ...(files === undefined ? {} : { files }) });
    const facts: ForeignFacts = read.summary === undefined ? NO_SESSION : { row: read.summary };
    return { kind: 'read', identity, facts, resumed: read.resumed, ...(read.resume === undefined ? {} : { resume: read.resume }) };
  } catch (error) {
    if (error instanceof PlaintextTooLarge) return { kind: 'read', identity, facts: TOO_LARGE, resumed: false };
    return { kind: 'failed', error };
  }
}
