/**
 * What the index engine needs of one agent's format: which files are sessions, and what a file's
 * bytes mean (listing facts, surface, whole log, and the fold an append resumes). An adapter is
 * pure: no timers, no watches, no store state. Adapters are registered in `registry.ts`.
 *
 * Two shapes of it: {@link SessionLayout}, which files under a root are sessions (every agent's;
 * a {@link FormatAdapter} is one), and {@link IndexFormat}, a file's bytes and earlier resume
 * state → listing facts and a new resume state, which the engines read through (dsh's framed
 * and compressed logs folded in worker threads, `dsh.ts`; the other agents' line folds,
 * `../engine/foreignFormat.ts`). A {@link FormatAdapter} adds the line fold over JSONL records.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { SessionEventRecord, SessionSurface, StoredSessionSummary } from '../../resolver/sessionStore';
import type { LineFold } from './lineFold';
import type { JsonlRecord } from './records';
import type { FileIdentity } from '../transcriptFiles';

/** Largest transcript read whole (a bigger one is not listed, and not read). */
export const MAX_FOREIGN_FILE_BYTES = 64 * 1024 * 1024;

/** Listing facts of one session file, before the store adds its agent. */
export type SessionFacts = Omit<StoredSessionSummary, 'agent'>;

/** Which files under a root (an agent's home, dsh's sessions root) are sessions. */
export interface SessionLayout {
  /** The folder under the root that holds the session folders ('' for the root itself). */
  readonly base: string;
  /** Depth below `base` of the folders that hold session files (1 for `base/<folder>`, 3 for `base/YYYY/MM/DD`). */
  readonly leafDepth: number;
  /** The one name a folder at `leafDepth` has when it holds session files (any name when absent). */
  readonly leafName?: string;
  /** Whether a file name in a leaf folder is a session file. */
  isSessionFile(name: string): boolean;
  /**
   * Every name a session file may have, when a leaf folder holds one session under one of a few
   * fixed names (dsh): a leaf folder is then looked up by these names, never listed.
   */
  readonly sessionFileNames?: readonly string[];
  /**
   * Why a file directly in a folder one level above the leaf folders is skipped and reported
   * (a session file of a layout the agent no longer writes), or undefined: ignored.
   */
  strayFileProblem?(name: string): string | undefined;
}

/** One read of a session file for the index. */
export interface FactsRequest<Resume> {
  /** The (real) root and the file's root-relative key, `/`-separated. */
  readonly root: string;
  readonly key: string;
  /** The file's absolute path. */
  readonly file: string;
  /** The file's identity as just looked up, when the engine stat'ed it (a read reads at most its size). */
  readonly identity?: FileIdentity;
  /** The file version the previous facts describe, and what an append of it resumes from. */
  readonly previous?: FileIdentity;
  readonly resume?: Resume;
  /** Whether the outcome should carry what the next append resumes from. */
  readonly keepState: boolean;
  /** What the read will cost in bytes (the whole file, or what was appended). */
  readonly bytes: number;
}

/** What a read for the index found. */
export type FactsOutcome<Facts, Resume> =
  | {
      readonly kind: 'read';
      /** The identity of the version read (its size: the bytes read). */
      readonly identity: FileIdentity;
      readonly facts: Facts;
      /** Whether `resume` was continued (only the appended bytes were read). */
      readonly resumed: boolean;
      readonly resume?: Resume;
    }
  /** The file could not be opened or read: no fact about it. */
  | { readonly kind: 'failed'; readonly error: unknown };

/** How a format's index is kept in the persistent cache (one file per root, `../summaryCache.ts`). */
export interface CacheRule {
  /** What a root's cache is named by (its file and its head line), from the root's real path. */
  rootName(realRoot: string): string;
  /** Whether a cache line keeps what an append resumes from (only dsh's fold state is kept). */
  readonly keepsResume: boolean;
}

/** A format read for an index: a file's bytes (and an earlier resume state) → listing facts and a new resume state. */
export interface IndexFormat<Facts, Resume> {
  readonly layout: SessionLayout;
  readonly cache: CacheRule;
  /** Reads one file; never rejects (a failure is an outcome). */
  readFacts(request: FactsRequest<Resume>, previousFacts: Facts | undefined): Promise<FactsOutcome<Facts, Resume>>;
  /** Whether an append may continue from these facts (damage is sticky: a damaged file is read again whole). */
  mayResume(facts: Facts): boolean;
}

/**
 * How a format's indexed entries become the listing it serves: built whole, and (optionally)
 * patched after some entries were read again, undefined when a patch cannot tell (then built).
 */
export interface ListingRule<Entry, Listed> {
  /** `side`: what the root's side files say (for a format that names some, see {@link SideFileRules}). */
  build(entries: Iterable<Entry>, side?: SideFacts): Listed;
  patch?(listing: Listed, changed: Iterable<Entry>): Listed | undefined;
}

/** What a root's side files say about its sessions, as the engine last read them. */
export interface SideFacts {
  /** Titles that override a session's own (the agent's title index), by session id. */
  readonly titles: ReadonlyMap<string, string>;
  /** The cwd the project folder of a session file names (by the file's key), if any. */
  projectCwd(key: string): string | undefined;
}

/** The files beside the session folders whose content changes listing facts (see {@link TitleIndex}, {@link ProjectIndex}). */
export interface SideFileRules {
  readonly titleIndex?: TitleIndex;
  readonly projectIndex?: ProjectIndex;
}

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

/**
 * Files that name the cwd of each project folder (a folder one level below `base`), for an agent
 * whose session files do not: a registry at the top of the home and a marker inside each project
 * folder (the marker wins). Read again when they change; absent or damaged: no cwd from them.
 */
export interface ProjectIndex {
  /** The registry's name in the home. */
  readonly file: string;
  /** The cwds its text gives, by project folder name. */
  cwds(text: string): Map<string, string>;
  /** The marker's name in a project folder. */
  readonly marker: string;
  /** The cwd a marker's text gives. */
  markerCwd(text: string): string | undefined;
}

/** The largest project registry or marker read; a bigger one gives no cwds. */
export const MAX_PROJECT_INDEX_BYTES = 4 * 1024 * 1024;

/** One agent's format: where its session files are, and how one is read. */
export interface FormatAdapter {
  readonly agent: ForeignAgent;
  /** The folder under the agent's home that holds the session folders. */
  readonly base: string;
  /** Depth below `base` of the folders that hold session files (1 for `base/<folder>`, 3 for `base/YYYY/MM/DD`). */
  readonly leafDepth: number;
  /** The one name a folder at `leafDepth` has when it holds session files (any name when absent). */
  readonly leafName?: string;
  /** Whether a file name in a leaf folder is a session file. */
  isSessionFile(name: string): boolean;
  /** The agent's title index, if it keeps one. */
  readonly titleIndex?: TitleIndex;
  /** Where the agent names its project folders' cwds, if its session files do not. */
  readonly projectIndex?: ProjectIndex;
  /**
   * Listing facts of a file (title before any index lookup), or undefined when it is no session,
   * from a parse of every line: the reference the line fold is held to.
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
