import type { ForeignAgent, SessionCommandName, SessionCommandResult } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type {
  CodeAction,
  CodeActionContext,
  CompletionItem,
  CompletionList,
  Diagnostic,
  DocumentLink,
  Hover,
  Position,
  Range,
} from 'vscode-languageserver-types';
import type { SessionKey, SessionSurface } from '../resolver';
import { provideCodeActions } from './codeActions';
import { EXECUTABLE_COMMANDS, executeSessionCommand } from './commands';
import { computeDiagnostics } from './diagnostics';
import { provideDocumentLinks } from './documentLinks';
import { provideMentionCompletion } from './fileMentions';
import { foreignAgentsEnabled } from './foreignMentions';
import { findDocumentMentions, sessionKey } from './mentionAnalysis';
import { provideMentionHover } from './hover';
import { previewKindFor, resolveSessionCompletionItem } from './sessionPreview';
import type { SessionServiceViews, SessionServices } from './services';
import { SessionSurfaceCache } from './surfaceCache';
import { WorkspaceFiles } from './workspaceFiles';

/** Options of one completion request. */
export interface CompletionOptions {
  /** Answer from what is indexed so far, without waiting for the first index (the list is then incomplete). */
  partial?: boolean;
  signal?: AbortSignal;
}

/** Options of one command. */
export interface CommandOptions {
  signal?: AbortSignal;
  /** Called when the command must wait for the first index (for work-done progress). */
  onWait?(): void;
  /**
   * The answer goes straight to a JSON writer (the LSP wire): it may then hold rows that make their
   * JSON as they are written (the same JSON), so a long answer is never whole in memory.
   */
  toJson?: boolean;
}

/**
 * Every language feature over dsh sessions, with the caches they share (session surfaces, workspace
 * listings). Protocol-free: positions are UTF-16, errors are `SessionReferenceError` or
 * `UnknownCommandError`, and a host (the LSP wiring, the CLI, a test) forwards to it.
 */
export interface SessionLanguageService {
  /** Completion at an `@` token: sessions and workspace files, in the order of the `fileMentions` setting. */
  completion(document: TextDocument, position: Position, options?: CompletionOptions): Promise<CompletionList>;
  /** A session item gains its preview in the first of `documentationFormat` we write (Markdown by default). */
  resolveCompletionItem(item: CompletionItem, documentationFormat?: readonly string[], signal?: AbortSignal): Promise<CompletionItem>;
  /** The session under the cursor and what dsh will do with it. */
  hover(document: TextDocument, position: Position, signal?: AbortSignal): Promise<Hover | null>;
  /** Fixes and rewrites for the mentions in `range`, and the preview of the message. */
  codeActions(document: TextDocument, range: Range, context: CodeActionContext, signal?: AbortSignal): Promise<CodeAction[]>;
  /** Each decodable mention, linked to its session's URI. */
  documentLinks(document: TextDocument): DocumentLink[];
  /** What dsh would say about each mention, from what is indexed so far. */
  diagnostics(document: TextDocument, signal?: AbortSignal): Promise<Diagnostic[]>;
  /** The commands {@link executeCommand} answers (one table, `SessionCommandMap`'s names). */
  readonly commands: readonly SessionCommandName[];
  /** Run a command with its `arguments` as received; its listing answers wait for the first index. */
  executeCommand<C extends SessionCommandName>(command: C, args: unknown, options?: CommandOptions): Promise<SessionCommandResult<C>>;
  executeCommand(command: string, args: unknown, options?: CommandOptions): Promise<unknown>;
  /** The store changed (sessions appended, renamed, a new root): forget cached session surfaces. */
  storeChanged(): void;
  /** These sessions' content changed (re-read with new bytes, row changed or not): forget what was read of them. */
  sessionsChanged(sessions: readonly SessionKey[]): void;
  /** Whether the document mentions any of these sessions (its diagnostics may then have changed with them). */
  mentionsAnyOf(document: TextDocument, sessions: readonly SessionKey[]): boolean;
  /** Drop every cache. */
  dispose(): void;
}

/**
 * The language service over `services`: each request takes its view of them (hover, code actions, links
 * and diagnostics answer from what is indexed so far — the LSP wiring has them wait for the first index
 * first; commands and full completion wait for it here). Its I/O is theirs alone: sessions and whole logs through the store interfaces, files through
 * `workspaceFiles`.
 */
export function createSessionLanguageService(services: SessionServiceViews): SessionLanguageService {
  const partial: SessionServices = services.view({ partial: true });
  const waiting: SessionServices = services.view({});
  const surfaces = new SessionSurfaceCache(() => partial.sessions);
  // Every agent's surfaces are cached: any store's change clears them, a session's content change forgets it.
  const readSurface = (sessionId: string, signal?: AbortSignal, agent?: ForeignAgent): Promise<SessionSurface> => surfaces.read(sessionId, signal, agent);
  const listings = new WorkspaceFiles({ lister: (request, signal) => partial.workspaceFiles.list(request, signal) });

  function executeCommand(command: string, args: unknown, options: CommandOptions = {}): Promise<unknown> {
    const view = options.onWait === undefined ? waiting : services.view({ onWait: () => options.onWait?.() });
    return executeSessionCommand(command, args, view, options.signal, options.toJson);
  }

  return {
    completion: (document, position, options = {}) =>
      provideMentionCompletion(document, position, options.partial === true ? partial : waiting, options.signal, listings),
    resolveCompletionItem: (item, documentationFormat, signal) => resolveSessionCompletionItem(item, waiting, signal, previewKindFor(documentationFormat)),
    hover: (document, position, signal) => provideMentionHover(document, position, partial, signal, readSurface),
    codeActions: (document, range, context, signal) => provideCodeActions(document, range, context, partial, signal, readSurface),
    documentLinks: (document) => provideDocumentLinks(document, { foreign: foreignAgentsEnabled(partial) }),
    diagnostics: (document, signal) => computeDiagnostics(document, partial, signal, readSurface),
    commands: EXECUTABLE_COMMANDS,
    executeCommand: executeCommand as SessionLanguageService['executeCommand'],
    storeChanged: () => surfaces.clear(),
    sessionsChanged: (sessions) => surfaces.forget(sessions),
    mentionsAnyOf: (document, sessions) => {
      const keys = new Set(sessions.map((session) => sessionKey(session.id, session.agent)));
      const mentions = findDocumentMentions(document.getText(), { foreign: foreignAgentsEnabled(partial) });
      return mentions.some((mention) => mention.sessionId !== undefined && keys.has(sessionKey(mention.sessionId, mention.agent)));
    },
    dispose: () => surfaces.clear(),
  };
}
