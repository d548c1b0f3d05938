/** The language service over dsh sessions: every feature behind one factory, protocol-free (see languageService.ts). */
export { createSessionLanguageService, type CommandOptions, type CompletionOptions, type SessionLanguageService } from './languageService';
export { UnknownCommandError, isUnknownCommandError } from './errors';
export type {
  ListingView,
  SessionLogs,
  SessionServiceViews,
  SessionServices,
  SessionSettings,
  TargetRequest,
  WorkspaceFileSystem,
} from './services';
export type { ListingOutcome, ListingRequest, WorkspaceEntry, WorkspaceLister } from './workspaceFiles';
