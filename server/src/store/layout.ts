/**
 * Where dsh puts a session on disk (dsh-session-store.md §1): the project directory derived
 * from the header's cwd, the session directory derived from its id, and the transcript name.
 */
import path from 'node:path';

/** The physical encoding of a transcript, told by its file name. */
export type TranscriptEncoding = 'raw' | 'zstd';

/** Transcript file name per encoding (§1.3). */
export const TRANSCRIPT_NAMES: Readonly<Record<TranscriptEncoding, string>> = {
  raw: 'session.jsonl',
  zstd: 'session.jsonl.zstd',
};

/** The project directory of a header without a cwd. */
export const NO_CWD_DIR = '_no-cwd';

/** Longest slug kept inside `--…--`, so a project directory name stays within 255 bytes. */
const MAX_SLUG_LENGTH = 251;

/** Code units kept literally by both encoders: `A–Z a–z 0–9 . _ -`. */
function isLiteral(unit: number): boolean {
  return (
    (unit >= 0x41 && unit <= 0x5a) ||
    (unit >= 0x61 && unit <= 0x7a) ||
    (unit >= 0x30 && unit <= 0x39) ||
    unit === 0x2e ||
    unit === 0x5f ||
    unit === 0x2d
  );
}

function escapeUnit(unit: number): string {
  return '~' + unit.toString(16).toUpperCase().padStart(4, '0');
}

/** `/`, `\` and `:` separate path segments in a cwd. */
function isSeparator(unit: number): boolean {
  return unit === 0x2f || unit === 0x5c || unit === 0x3a;
}

/**
 * The project directory name for a header cwd (§1.1), e.g. `/home/alice/proj` → `--home-alice-proj--`.
 * Built from runs of literal units (slices), not a unit at a time: a first index derives it for
 * every transcript it reads.
 */
export function projectKey(cwd: string): string {
  if (cwd === '') throw new Error('projectKey: cwd must not be empty');
  let readable = '';
  let run = 0;
  let inSeparatorRun = false;
  for (let i = 0; i < cwd.length; i++) {
    const unit = cwd.charCodeAt(i);
    if (isLiteral(unit)) {
      inSeparatorRun = false;
      continue;
    }
    readable += cwd.slice(run, i);
    run = i + 1;
    const separator = isSeparator(unit);
    if (!separator) readable += escapeUnit(unit);
    else if (!inSeparatorRun) readable += '-';
    inSeparatorRun = separator;
  }
  readable += cwd.slice(run);
  const slug = readable.replace(/^-+/, '') || 'root';
  return `--${slug.slice(0, MAX_SLUG_LENGTH)}--`;
}

/** The project directory for a header: `projectKey(cwd)`, or `_no-cwd` when it has none. */
export function projectDirName(cwd: string | undefined): string {
  return cwd === undefined ? NO_CWD_DIR : projectKey(cwd);
}

/** The session directory name for an id (§1.2): injective over all JS strings, lone surrogates included. */
export function encodeSegment(id: string): string {
  if (id === '') throw new Error('encodeSegment: session id must not be empty');
  // Whole `.`/`..` would name the directory itself or its parent.
  if (id === '.') return '~002E';
  if (id === '..') return '~002E~002E';
  // Runs of literal units are sliced in whole: an id that needs no escape is returned as it is.
  let out = '';
  let run = 0;
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    if (isLiteral(unit)) continue;
    out += id.slice(run, i) + escapeUnit(unit);
    run = i + 1;
  }
  return run === 0 ? id : out + id.slice(run);
}

/**
 * The transcript path dsh derives for a header (`logPath`), relative to the root, its names joined
 * by `/` as an index key is (discovery.ts's `keyPath`). Neither name has a separator and neither
 * is `.` or `..`, so this is `path.join` of the three without its normalizing.
 */
export function relativeLogKey(cwd: string | undefined, id: string, encoding: TranscriptEncoding): string {
  return `${projectDirName(cwd)}/${encodeSegment(id)}/${TRANSCRIPT_NAMES[encoding]}`;
}

/** {@link relativeLogKey} in the platform's separators (`path.join` of the three names). */
export function relativeLogPath(cwd: string | undefined, id: string, encoding: TranscriptEncoding): string {
  return path.normalize(relativeLogKey(cwd, id, encoding));
}

/** The encoding a transcript file name stands for, or undefined for any other name. */
export function transcriptEncoding(fileName: string): TranscriptEncoding | undefined {
  if (fileName === TRANSCRIPT_NAMES.raw) return 'raw';
  if (fileName === TRANSCRIPT_NAMES.zstd) return 'zstd';
  return undefined;
}

/** Whether a file directly in a project directory is a transcript of dsh's retired flat layout. */
export function isFlatTranscriptName(fileName: string): boolean {
  return fileName.endsWith('.jsonl') || fileName.endsWith('.jsonl.zstd');
}

/** Problem wording for damage seen across entries. */
export const LISTING_REASONS = {
  bothEncodings: 'session directory holds both session.jsonl and session.jsonl.zstd',
  ambiguous: (count: number) => `session id is ambiguous: its directory is in ${count} project directories`,
} as const;
