import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  type CancellationToken,
  type ClientCapabilities,
  type Connection,
  type ServerCapabilities,
  type TextDocuments,
} from 'vscode-languageserver/node';
import type { SessionLanguageService } from '../features';
import type { SessionKey } from '../resolver';
import type { SessionStoreService, Subscription } from '../store/service';
import { DiagnosticsPublisher } from './diagnosticsPublisher';
import { COMPLETION_FIRST_INDEX_WAIT_MS, CompletionFirstIndexWaits, FirstIndexWaitProgress, progressToken, type FirstIndex } from './firstIndex';
import {
  CODE_ACTION_PARAMS,
  COMPLETION_ITEM,
  COMPLETION_PARAMS,
  DOCUMENT_LINK_PARAMS,
  EXECUTE_COMMAND_PARAMS,
  HOVER_PARAMS,
  onCheckedRequest,
} from './params';
import { answerRequest } from './requestAnswer';

/** The capabilities the routes add to the `initialize` result (besides text document sync and workspace folders). */
export function sessionRouteCapabilities(service: Pick<SessionLanguageService, 'commands'>): ServerCapabilities {
  return {
    completionProvider: {
      // `/` continues a file mention inside a folder (clients that do not re-trigger on their own).
      triggerCharacters: ['@', '/'],
      resolveProvider: true,
      completionItem: { labelDetailsSupport: true },
    },
    executeCommandProvider: { commands: [...service.commands] },
    hoverProvider: true,
    codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.RefactorRewrite] },
    documentLinkProvider: { resolveProvider: false },
  };
}

/** What the routes connect. */
export interface SessionRoutesOptions {
  /** The language service every request is forwarded to. */
  service: SessionLanguageService;
  /** The store currently open, if any (replaced when the sessions root changes): its changes re-check documents. */
  currentStore(): SessionStoreService | undefined;
  /**
   * The first index: completion waits for it briefly; hover, document links, diagnostics and commands
   * wait for it (the latter with progress on the request's token).
   */
  firstIndex: FirstIndex;
  /** The client's capabilities (empty before `initialize`). */
  capabilities(): ClientCapabilities;
  /** The server log (stderr). */
  log: (message: string) => void;
  /** How long completion waits for the first index (default {@link COMPLETION_FIRST_INDEX_WAIT_MS}). */
  completionFirstIndexWaitMs?: number;
  /** Delay after an edit before its diagnostics are recomputed. */
  diagnosticsDebounceMs?: number;
}

/** The handle the server keeps on the routes. */
export interface SessionRoutes {
  /** Re-check every open document; call when the store was replaced or the settings changed. */
  refresh(): void;
  /** Stop publishing and drop the service's caches (shutdown). */
  dispose(): void;
}

/**
 * The one place LSP meets the language service: every feature request (completion and resolve, hover,
 * code actions, document links, commands) and the pushed diagnostics. `wire` carries positions in the
 * negotiated encoding (`withPositionEncoding`); `connection` is the raw one, for requests without positions
 * to convert. Diagnostics follow edits (debounced), store changes and the end of indexing; each store change
 * also clears the service's surface cache, and a change of some sessions' content forgets theirs. Lifecycle (initialize, settings, status) stays in `server.ts`.
 */
export function registerSessionRoutes(
  wire: Connection,
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  options: SessionRoutesOptions,
): SessionRoutes {
  const routes: Routes = {
    wire,
    connection,
    documents,
    options,
    answer: (token, work) => answerRequest(token, work, options.log),
    firstIndexProgress: (params) => {
      const workDoneToken = progressToken(params);
      return workDoneToken === undefined
        ? undefined
        : new FirstIndexWaitProgress(options.firstIndex, () => connection.window.attachWorkDoneProgress(workDoneToken));
    },
  };
  const diagnostics = publishDiagnostics(routes);
  registerCompletionRoutes(routes);
  registerDocumentRoutes(routes);
  registerCommandRoute(routes);
  return diagnostics;
}

/** What every route group is given. */
interface Routes {
  wire: Connection;
  connection: Connection;
  documents: TextDocuments<TextDocument>;
  options: SessionRoutesOptions;
  /** Answer a request: cancellable work, its failure mapped to a JSON-RPC error (`answerRequest`). */
  answer: <T>(token: CancellationToken, work: (signal: AbortSignal) => Promise<T> | T) => Promise<T>;
  /** Work-done progress for a wait for the first index, when `params` carry a `workDoneToken`. */
  firstIndexProgress: (params: unknown) => FirstIndexWaitProgress | undefined;
}

/**
 * Diagnostics pushed for every open document: checked at once when it opens, after a pause when it is
 * edited, again when the store changes or ends its first index; never from a partial first index.
 */
function publishDiagnostics({ wire, documents, options }: Routes): SessionRoutes {
  const { service } = options;
  const publisher = new DiagnosticsPublisher({
    document: (uri) => documents.get(uri),
    all: () => documents.all(),
    compute: async (document, signal) => {
      // Also here, so a replaced store is followed even before the server calls refresh().
      store.follow();
      // Published from the first index on, never from a partial one (a newer run cancels this wait).
      if (!options.firstIndex.indexed()) {
        await options.firstIndex.whenIndexed(signal);
        store.follow();
      }
      return service.diagnostics(document, signal);
    },
    publish: (params) => void wire.sendDiagnostics(params),
    log: options.log,
    ...(options.diagnosticsDebounceMs === undefined ? {} : { debounceMs: options.diagnosticsDebounceMs }),
  });
  const store = new CurrentStoreChanges(
    options,
    () => {
      service.storeChanged();
      publisher.scheduleAll();
    },
    (sessions) => {
      service.sessionsChanged(sessions);
      for (const document of documents.all()) if (service.mentionsAnyOf(document, sessions)) publisher.schedule(document.uri);
    },
  );

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

  return {
    refresh() {
      store.follow();
      service.storeChanged();
      publisher.scheduleAll();
    },
    dispose() {
      store.dispose();
      publisher.dispose();
      service.dispose();
    },
  };
}

