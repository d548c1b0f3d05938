import type { SessionReferenceConfig, SessionReferenceTarget } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { SessionReferenceResolver, SessionStore } from '../resolver';
import type { SessionSettings } from '../settings/settings';
import type { TargetRequest } from '../settings/target';
import type { StoreStatus } from '../store/service';

/** Everything a language feature may use; features never see the connection. */
export interface SessionServices {
  /**
   * The sessions of the current root: waits while the store is being opened, and its listing waits for
   * the first index unless these services answer from what is indexed so far (`SessionWorkspace.view`).
   */
  readonly sessions: SessionStore;
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
