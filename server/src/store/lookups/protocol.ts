/**
 * What the lookup worker (lookupWorker.ts) posts to the store (earlyLookups.ts): the root's
 * project directories, then, one message per project directory in the root's listing order, its
 * entries and what looking up each session directory's transcript names found.
 */

/** An entry's kind, as discovery tells it (never following a link); 0 where a name is not there. */
export const ENTRY_KINDS = ['missing', 'file', 'dir', 'symlink', 'other'] as const;
export type EntryKindCode = 0 | 1 | 2 | 3 | 4;

/** The numbers of a regular file's identity, in this order (see `FileIdentity`). */
export const IDENTITY_FIELDS = 5;

/** The worker's input. */
export interface LookupRequest {
  root: string;
  /** The names looked up in every session directory, in this order. */
  leafNames: readonly string[];
  /** A call slower than this (ms) waited for the disk (default: quickSync.ts's). */
  slowCallMs?: number;
}

export type LookupMessage =
  /** The root's project directories (real directories, in listing order): one `project` each follows, unless the walk stops. */
  | { kind: 'root'; projects: string[] }
  | ProjectLookups
  /**
   * The walk ended. `complete` is false when it stopped early: a lookup waited for the disk (the
   * store's own lookups then run in parallel through the thread pool), or the root could not be read.
   */
  | { kind: 'done'; complete: boolean };

/** One project directory as the worker found it. */
export interface ProjectLookups {
  kind: 'project';
  project: string;
  /** Whether the directory could be listed; when not, the store looks at it itself. */
  listed: boolean;
  /** The directory's entry names, each followed by `/` (a name never holds one). */
  names: string;
  /** Each entry's kind code. */
  kinds: Uint8Array;
  /** For each entry of kind `dir`, in order: a kind code per leaf name (0 when it is not there). */
  leaves: Uint8Array;
  /** For each leaf of kind `file`, in order: its identity's {@link IDENTITY_FIELDS} numbers. */
  identities: Float64Array;
}