/**
 * Follows the current store's changes (its listing, and sessions whose content changed with no row
 * changing: an append that brings credentials), and its end of indexing (unknown sessions are only
 * reported after it).
 */
class CurrentStoreChanges {
  private watchedStore: SessionStoreService | undefined;
  private subscriptions: Subscription[] = [];
  private wasIndexing = false;

  constructor(
    private readonly options: SessionRoutesOptions,
    private readonly changed: () => void,
    private readonly contentChanged: (sessions: readonly SessionKey[]) => void,
  ) {}

  /** Follow the store open now, if it is not the one followed (clearing the service's caches when it was replaced). */
  follow(): void {
    const store = this.options.currentStore();
    if (store === this.watchedStore) return;
    this.dispose();
    this.watchedStore = store;
    this.options.service.storeChanged();
    if (store === undefined) return;
    this.wasIndexing = store.status().indexing;
    this.subscriptions = [
      store.onDidChange(this.changed),
      store.onDidChangeContent(this.contentChanged),
      store.onStatus((status) => {
        if (this.wasIndexing && !status.indexing) this.changed();
        this.wasIndexing = status.indexing;
      }),
    ];
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.subscriptions = [];
  }
}

/** `textDocument/completion` (waits briefly for the first index) and `completionItem/resolve`. */
function registerCompletionRoutes({ wire, connection, documents, options, answer }: Routes): void {
  const { service } = options;
  const completionWaits = new CompletionFirstIndexWaits(options.firstIndex, options.completionFirstIndexWaitMs ?? COMPLETION_FIRST_INDEX_WAIT_MS);

  onCheckedRequest(wire, 'textDocument/completion', COMPLETION_PARAMS, async (params, token) => {
    const started = performance.now();
    try {
      return await answer(token, async (signal) => {
        const document = documents.get(params.textDocument.uri);
        if (document === undefined) return { isIncomplete: false, items: [] };
        // During the first index: wait for it up to a short bound, then answer what is indexed, incomplete.
        if (await completionWaits.wait(document.uri, signal)) return service.completion(document, params.position, { signal });
        const list = await service.completion(document, params.position, { partial: true, signal });
        return { ...list, isIncomplete: true };
      });
    } finally {
      // The server's own time per keystroke; the tracer sends nothing unless the client set trace on. Sent
      // before the answer, so a client pairs it with the request it has just made.
      connection.tracer.log(`textDocument/completion took ${(performance.now() - started).toFixed(3)} ms`);
    }
  });

  onCheckedRequest(connection, 'completionItem/resolve', COMPLETION_ITEM, (item, token) =>
    answer(token, (signal) =>
      service.resolveCompletionItem(item, options.capabilities().textDocument?.completion?.completionItem?.documentationFormat, signal),
    ),
  );
}

/** Hover, code actions and document links of an open document. */
function registerDocumentRoutes(routes: Routes): void {
  const { wire, documents, options, answer } = routes;
  const { service } = options;

  onCheckedRequest(wire, 'textDocument/hover', HOVER_PARAMS, (params, token) =>
    answer(token, async (signal) => {
      if (documents.get(params.textDocument.uri) === undefined) return null;
      await firstIndexBuilt(routes, params, signal);
      // The document as it is now: it may have changed while the request waited.
      const document = documents.get(params.textDocument.uri);
      return document === undefined ? null : service.hover(document, params.position, signal);
    }),
  );

  onCheckedRequest(wire, 'textDocument/codeAction', CODE_ACTION_PARAMS, (params, token) =>
    answer(token, async (signal) => {
      const document = documents.get(params.textDocument.uri);
      return document === undefined ? [] : service.codeActions(document, params.range, params.context, signal);
    }),
  );

  onCheckedRequest(wire, 'textDocument/documentLink', DOCUMENT_LINK_PARAMS, (params, token) =>
    answer(token, async (signal) => {
      if (documents.get(params.textDocument.uri) === undefined) return [];
      await firstIndexBuilt(routes, params, signal);
      const document = documents.get(params.textDocument.uri);
      return document === undefined ? [] : service.documentLinks(document);
    }),
  );
}

/**
 * Wait for the first index, as commands do (lsp-contract.md, First answers): a hover or a link made before
 * it would name a session by its id, or miss the `agents` setting the store opens with. Cancellable; with
 * work-done progress when `params` carry a `workDoneToken`.
 */
async function firstIndexBuilt({ options, firstIndexProgress }: Routes, params: unknown, signal: AbortSignal): Promise<void> {
  if (options.firstIndex.indexed()) return;
  const progress = firstIndexProgress(params);
  try {
    progress?.begin();
    await options.firstIndex.whenIndexed(signal);
  } finally {
    progress?.done();
  }
}

/** `workspace/executeCommand`: a command answering from the listing waits for the first index, with progress on the client's token. */
function registerCommandRoute({ connection, options, answer, firstIndexProgress }: Routes): void {
  onCheckedRequest(connection, 'workspace/executeCommand', EXECUTE_COMMAND_PARAMS, (params, token) =>
    answer(token, async (signal) => {
      const progress = firstIndexProgress(params);
      try {
        return await options.service.executeCommand(params.command, params.arguments, { signal, onWait: () => progress?.begin(), toJson: true });
      } finally {
        progress?.done();
      }
    }),
  );
}
