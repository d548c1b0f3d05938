import type { SessionReferenceConfig } from './config';
import { displaySafeText } from './displaySafe';
import type { ForeignAgent } from './agents';
import type {
  ContentBlock,
  ParsedSessionReferenceText,
  PreparedReferencedMessage,
  SessionReferenceInput,
  SessionReferenceMentionCandidate,
} from './types';

/** The `workspace/executeCommand` names of lsp-contract.md. */
export const SessionCommands = {
  candidates: 'dshSession.candidates',
  prepare: 'dshSession.prepare',
  parse: 'dshSession.parse',
  formatMention: 'dshSession.formatMention',
  transcript: 'dshSession.transcript',
  preview: 'dshSession.preview',
} as const;

/** `target` of a command (lsp-contract.md, The target): each field on its own, `null` or `""` = none. */
export interface SessionCommandTarget {
  sessionId?: string | null;
  cwd?: string | null;
}

/** An open document named by a command. */
export interface SessionCommandDocument {
  uri: string;
}

/** What every preparing command also takes: a target, and a config overriding the settings for this call. */
export interface SessionCommandOptions {
  target?: SessionCommandTarget | null;
  config?: Partial<SessionReferenceConfig> | null;
}

/** `dshSession.candidates`. */
export interface CandidatesCommandArgument extends SessionCommandOptions {
  query?: string | null;
  limit?: number | null;
  textDocument?: SessionCommandDocument | null;
}

/** `dshSession.prepare` of `content` and `references`, used as given (the seed API). */
export interface PrepareContentArgument extends SessionCommandOptions {
  content: ContentBlock[];
  references: SessionReferenceInput[];
  text?: never;
  textDocument?: never;
}

/** `dshSession.prepare` or `dshSession.preview` of a text, its mentions parsed as dsh parses a direct message. */
export interface PrepareTextArgument extends SessionCommandOptions {
  text: string;
  content?: never;
  references?: never;
  textDocument?: never;
}

/** `dshSession.prepare` or `dshSession.preview` of an open document, its mentions parsed as dsh parses a direct message. */
export interface PrepareDocumentArgument extends SessionCommandOptions {
  textDocument: SessionCommandDocument;
  content?: never;
  references?: never;
  text?: never;
}

/** `dshSession.prepare`: exactly one of its three forms. */
export type PrepareCommandArgument = PrepareContentArgument | PrepareTextArgument | PrepareDocumentArgument;

/** `dshSession.preview`: a text or an open document (never content with references). */
export type PreviewCommandArgument = PrepareTextArgument | PrepareDocumentArgument;

/** `dshSession.parse`. */
export interface ParseCommandArgument {
  text: string;
}

/** `dshSession.formatMention`. */
export interface FormatMentionCommandArgument {
  sessionId: string;
  label?: string | null;
  /** A foreign agent's session (our extension); absent or null for a dsh session. */
  agent?: ForeignAgent | null;
}

/** `dshSession.transcript`. */
export interface TranscriptCommandArgument {
  sessionId: string;
  /** Another agent's session (our extension); absent or null for a dsh session. */
  agent?: ForeignAgent | null;
}

/**
 * The one argument and the result of each `workspace/executeCommand` (lsp-contract.md, Commands). The
 * server's handlers and the clients are typed by it, so a change on one side fails to compile on the other.
 */
export interface SessionCommandMap {
  [SessionCommands.candidates]: { argument: CandidatesCommandArgument; result: SessionReferenceMentionCandidate[] };
  [SessionCommands.prepare]: { argument: PrepareCommandArgument; result: PreparedReferencedMessage };
  [SessionCommands.parse]: { argument: ParseCommandArgument; result: ParsedSessionReferenceText };
  /** The canonical mention. */
  [SessionCommands.formatMention]: { argument: FormatMentionCommandArgument; result: string };
  /** Markdown: the session as the user saw it. */
  [SessionCommands.transcript]: { argument: TranscriptCommandArgument; result: string };
  /** Markdown: what the model will see for the message. */
  [SessionCommands.preview]: { argument: PreviewCommandArgument; result: string };
}

/** A command name of {@link SessionCommandMap}. */
export type SessionCommandName = keyof SessionCommandMap;

/** The argument object of command `C`. */
export type SessionCommandArgument<C extends SessionCommandName> = SessionCommandMap[C]['argument'];

/** The result of command `C`. */
export type SessionCommandResult<C extends SessionCommandName> = SessionCommandMap[C]['result'];

/** `workspace/executeCommand` params (also an LSP `Command` without its title) calling `command` with its one argument. */
export function sessionCommandParams<C extends SessionCommandName>(
  command: C,
  argument: SessionCommandArgument<C>,
): { command: C; arguments: [SessionCommandArgument<C>] } {
  return { command, arguments: [argument] };
}

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
