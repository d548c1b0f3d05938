// The public types of `dsh-session-ls/client`: its settings, the options of its requests, and what they answer.
import type { AgentHomes, AgentName, ForeignAgent, SessionReferenceTarget } from '@dsh-session-ls/shared';

/**
 * The server's settings (`initializationOptions` and the `dshSessions` section), every key the server
 * reads; unset ones take the server's defaults. Each other agent's home is set by its own key
 * (`AgentHomes`: default its environment variable's folder, else its folder in the user's home),
 * read when `agents` has that agent.
 */
export interface DshSessionSettings extends Partial<AgentHomes> {
  /** The dsh sessions root; default `$DSH_HOME/sessions`, else `~/.dsh/sessions`. */
  sessionsRoot?: string;
  /** The session the message is for (never offered, never referenced). */
  targetSessionId?: string;
  /** At most this many sessions in one message, 1 to 3 (default 3). */
  maxReferences?: number;
  /** At most this many candidates (default 50). */
  candidateLimit?: number;
  /** The byte budget of one referenced session (default 65536). */
  maxReferenceBytes?: number;
  /** Whose sessions are offered and read (default `['dsh']`): add other agents' names for theirs. */
  agents?: readonly AgentName[];
  /** Where `@` completion lists workspace files: `after` the sessions (default), `before` them, or `off`. */
  fileMentions?: 'after' | 'before' | 'off';
  /** `prepare` replaces each credential found in a snapshot with `[REDACTED:<kind>]` (default false: dsh's bytes). */
  redactSecrets?: boolean;
}

/** How to start the server. */
export interface DshSessionClientOptions {
  /**
   * The server. Default: this package's own bin (`dsh-session-ls/bin/dsh-session-ls.js`), run with this
   * Node (`process.execPath`), whatever is on PATH. Else a command found on PATH (e.g. `dsh-session-ls`)
   * or a path to one; a path ending in `.js`, `.cjs` or `.mjs` is run with this Node.
   */
  server?: string;
  /** More command-line arguments after `--stdio`. */
  args?: string[];
  /** Sent as `initializationOptions` and answered for `workspace/configuration`. */
  settings?: DshSessionSettings;
  /** A workspace folder (a directory path): sessions started there rank first, documents open there. */
  workspaceFolder?: string;
  /** The server's working directory (default: this process's). */
  cwd?: string;
  /** The server's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** A zero-based position in a document, `character` in UTF-16 code units (LSP's default). */
export interface TextPosition {
  line: number;
  character: number;
}

/** A range of a document, its end exclusive. */
export interface TextRange {
  start: TextPosition;
  end: TextPosition;
}

/** An edit of a document. */
export interface SessionTextEdit {
  range: TextRange;
  newText: string;
}

/** A diagnostic the server publishes (`source` `dsh-session`, `code` the `SESSION_REFERENCE_*` code dsh would raise). */
export interface SessionDiagnostic {
  range: TextRange;
  /** 1 Error, 2 Warning, 3 Information, 4 Hint. */
  severity?: 1 | 2 | 3 | 4;
  code?: string | number;
  source?: string;
  message: string;
  /** What the code actions need to fix it. */
  data?: unknown;
  [key: string]: unknown;
}

/** What `hover` answers over a mention. */
export interface SessionHover {
  contents: { kind: 'markdown' | 'plaintext'; value: string };
  /** The mention's range. */
  range?: TextRange;
}

/** A command, as code actions and completion items carry one. */
export interface SessionCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}

/** A code action the server offers (update a stale label, label a bare URI, remove a broken mention, preview). */
export interface SessionCodeAction {
  title: string;
  /** e.g. `quickfix` or `refactor.rewrite`. */
  kind?: string;
  /** The diagnostics (of those given to `codeActions`) it fixes. */
  diagnostics?: SessionDiagnostic[];
  isPreferred?: boolean;
  /** The edit to apply, by document URI. */
  edit?: { changes?: Record<string, SessionTextEdit[]> };
  command?: SessionCommand;
  [key: string]: unknown;
}

/** The parts of an LSP completion item this server fills in. */
export interface SessionCompletionItem {
  label: string;
  kind?: number;
  detail?: string;
  labelDetails?: { detail?: string; description?: string };
  documentation?: string | { kind: string; value: string };
  filterText?: string;
  sortText?: string;
  insertText?: string;
  textEdit?: SessionTextEdit;
  /** `{ kind: 'dsh-session', sessionId }` for a session, another `kind` for a workspace file. */
  data?: { kind?: string; sessionId?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** What `completeAt` answers: the completion list (sessions, and workspace files as `@path`). */
export interface SessionCompletionList {
  isIncomplete: boolean;
  items: SessionCompletionItem[];
}

/** Options of one request. */
export interface RequestOptions {
  /** Aborting sends `$/cancelRequest`; the request then rejects with SESSION_REFERENCE_CANCELLED. */
  signal?: AbortSignal;
}

/** Options of `candidates`. */
export interface CandidatesOptions extends RequestOptions {
  /** At most this many (default: the `candidateLimit` setting, 50). */
  limit?: number;
  /** The session the message is for: its own cwd ranks first, and it is never offered. */
  target?: SessionReferenceTarget;
}

/** Options of `prepare`. */
export interface PrepareOptions extends RequestOptions {
  target?: SessionReferenceTarget;
  /** Limits for this call only. */
  config?: Pick<DshSessionSettings, 'maxReferences' | 'maxReferenceBytes' | 'candidateLimit'>;
}

/** Options of `completeAt`, `diagnostics` and `hover`: the document the text is opened as. */
export interface DocumentRequestOptions extends RequestOptions {
  /** The document's URI (default: a new `file:` URI in the workspace folder, else the server's cwd). */
  uri?: string;
  /** Default `markdown`. */
  languageId?: string;
}

/** Options of `completeAt` (the name it had before the other document requests came). */
export type CompleteAtOptions = DocumentRequestOptions;

/** Options of `codeActions`. */
export interface CodeActionsOptions extends DocumentRequestOptions {
  /** The diagnostics the editor shows in the range (e.g. from `diagnostics`), so the actions can name those they fix. */
  diagnostics?: SessionDiagnostic[];
  /** Only actions of these kinds (and their sub-kinds), e.g. `['quickfix']`. */
  only?: string[];
}

/** Options of `transcript`. */
export interface TranscriptOptions extends RequestOptions {
  /** Another agent's session (when that agent is in the `agents` setting); absent for a dsh session. */
  agent?: ForeignAgent;
}
