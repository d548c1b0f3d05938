import { SESSION_STATUS_NOTIFICATION, SETTINGS_SECTION, describeSessionsRootProblem, type SessionStoreStatus, type SessionsRootProblem } from '@dsh-session-ls/shared';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  DidChangeConfigurationNotification,
  MessageType,
  ShowMessageNotification,
  TextDocumentSyncKind,
  TextDocuments,
  type CancellationToken,
  type ClientCapabilities,
  type Connection,
  type InitializeResult,
} from 'vscode-languageserver/node';
import { EXECUTABLE_COMMANDS, executeSessionCommand } from './features/commands';
import { EDITOR_COMMANDS, executeEditorCommand } from './features/editorCommands';
import { provideMentionCompletion } from './features/fileMentions';
import { previewKindFor, resolveSessionCompletionItem } from './features/sessionPreview';
import { SessionWorkspace, type SessionWorkspaceOptions } from './settings/sessionWorkspace';
import { describeSettingProblem, type SettingKey, type SettingProblem } from './settings/settings';
import type { SessionStoreService, Subscription } from './store/service';
import { EDITOR_FEATURE_CAPABILITIES, editorFeatureServices, registerEditorFeatures, type EditorFeatures } from './wiring/editorFeatures';
import {
  COMPLETION_ITEM,
  COMPLETION_PARAMS,
  EXECUTE_COMMAND_PARAMS,
  WORKSPACE_FOLDERS_CHANGE,
  checkedDocumentSync,
  checkedNotification,
  onCheckedRequest,
} from './wiring/params';
import { negotiatePositionEncoding, withPositionEncoding } from './wiring/positionEncoding';
import {
  COMPLETION_FIRST_INDEX_WAIT_MS,
  CompletionFirstIndexWaits,
  FirstIndexWaitProgress,
  indexingProgress,
  progressToken,
  type FirstIndex,
} from './wiring/firstIndex';
import { answerRequest } from './wiring/requestAnswer';

/** What the server needs from its process. */
export interface SessionLanguageServerOptions {
  /** Open the store of a sessions root. */
  openStore: (root: string) => SessionStoreService;
  /** Open another agent's store (default: without a persistent cache). */
  openForeignStore?: SessionWorkspaceOptions['openForeignStore'];
  /** `$DSH_HOME/sessions`, else `~/.dsh/sessions`. */
  defaultSessionsRoot: (env: NodeJS.ProcessEnv) => string;
  env: NodeJS.ProcessEnv;
  /** Settings from the command line (`--sessions-root`). */
  commandLine?: Partial<Record<SettingKey, unknown>>;
  /** The server log (stderr; never stdout, which may carry the protocol). */
  log: (message: string) => void;
  version: string;
  /** How long to wait for the first `workspace/configuration` answer before opening a store anyway. */
  configurationTimeoutMs?: number;
  /** How long completion waits for the first index (default {@link COMPLETION_FIRST_INDEX_WAIT_MS}). */
  completionFirstIndexWaitMs?: number;
}

/** The server name reported in `initialize`. */
export const SERVER_NAME = 'dsh-session-ls';

/**
 * Wire the session features to an LSP connection and start listening. Every handler forwards to a
 * feature; every failure becomes a JSON-RPC error and the server goes on.
 */
