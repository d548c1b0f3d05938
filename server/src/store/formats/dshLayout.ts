/**
 * Where dsh keeps its sessions (dsh-session-store.md §1): under the root, a project folder, a
 * folder per session, and in it `session.jsonl` or `session.jsonl.zstd`. Its own module, below
 * discovery (which walks it) and dsh's adapter (`dsh.ts`, which reads what it finds).
 */
import { isFlatTranscriptName, TRANSCRIPT_NAMES, transcriptEncoding } from '../layout';
import type { SessionLayout } from './adapter';

/** Why a transcript directly in a project folder is skipped. */
export const FLAT_LAYOUT_REASON = 'unsupported flat-file layout: a transcript directly in a project directory';

export const dshLayout: SessionLayout = {
  base: '',
  leafDepth: 2,
  isSessionFile: (name) => transcriptEncoding(name) !== undefined,
  sessionFileNames: Object.values(TRANSCRIPT_NAMES),
  strayFileProblem: (name) => (isFlatTranscriptName(name) ? FLAT_LAYOUT_REASON : undefined),
};
