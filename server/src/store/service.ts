import type { SessionsRootProblem } from '@dsh-session-ls/shared';
import type { SessionKey, SessionStore } from '../resolver/sessionStore';

/** A header-level problem found while listing (that entry is skipped), reported once per path and reason. */
export interface StoreProblem {
  path: string;
  reason: string;
}

/** Indexing progress of a store. */
export interface StoreStatus {
  /** True until the first complete index of the root is built. */
  indexing: boolean;
  /** Sessions indexed so far. */
  indexed: number;
  /** Sessions discovered so far (may grow while indexing). */
  discovered: number;
  /** False when the root does not exist (not an error: it is picked up when it appears). */
  rootExists: boolean;
  /** Why the root is not read (missing, not a directory, inaccessible); absent while it is or before the first look. */
  rootProblem?: SessionsRootProblem;
}

/** A disposable subscription. */
export interface Subscription {
  dispose(): void;
}

/** A real dsh store on disk, read-only, kept fresh while the server runs. */
export interface SessionStoreService extends SessionStore {
  readonly root: string;
  status(): StoreStatus;
  /** Fires when a listing answer may have changed (session created, appended, renamed, deleted). */
  onDidChange(listener: () => void): Subscription;
  /**
   * Fires, throttled like `onDidChange`, with the sessions whose content was re-read with new bytes,
   * whether or not their listing row changed (an append to a titled session changes no row): what
   * was read of them (a surface, credentials) may be stale.
   */
  onDidChangeContent(listener: (sessions: readonly SessionKey[]) => void): Subscription;
  /** Fires once per newly seen header-level problem. */
  onProblem(listener: (problem: StoreProblem) => void): Subscription;
  /** Fires as indexing advances (for work-done progress). */
  onStatus(listener: (status: StoreStatus) => void): Subscription;
  /** Resolves when the first full index is built. */
  whenIndexed(signal?: AbortSignal): Promise<void>;
  /**
   * Writes the persistent index cache now if it differs from the index, and resolves when written
   * (or when there is nothing to write). For a process that exits before a scheduled write (the
   * CLI, a server shutting down): the store's scans and sweep stop first, so the write has the
   * main thread; the listing stays as it was.
   */
  saveCache?(): Promise<void>;
  dispose(): void;
}

/** Options for opening a store. */
export interface OpenSessionStoreOptions {
  /** The sessions root (e.g. `~/.dsh/sessions`). */
  root: string;
  /** Where a persistent index cache may live (never under the root); undefined = no persistent cache. */
  cacheDir?: string;
  /** Diagnostic logging (never stdout: stdio carries the protocol). */
  log?: (message: string) => void;
}
