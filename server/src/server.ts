import { SESSION_STATUS_NOTIFICATION, SETTINGS_SECTION, describeSessionsRootProblem, type SessionStoreStatus, type SessionsRootProblem } from '@dsh-session-ls/shared';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  DidChangeConfigurationNotification,
  MessageType,
  ShowMessageNotification,
  TextDocumentSyncKind,
  TextDocuments,
  type ClientCapabilities,
  type Connection,
  type InitializeResult,
} from 'vscode-languageserver/node';
import { createSessionLanguageService } from './features';
import { SessionWorkspace, type SessionWorkspaceOptions } from './settings/sessionWorkspace';
import { describeSettingProblem, type SettingKey, type SettingProblem } from './settings/settings';
import type { SessionStoreService, Subscription } from './store/service';
import { indexingProgress, type FirstIndex } from './wiring/firstIndex';
import { WORKSPACE_FOLDERS_CHANGE, checkedDocumentSync, checkedNotification } from './wiring/params';
import { negotiatePositionEncoding, withPositionEncoding } from './wiring/positionEncoding';
import { registerSessionRoutes, sessionRouteCapabilities, type SessionRoutes } from './wiring/routes';

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
  /** How long completion waits for the first index (default `COMPLETION_FIRST_INDEX_WAIT_MS`, wiring/firstIndex.ts). */
  completionFirstIndexWaitMs?: number;
}

/** The server name reported in `initialize`. */
export const SERVER_NAME = 'dsh-session-ls';

/** How long `shutdown` waits for a persistent cache write before it answers. */
const SHUTDOWN_CACHE_WAIT_MS = 3000;

/**
 * Start the server on an LSP connection: its lifecycle (initialize, settings, workspace folders, store
 * status and indexing progress) is here; every feature request goes through `wiring/routes.ts` to the
 * language service, and every failure there becomes a JSON-RPC error while the server goes on.
 */
export function startSessionLanguageServer(connection: Connection, options: SessionLanguageServerOptions): { dispose(): void; whenIndexed(): Promise<void> } {
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
  const service = createSessionLanguageService(workspace);
  const firstIndex: FirstIndex = {
    indexed: () => workspace.indexed(),
    whenIndexed: (signal) => workspace.whenIndexed(signal),
    storeStatus: () => workspace.storeStatus(),
    onStatus: (listener) => workspace.currentStore()?.onStatus(listener),
  };
  // Every feature request, and the pushed diagnostics (over what is indexed so far).
  const routes: SessionRoutes = registerSessionRoutes(wire, connection, documents, {
    service,
    currentStore: () => workspace.currentStore(),
    firstIndex,
    capabilities: () => capabilities,
    log: options.log,
    ...(options.completionFirstIndexWaitMs === undefined ? {} : { completionFirstIndexWaitMs: options.completionFirstIndexWaitMs }),
  });

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
    routes.refresh();
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
    if (workspace.openStoreForSettings() === undefined) routes.refresh();
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
        ...sessionRouteCapabilities(service),
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

  /** Stop indexing, watching and publishing: on `shutdown`, and when the process stops (exit, signal, input closed). */
  const stop = (): void => {
    endIndexingProgress?.();
    statusSubscription?.dispose();
    routes.dispose();
    workspace.dispose();
  };
  connection.onShutdown(async () => {
    // The cache is written 5 s after a change: an editor closed sooner would leave the next start to
    // read every log again. Written now (bounded; a write cut short by stop() leaves no file).
    const save = workspace.currentStore()?.saveCache?.();
    if (save !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_CACHE_WAIT_MS)));
      await Promise.race([save.catch(() => undefined), bound]);
      clearTimeout(timer);
    }
    stop();
  });

  documents.listen(checkedDocumentSync(wire, options.log));
  connection.listen();
  return { dispose: stop, whenIndexed: () => workspace.whenIndexed() };
}
