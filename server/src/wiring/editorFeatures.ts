import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  type Connection,
  type ServerCapabilities,
  type TextDocuments,
} from 'vscode-languageserver/node';
import { provideCodeActions } from '../features/codeActions';
import { computeDiagnostics } from '../features/diagnostics';
import { provideDocumentLinks } from '../features/documentLinks';
import { foreignAgentsEnabled } from '../features/foreignMentions';
import { provideMentionHover } from '../features/hover';
import type { SessionServices } from '../features/services';
import { SessionSurfaceCache } from '../features/surfaceCache';
import type { SessionWorkspace } from '../settings/sessionWorkspace';
import type { SessionStoreService, Subscription } from '../store/service';
import { DiagnosticsPublisher } from './diagnosticsPublisher';
import { CODE_ACTION_PARAMS, DOCUMENT_LINK_PARAMS, HOVER_PARAMS, onCheckedRequest } from './params';
import { answerRequest } from './requestAnswer';

/** The services the editor features use: the feature services plus the open store, whose changes re-check documents. */
export interface EditorFeatureServices extends SessionServices {
  /** The store currently open, if any (it is replaced when the sessions root changes). */
  currentStore(): SessionStoreService | undefined;
}

/**
 * The editor features' services over a workspace: they answer from what is indexed so far (diagnostics hold
 * back unknown sessions until the first index is built, then re-check), never waiting for it.
 */
export function editorFeatureServices(workspace: SessionWorkspace): EditorFeatureServices {
  return { ...workspace.view({ partial: true }), currentStore: () => workspace.currentStore() };
}

/** The capabilities the editor features add to the `initialize` result (besides the `/` completion trigger and the commands). */
export const EDITOR_FEATURE_CAPABILITIES: ServerCapabilities = {
  hoverProvider: true,
  codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.RefactorRewrite] },
  documentLinkProvider: { resolveProvider: false },
};

/** The handle the server keeps on the editor features. */
export interface EditorFeatures {
  /** Re-check every open document; call when the store was replaced or the settings changed. */
  refresh(): void;
  /** Stop publishing (shutdown). */
  dispose(): void;
}

/** Options of {@link registerEditorFeatures}. */
export interface EditorFeatureOptions {
  /** The server log (stderr). */
  log: (message: string) => void;
  /** Delay after an edit before its diagnostics are recomputed. */
  diagnosticsDebounceMs?: number;
}

/**
 * Register hover, code actions, document links and pushed diagnostics on `connection` for the documents
 * `documents` tracks. Diagnostics follow edits (debounced), store changes and the end of indexing; session
 * surfaces are cached between runs until the store reports a change. Commands and completion stay with the
 * server's own handlers (see `features/editorCommands.ts` and `provideMentionCompletion`).
 */
export function registerEditorFeatures(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  services: EditorFeatureServices,
  options: EditorFeatureOptions,
): EditorFeatures {
  const surfaces = new SessionSurfaceCache(() => services.sessions);
  // Another agent's surface is read afresh: the cache is cleared on dsh's store changes only.
  const readSurface = (sessionId: string, signal?: AbortSignal, agent?: ForeignAgent) =>
    agent === undefined ? surfaces.read(sessionId, signal) : services.sessions.readSurface(sessionId, signal, agent);
  const publisher = new DiagnosticsPublisher({
    document: (uri) => documents.get(uri),
    all: () => documents.all(),
    compute: (document, signal) => {
      // Also here, so a replaced store is followed even before the server calls refresh().
      watchCurrentStore();
      return computeDiagnostics(document, services, signal, readSurface);
    },
    publish: (params) => void connection.sendDiagnostics(params),
    log: options.log,
    ...(options.diagnosticsDebounceMs === undefined ? {} : { debounceMs: options.diagnosticsDebounceMs }),
  });

  let watchedStore: SessionStoreService | undefined;
  let storeSubscriptions: Subscription[] = [];
  let wasIndexing = false;
  const storeChanged = (): void => {
    surfaces.clear();
    publisher.scheduleAll();
  };
  /** Follow the current store's changes, and its end of indexing (unknown sessions are only reported after it). */
  function watchCurrentStore(): void {
    const store = services.currentStore();
    if (store === watchedStore) return;
    for (const subscription of storeSubscriptions) subscription.dispose();
    watchedStore = store;
    storeSubscriptions = [];
    surfaces.clear();
    if (store === undefined) return;
    wasIndexing = store.status().indexing;
    storeSubscriptions = [
      store.onDidChange(storeChanged),
      store.onStatus((status) => {
        if (wasIndexing && !status.indexing) storeChanged();
        wasIndexing = status.indexing;
      }),
    ];
  }

  // Opening fires a content change too: a document seen for the first time is checked at once, edits after a pause.
  const seen = new Set<string>();
  documents.onDidChangeContent((event) => {
    const uri = event.document.uri;
    publisher.schedule(uri, !seen.has(uri));
    seen.add(uri);
  });
  documents.onDidClose((event) => {
    seen.delete(event.document.uri);
    publisher.closed(event.document.uri);
  });

  onCheckedRequest(connection, 'textDocument/hover', HOVER_PARAMS, (params, token) =>
    answerRequest(
      token,
      async (signal) => {
        const document = documents.get(params.textDocument.uri);
        return document === undefined ? null : provideMentionHover(document, params.position, services, signal, readSurface);
      },
      options.log,
    ),
  );

  onCheckedRequest(connection, 'textDocument/codeAction', CODE_ACTION_PARAMS, (params, token) =>
    answerRequest(
      token,
      async (signal) => {
        const document = documents.get(params.textDocument.uri);
        return document === undefined ? [] : provideCodeActions(document, params.range, params.context, services, signal, readSurface);
      },
      options.log,
    ),
  );

  onCheckedRequest(connection, 'textDocument/documentLink', DOCUMENT_LINK_PARAMS, (params, token) =>
    answerRequest(
      token,
      () => {
        const document = documents.get(params.textDocument.uri);
        return document === undefined ? [] : provideDocumentLinks(document, { foreign: foreignAgentsEnabled(services) });
      },
      options.log,
    ),
  );

  return {
    refresh() {
      watchCurrentStore();
      surfaces.clear();
      publisher.scheduleAll();
    },
    dispose() {
      for (const subscription of storeSubscriptions) subscription.dispose();
      storeSubscriptions = [];
      publisher.dispose();
    },
  };
}
