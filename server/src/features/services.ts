import type { AgentHomes, AgentName, SessionReferenceConfig, SessionReferenceTarget } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { AgentSessionLog, SessionReferenceResolver, SessionStore } from '../resolver';
import type { StoreStatus } from '../store/service';
import type { WorkspaceLister } from './workspaceFiles';

/** Where an `@` completion lists workspace files (setting `fileMentions`). */
export const FILE_MENTIONS_ORDERS = ['after', 'before', 'off'] as const;

/**
 * `after` (the default): sessions first, then files, unless the token looks like a path (holds a `/`, or
 * starts with `.` or `~`), which lists files first; `before`: files always first; `off`: no files.
 */
export type FileMentionsOrder = (typeof FILE_MENTIONS_ORDERS)[number];

/** The settings the server works with, every key resolved; each foreign agent's home absolute, by its setting (see `agents.ts` in shared). */
export interface SessionSettings extends AgentHomes {
  /** Absolute sessions root. */
  sessionsRoot: string;
  /** The default target session; undefined = the message is for a new session. */
  targetSessionId?: string;
  /** The resolver limits. */
  config: SessionReferenceConfig;
  /** The stores listed and read, in this order of preference (default `["dsh"]`). */
  agents: readonly AgentName[];
  /** Where an `@` completion lists workspace files (default `after` the sessions). */
  fileMentions: FileMentionsOrder;
  /** `prepare` replaces each credential in a snapshot with `[REDACTED:<kind>]` (default false: dsh's bytes). */
  redactSecrets: boolean;
}

/** A target as a request gives it: each field on its own; `null` or `""` = explicitly none, absent = default. */
export interface TargetRequest {
  sessionId?: string | null;
  cwd?: string | null;
}

/** Whole dsh session logs, for transcripts (a surface alone cannot tell what the user saw). */
export interface SessionLogs {
  /** One session's whole log (in log order, at least every surface-type event); rejects as `sessions.readSurface` does. */
  read(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog>;
}

/**
 * The workspace's files as file mentions see them: the host's paths (the features never assume a
 * path syntax) and folder listings. `list` does the I/O; the language service keeps snapshots of it.
 */
export interface WorkspaceFileSystem {
  /** The file-system path of a `file:` URI, else undefined (other schemes have no folder). */
  readonly pathOf: (uri: string) => string | undefined;
  /** `folder` joined with a `/`-separated relative path. */
  readonly join: (folder: string, relative: string) => string;
  /** The separator between a folder and its entries. */
  readonly sep: string;
  /** Reads a folder for a listing. */
  list: WorkspaceLister;
}

/** Everything a language feature may use; features never see the connection, the disk or the clock directly. */
export interface SessionServices {
  /**
   * The sessions of the current root: waits while the store is being opened, and its listing waits for
   * the first index unless these services answer from what is indexed so far (`SessionWorkspace.view`).
   */
  readonly sessions: SessionStore;
  /** Whole dsh logs; without them a transcript shows the current surface. */
  readonly sessionLogs?: SessionLogs;
  /** The workspace's files, for file mentions. */
  readonly workspaceFiles: WorkspaceFileSystem;
  /** Indexing progress of the current store. */
  storeStatus(): StoreStatus;
  /** The effective settings. */
  settings(): SessionSettings;
  /** A resolver over `sessions` with the settings' limits, each field of `override` replacing its setting. */
  resolver(override?: Partial<SessionReferenceConfig>): SessionReferenceResolver;
  /** The target a request means, its defaults taken from the settings, the workspace and the document. */
  resolveTarget(request: TargetRequest | undefined, documentUri: string | undefined, signal?: AbortSignal): Promise<SessionReferenceTarget>;
  /** An open document, or undefined. */
  document(uri: string): TextDocument | undefined;
  /** The current time in epoch milliseconds. */
  now(): number;
}

/** How one request's services answer from the listing (see {@link SessionServiceViews}). */
export interface ListingView {
  /**
   * Answer from what the current store has indexed so far, without waiting for its first index (nothing
   * while no store is open). Default false: wait for the first index.
   */
  partial?: boolean;
  /** Called when a listing answer must wait for the first index (at most once per call that waits). */
  onWait?(): void;
}

/** The services as each request sees them (`SessionWorkspace` is one). */
export interface SessionServiceViews {
  /**
   * The services of one request: by default its listing answers wait for the first index (`onWait` tells
   * when one must), with `partial` they answer from what is indexed so far.
   */
  view(options: ListingView): SessionServices;
}
