/**
 * What the index engine needs of one agent's format: which files are sessions, and what a file's
 * bytes mean (listing facts, surface, whole log, and the fold an append resumes). An adapter is
 * pure: no timers, no watches, no store state. Adapters are registered in `registry.ts`.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { SessionEventRecord, SessionSurface, StoredSessionSummary } from '../../resolver/sessionStore';
import type { LineFold } from './lineFold';
import type { JsonlRecord } from './records';

/** Largest transcript read whole (a bigger one is not listed, and not read). */
export const MAX_FOREIGN_FILE_BYTES = 64 * 1024 * 1024;

/** Listing facts of one session file, before the store adds its agent. */
export type SessionFacts = Omit<StoredSessionSummary, 'agent'>;

/**
 * A file at the top of the agent's home whose records name sessions (id → title), overriding the
 * titles of their files; read again when it changes, absent or damaged: no overrides.
 */
export interface TitleIndex {
  /** Its name in the home. */
  readonly file: string;
  /** The titles its text gives, by session id. */
  titles(text: string): Map<string, string>;
  /**
   * The same titles, folded record by record, keeping only those of the ids `wanted` accepts: the
   * engine streams the file through it in bounded lines, so memory follows the sessions listed, not
   * the file. Without it, the engine hands `titles` the whole text of an index of at most
   * {@link MAX_TITLE_INDEX_TEXT_BYTES}, and a bigger one gives no titles.
   */
  newFold?(wanted: (id: string) => boolean): TitleFold;
}

/** A title index's records folded in order (see {@link TitleIndex.newFold}). */
export interface TitleFold {
  add(record: JsonlRecord): void;
  /** The titles of the records added so far, by session id. */
  titles(): Map<string, string>;
}

/** The largest title index read as one text, for a {@link TitleIndex} without `newFold`. */
export const MAX_TITLE_INDEX_TEXT_BYTES = 4 * 1024 * 1024;

/** One agent's format: where its session files are, and how one is read. */
export interface FormatAdapter {
  readonly agent: ForeignAgent;
  /** The folder under the agent's home that holds the session folders. */
  readonly base: string;
  /** Depth below `base` of the folders that hold session files (1 for `base/<folder>`, 3 for `base/YYYY/MM/DD`). */
  readonly leafDepth: number;
  /** Whether a file name in a leaf folder is a session file. */
  isSessionFile(name: string): boolean;
  /** The agent's title index, if it keeps one. */
  readonly titleIndex?: TitleIndex;
  /**
   * Listing facts of a file (title before any index lookup), or undefined when it is no session,
   * from a parse of every line: the reference the skimming fold is held to.
   */
  summarize(file: string, text: string, mtimeMs: number): SessionFacts | undefined;
  /** A fold of a file's lines from its start (see `lineFold.ts`). */
  newFold(file: string): LineFold;
  /** The listing facts a fold (of this format, from `newFold`) found; the same as `summarize` of the same bytes. */
  finish(fold: LineFold, file: string, mtimeMs: number): SessionFacts | undefined;
  surface(records: readonly JsonlRecord[]): SessionSurface['events'];
  /** The whole session as the user saw it. */
  log(records: readonly JsonlRecord[]): SessionEventRecord[];
}
