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
