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
}