export function startSessionLanguageServer(connection: Connection, options: SessionLanguageServerOptions): { dispose(): void } {
  const documents = new TextDocuments(TextDocument);
  // Every position on the wire goes through `wire` (UTF-8 clients); the features see UTF-16.
  const wire = withPositionEncoding(connection, documents);
  let capabilities: ClientCapabilities = {};
  let initialized = false;
  let folderUris: string[] = [];
  let rootUri: string | null | undefined;
  let rootPath: string | null | undefined;
  const unreportedProblems: SettingProblem[] = [];
  let endIndexingProgress: (() => void) | undefined;
  const storesWithProgress = new WeakSet<SessionStoreService>();
  let statusSubscription: Subscription | undefined;
  let reportedStore: SessionStoreService | undefined;
  /** The root problem last shown to the user (see warnAboutRoot). */
  let warnedRoot: string | undefined;

  const workspace = new SessionWorkspace({
    openStore: options.openStore,
    ...(options.openForeignStore === undefined ? {} : { openForeignStore: options.openForeignStore }),
    defaultSessionsRoot: options.defaultSessionsRoot,
    env: options.env,
    commandLine: options.commandLine,
    document: (uri) => documents.get(uri),
    onStoreOpened: (store) => watchStore(store),
    log: options.log,
  });
  // Hover, code actions, document links and pushed diagnostics (issue 5's editor features), over what is indexed so far.
  const editor: EditorFeatures = registerEditorFeatures(wire, documents, editorFeatureServices(workspace), { log: options.log });
  // Completion once its wait for the first index is over.
  const partial = workspace.view({ partial: true });
  const firstIndex: FirstIndex = {
    indexed: () => workspace.indexed(),
    whenIndexed: (signal) => workspace.whenIndexed(signal),
    storeStatus: () => workspace.storeStatus(),
    onStatus: (listener) => workspace.currentStore()?.onStatus(listener),
  };
  const completionWaits = new CompletionFirstIndexWaits(firstIndex, options.completionFirstIndexWaitMs ?? COMPLETION_FIRST_INDEX_WAIT_MS);

  const supportsConfiguration = (): boolean => capabilities.workspace?.configuration === true;

  function report(problems: readonly SettingProblem[]): void {
    for (const problem of problems) {
      const text = describeSettingProblem(problem);
      options.log(text);
      // The notification, not showErrorMessage (a showMessageRequest that waits for an answer).
      if (initialized) void connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Error, message: text });
      else unreportedProblems.push(problem);
    }
  }

  function logStore(message: string): void {
    options.log(message);
    connection.console.warn(message);
  }

  function watchStore(store: SessionStoreService): void {
    endIndexingProgress?.();
    endIndexingProgress = undefined;
    options.log(`sessions root: ${store.root}`);
    store.onProblem((problem) => logStore(`dsh session store: skipped ${problem.path}: ${problem.reason}`));
    // The store throttles onStatus; a replaced store must not report over its successor.
    statusSubscription?.dispose();
    statusSubscription = store.onStatus(() => sendStatus(store));
    editor.refresh();
    if (initialized) {
      sendStatus(store);
      void showIndexingProgress(store);
    }
  }

  /**
   * A root that is there but cannot be read (not a directory, no access) is worth a warning, once per root
   * and problem until it is fixed; a missing root is not (it is picked up when it appears).
   */
  function warnAboutRoot(root: string, problem: SessionsRootProblem | undefined): void {
    const key = problem === undefined || problem === 'missing' ? undefined : `${problem}\0${root}`;
    if (key !== undefined && key !== warnedRoot) {
      const message = describeSessionsRootProblem(root, problem!);
      options.log(message);
      try {
        connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Warning, message }).catch(() => undefined);
      } catch {
        // The connection is closing: nobody is left to tell.
      }
    }
    warnedRoot = key;
  }

  /** `dshSession/status` for the current store; nothing before `initialized` (a store may open during `initialize`). */
  function sendStatus(store: SessionStoreService): void {
    if (!initialized || store !== workspace.currentStore()) return;
    const { indexed, indexing, discovered, rootProblem } = store.status();
    const status: SessionStoreStatus = { root: store.root, indexed, indexing, discovered, ...(rootProblem === undefined ? {} : { rootProblem }) };
    reportedStore = store;
    warnAboutRoot(store.root, rootProblem);
    try {
      connection.sendNotification(SESSION_STATUS_NOTIFICATION, status).catch(() => undefined);
    } catch {
      // The connection is closing: nobody is left to tell.
    }
  }

  /** Work-done progress while a store is first indexed (a no-op for clients without progress support). */
  async function showIndexingProgress(store: SessionStoreService): Promise<void> {
    if (storesWithProgress.has(store) || !store.status().indexing) return;
    storesWithProgress.add(store);
    const stop = new AbortController();
    endIndexingProgress = () => stop.abort();
    let progress: Awaited<ReturnType<typeof connection.window.createWorkDoneProgress>>;
    try {
      progress = await connection.window.createWorkDoneProgress();
    } catch (error) {
      options.log(`no indexing progress: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    const describe = (): [number | undefined, string] => {
      const { percentage, message } = indexingProgress(store.status());
      return [percentage, message];
    };
    const [percentage, message] = describe();
    progress.begin('Indexing dsh sessions', percentage, message, false);
    const subscription = store.onStatus(() => {
      const [nextPercentage, nextMessage] = describe();
      if (nextPercentage === undefined) progress.report(nextMessage);
      else progress.report(nextPercentage, nextMessage);
    });
    try {
      await store.whenIndexed(stop.signal);
    } catch {
      // The store was replaced or closed before it finished.
    } finally {
      subscription.dispose();
      progress.done();
    }
  }

  function applySettingsChange(problems: readonly SettingProblem[]): void {
    report(problems);
    if (!initialized) return;
    // A new root refreshes the editor features as it opens; other settings (target, limits) change diagnostics too.
    if (workspace.openStoreForSettings() === undefined) editor.refresh();
  }

  async function pullSection(): Promise<void> {
    if (!supportsConfiguration()) return;
    try {
      const section: unknown = await connection.workspace.getConfiguration(SETTINGS_SECTION);
      applySettingsChange(workspace.setSection(section));
    } catch (error) {
      options.log(`could not read the ${SETTINGS_SECTION} settings: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  const answer = <T>(token: CancellationToken, work: (signal: AbortSignal) => Promise<T> | T): Promise<T> =>
    answerRequest(token, work, options.log);

  connection.onInitialize((params): InitializeResult => {
    capabilities = params.capabilities ?? {};
    wire.positionEncoding = negotiatePositionEncoding(capabilities);
    folderUris = (params.workspaceFolders ?? []).map((folder) => folder.uri);
    rootUri = params.rootUri;
    rootPath = params.rootPath;
    report(workspace.setWorkspace(folderUris, rootUri, rootPath));
    report(workspace.setInitializationOptions(params.initializationOptions));
    // Opening the default store only to replace it once the settings arrive would index it for nothing.
    if (!supportsConfiguration() || workspace.rootFixedByInitializationOptions()) workspace.openStoreForSettings();
    return {
      capabilities: {
        positionEncoding: wire.positionEncoding,
        textDocumentSync: TextDocumentSyncKind.Incremental,
        completionProvider: {
          // `/` continues a file mention inside a folder (clients that do not re-trigger on their own).
          triggerCharacters: ['@', '/'],
          resolveProvider: true,
          completionItem: { labelDetailsSupport: true },
        },
        executeCommandProvider: { commands: [...EXECUTABLE_COMMANDS, ...EDITOR_COMMANDS] },
        ...EDITOR_FEATURE_CAPABILITIES,
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: SERVER_NAME, version: options.version },
    };
  });

  connection.onInitialized(async () => {
    try {
      await onInitialized();
    } catch (error) {
      options.log(`initialization failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  });

  async function onInitialized(): Promise<void> {
    initialized = true;
    report(unreportedProblems.splice(0));
    if (capabilities.workspace?.didChangeConfiguration?.dynamicRegistration === true) {
      void connection.client.register(DidChangeConfigurationNotification.type, { section: SETTINGS_SECTION });
    }
    if (capabilities.workspace?.workspaceFolders === true) {
      connection.workspace.onDidChangeWorkspaceFolders(
        checkedNotification('workspace/didChangeWorkspaceFolders', WORKSPACE_FOLDERS_CHANGE, options.log, (event) => {
          const removed = new Set(event.removed.map((folder) => folder.uri));
          folderUris = [...folderUris.filter((uri) => !removed.has(uri)), ...event.added.map((folder) => folder.uri)];
          applySettingsChange(workspace.setWorkspace(folderUris, rootUri, rootPath));
        }),
      );
    }
    // A client that never answers must not keep the server without a store.
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, options.configurationTimeoutMs ?? 3000).unref());
    await Promise.race([pullSection(), timeout]);
    workspace.openStoreForSettings();
    const store = workspace.currentStore();
    if (store !== undefined) {
      // A store opened during `initialize` (its root fixed by initializationOptions) is reported now.
      if (reportedStore !== store) sendStatus(store);
      void showIndexingProgress(store);
    }
  }

  connection.onDidChangeConfiguration((params) => {
    const settings = params?.settings as Record<string, unknown> | null | undefined;
    if (typeof settings === 'object' && settings !== null && Object.prototype.hasOwnProperty.call(settings, SETTINGS_SECTION)) {
      applySettingsChange(workspace.setSection(settings[SETTINGS_SECTION]));
    } else {
      void pullSection();
    }
  });

  onCheckedRequest(wire, 'textDocument/completion', COMPLETION_PARAMS, async (params, token) => {
    const started = performance.now();
    try {
      return await answer(token, async (signal) => {
        const document = documents.get(params.textDocument.uri);
        if (document === undefined) return { isIncomplete: false, items: [] };
        // During the first index: wait for it up to a short bound, then answer what is indexed, incomplete.
        if (await completionWaits.wait(document.uri, signal)) return provideMentionCompletion(document, params.position, workspace, signal);
        const list = await provideMentionCompletion(document, params.position, partial, signal);
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
      resolveSessionCompletionItem(item, workspace, signal, previewKindFor(capabilities.textDocument?.completion?.completionItem?.documentationFormat)),
    ),
  );

  onCheckedRequest(connection, 'workspace/executeCommand', EXECUTE_COMMAND_PARAMS, (params, token) =>
    answer(token, async (signal) => {
      // A command answering from the listing waits for the first index, with progress on the client's token.
      const workDoneToken = progressToken(params);
      const progress =
        workDoneToken === undefined ? undefined : new FirstIndexWaitProgress(firstIndex, () => connection.window.attachWorkDoneProgress(workDoneToken));
      const services = workspace.view({ onWait: () => progress?.begin() });
      try {
        return await (EDITOR_COMMANDS.includes(params.command)
          ? executeEditorCommand(params.command, params.arguments, services, signal)
          : executeSessionCommand(params.command, params.arguments, services, signal));
      } finally {
        progress?.done();
      }
    }),
  );

  /** Stop indexing, watching and publishing: on `shutdown`, and when the process stops (exit, signal, input closed). */
  const stop = (): void => {
    endIndexingProgress?.();
    statusSubscription?.dispose();
    editor.dispose();
    workspace.dispose();
  };
  connection.onShutdown(stop);

  documents.listen(checkedDocumentSync(wire, options.log));
  connection.listen();
  return { dispose: stop };
}
