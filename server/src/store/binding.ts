/** Identity binding (dsh-session-store.md §1.4): a header's id and cwd must derive the path it was read from. */
import { keyPath } from './discovery';
import { relativeLogKey, type TranscriptEncoding } from './layout';
import type { FileIdentity, TranscriptFiles } from './transcriptFiles';

/** The header fields that place a session on disk and in the listing. */
export interface SessionHeaderFields {
  id: string;
  /** Absent when the header has no cwd. */
  cwd?: string;
  createdAt: number;
}

/**
 * Why a header does not derive the file it was read from (`key` is root-relative), or
 * undefined when it does. A different spelling that reaches the same file (a case alias on a
 * case-insensitive volume) counts as a match, as dsh's realpath comparison does.
 */
export async function pathBindingProblem(
  root: string,
  key: string,
  encoding: TranscriptEncoding,
  header: SessionHeaderFields,
  identity: FileIdentity,
  files: TranscriptFiles,
): Promise<string | undefined> {
  let expected: string;
  try {
    expected = relativeLogKey(header.cwd, header.id, encoding);
  } catch {
    expected = '';
  }
  if (expected === key) return undefined;
  if (expected !== '') {
    try {
      const aliased = await files.stat(keyPath(root, expected));
      if (aliased.ino === identity.ino && aliased.dev === identity.dev) return undefined;
    } catch {
      // The derived path does not exist: a mismatch.
    }
  }
  const cwd = header.cwd === undefined ? 'no cwd' : `cwd ${JSON.stringify(header.cwd)}`;
  return `header (id ${JSON.stringify(header.id)}, ${cwd}) does not identify this path${expected ? ` (dsh would store it at ${expected})` : ''}`;
}
