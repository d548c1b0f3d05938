import { displaySafeText } from './displaySafe';

/** The `workspace/executeCommand` names of lsp-contract.md. */
export const SessionCommands = {
  candidates: 'dshSession.candidates',
  prepare: 'dshSession.prepare',
  parse: 'dshSession.parse',
  formatMention: 'dshSession.formatMention',
  transcript: 'dshSession.transcript',
  preview: 'dshSession.preview',
} as const;

/** Every command the server registers. */
export const SESSION_COMMAND_NAMES: readonly string[] = Object.values(SessionCommands);

/** The settings section pulled with `workspace/configuration`. */
export const SETTINGS_SECTION = 'dshSessions';

/** The diagnostic `source` the server publishes under. */
export const DIAGNOSTIC_SOURCE = 'dsh-session';

/**
 * The `dshSession/status` notification (server → client): sent once the store of the sessions root is
 * open (again after a root change) and as its indexing advances (throttled).
 */
export const SESSION_STATUS_NOTIFICATION = 'dshSession/status';

/** The params of `dshSession/status`: the server's view of the store. */
export interface SessionStoreStatus {
  /** The sessions root in use (absolute), or null when the server has no store open. */
  root: string | null;
  /** Sessions indexed so far. */
  indexed: number;
  /** True until the first complete index of the root is built. */
  indexing: boolean;
  /** Sessions found so far, indexed or not (may grow while indexing). */
  discovered: number;
  /** Why the root is not read, when it is not; absent while it is (the store keeps looking for it). */
  rootProblem?: SessionsRootProblem;
}

/**
 * Why a sessions root is not read: `missing` (nothing there yet: not an error, it is picked up when it
 * appears), `not-a-directory` (a file or another non-directory is in its place, or on its path),
 * `inaccessible` (it cannot be opened: permissions, a symlink loop…).
 */
export type SessionsRootProblem = 'missing' | 'not-a-directory' | 'inaccessible';

/** The root problems the server reports; a client should treat others as `inaccessible`. */
export const SESSIONS_ROOT_PROBLEMS: readonly SessionsRootProblem[] = ['missing', 'not-a-directory', 'inaccessible'];

/** One sentence for the user about a root problem (our words). */
export function describeSessionsRootProblem(root: string, problem: SessionsRootProblem): string {
  root = displaySafeText(root);
  switch (problem) {
    case 'missing':
      return `The dsh sessions root ${root} does not exist yet; sessions appear once it does.`;
    case 'not-a-directory':
      return `The dsh sessions root ${root} is not a directory, so no sessions can be listed; it is picked up once it is one.`;
    default:
      return `The dsh sessions root ${root} cannot be read, so no sessions can be listed; it is picked up once it can be.`;
  }
}
