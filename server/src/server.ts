import { SETTINGS_SECTION } from '@dsh-session-ls/shared';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  DidChangeConfigurationNotification,
  MessageType,
  ShowMessageNotification,
  TextDocumentSyncKind,
  TextDocuments,
  type ClientCapabilities,
  type Connection,
  type InitializeParams,
  type InitializeResult,
} from 'vscode-languageserver/node';
import { createSessionLanguageService, type SessionLanguageService } from './features';
import { SessionWorkspace, type SessionWorkspaceOptions } from './settings/sessionWorkspace';
import { describeSettingProblem, type SettingKey, type SettingProblem } from './settings/settings';
import type { SessionStoreService } from './store/service';
import { limitDocumentSizes } from './wiring/documentLimits';
import type { FirstIndex } from './wiring/firstIndex';
import { WORKSPACE_FOLDERS_CHANGE, checkedDocumentSync, checkedNotification } from './wiring/params';
import { negotiatePositionEncoding, withPositionEncoding, type EncodedConnection } from './wiring/positionEncoding';
import { registerSessionRoutes, sessionRouteCapabilities, type SessionRoutes } from './wiring/routes';
import { StoreStatusReports } from './wiring/storeStatus';

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
  const server = new SessionLanguageServer(connection, options);
  server.listen();
  return { dispose: () => server.stop(), whenIndexed: () => server.workspace.whenIndexed() };
}

/** The parts the server assembles, and the lifecycle that drives them. */
class SessionLanguageServer {
  private readonly documents = new TextDocuments(TextDocument);
  /** Every position on the wire goes through `wire` (UTF-8 clients); the features see UTF-16. */
  private readonly wire: EncodedConnection;
  private capabilities: ClientCapabilities = {};
  private initialized = false;
  private folderUris: string[] = [];
  private rootUri: string | null | undefined;
  private rootPath: string | null | undefined;
  private readonly unreportedProblems: SettingProblem[] = [];
  private readonly status: StoreStatusReports;
  readonly workspace: SessionWorkspace;
  private readonly service: SessionLanguageService;
  private readonly routes: SessionRoutes;

  constructor(
    private readonly connection: Connection,
    private readonly options: SessionLanguageServerOptions,
  ) {
    this.wire = withPositionEncoding(connection, this.documents);
    this.status = new StoreStatusReports(connection, () => this.workspace.currentStore(), options.log);
    this.workspace = new SessionWorkspace({
      openStore: options.openStore,
      ...(options.openForeignStore === undefined ? {} : { openForeignStore: options.openForeignStore }),
      defaultSessionsRoot: options.defaultSessionsRoot,
      env: options.env,
      commandLine: options.commandLine,
      document: (uri) => this.documents.get(uri),
      onStoreOpened: (store) => {
        this.status.watch(store);
        this.routes.refresh();
      },
      log: options.log,
    });
    this.service = createSessionLanguageService(this.workspace);
    this.routes = this.registerRoutes();
  }

  /** Every feature request, and the pushed diagnostics (over what is indexed so far). */
  private registerRoutes(): SessionRoutes {
    const workspace = this.workspace;
    const firstIndex: FirstIndex = {
      indexed: () => workspace.indexed(),
      whenIndexed: (signal) => workspace.whenIndexed(signal),
      storeStatus: () => workspace.storeStatus(),
      onStatus: (listener) => workspace.currentStore()?.onStatus(listener),
    };
    const waitMs = this.options.completionFirstIndexWaitMs;
    return registerSessionRoutes(this.wire, this.connection, this.documents, {
      service: this.service,
      currentStore: () => workspace.currentStore(),
      firstIndex,
      capabilities: () => this.capabilities,
      log: this.options.log,
      ...(waitMs === undefined ? {} : { completionFirstIndexWaitMs: waitMs }),
    });
  }

  /** Handle the lifecycle messages, then start reading the connection. */
  listen(): void {
    const { connection, options } = this;
    connection.onInitialize((params) => this.initialize(params));
    connection.onInitialized(async () => {
      try {
        await this.onInitialized();
      } catch (error) {
        options.log(`initialization failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    });
    connection.onDidChangeConfiguration((params) => {
      const settings = params?.settings as Record<string, unknown> | null | undefined;
      if (typeof settings === 'object' && settings !== null && Object.prototype.hasOwnProperty.call(settings, SETTINGS_SECTION)) {
        this.applySettingsChange(this.workspace.setSection(settings[SETTINGS_SECTION]));
      } else {
        void this.pullSection();
      }
    });
    connection.onShutdown(() => this.shutdown());
    this.documents.listen(limitDocumentSizes(connection, this.documents, checkedDocumentSync(this.wire, options.log), options.log));
    connection.listen();
  }

  private supportsConfiguration(): boolean {
    return this.capabilities.workspace?.configuration === true;
  }

  private report(problems: readonly SettingProblem[]): void {
    for (const problem of problems) {
      const text = describeSettingProblem(problem);
      this.options.log(text);
      // The notification, not showErrorMessage (a showMessageRequest that waits for an answer).
      if (this.initialized) void this.connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Error, message: text });
      else this.unreportedProblems.push(problem);
    }
  }

  private applySettingsChange(problems: readonly SettingProblem[]): void {
    this.report(problems);
    if (!this.initialized) return;
    // A new root refreshes the editor features as it opens; other settings (target, limits) change diagnostics too.
    if (this.workspace.openStoreForSettings() === undefined) this.routes.refresh();
  }

  private async pullSection(): Promise<void> {
    if (!this.supportsConfiguration()) return;
    try {
      const section: unknown = await this.connection.workspace.getConfiguration(SETTINGS_SECTION);
      this.applySettingsChange(this.workspace.setSection(section));
    } catch (error) {
      this.options.log(`could not read the ${SETTINGS_SECTION} settings: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private initialize(params: InitializeParams): InitializeResult {
    const { workspace, wire } = this;
    this.capabilities = params.capabilities ?? {};
    wire.positionEncoding = negotiatePositionEncoding(this.capabilities);
    this.folderUris = (params.workspaceFolders ?? []).map((folder) => folder.uri);
    this.rootUri = params.rootUri;
    this.rootPath = params.rootPath;
    this.report(workspace.setWorkspace(this.folderUris, this.rootUri, this.rootPath));
    this.report(workspace.setInitializationOptions(params.initializationOptions));
    // Opening the default store only to replace it once the settings arrive would index it for nothing.
    if (!this.supportsConfiguration() || workspace.rootFixedByInitializationOptions()) workspace.openStoreForSettings();
    return {
      capabilities: {
        positionEncoding: wire.positionEncoding,
        textDocumentSync: TextDocumentSyncKind.Incremental,
        ...sessionRouteCapabilities(this.service),
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: SERVER_NAME, version: this.options.version },
    };
  }

  private async onInitialized(): Promise<void> {
    const { connection, capabilities, options } = this;
    this.initialized = true;
    this.status.clientInitialized();
    this.report(this.unreportedProblems.splice(0));
    if (capabilities.workspace?.didChangeConfiguration?.dynamicRegistration === true) {
      void connection.client.register(DidChangeConfigurationNotification.type, { section: SETTINGS_SECTION });
    }
    if (capabilities.workspace?.workspaceFolders === true) {
      connection.workspace.onDidChangeWorkspaceFolders(
        checkedNotification('workspace/didChangeWorkspaceFolders', WORKSPACE_FOLDERS_CHANGE, options.log, (event) => {
          const removed = new Set(event.removed.map((folder) => folder.uri));
          this.folderUris = [...this.folderUris.filter((uri) => !removed.has(uri)), ...event.added.map((folder) => folder.uri)];
          this.applySettingsChange(this.workspace.setWorkspace(this.folderUris, this.rootUri, this.rootPath));
        }),
      );
    }
    // A client that never answers must not keep the server without a store.
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, options.configurationTimeoutMs ?? 3000).unref());
    await Promise.race([this.pullSection(), timeout]);
    this.workspace.openStoreForSettings();
    this.status.reportCurrentStore();
  }

  private async shutdown(): Promise<void> {
    // The cache is written 5 s after a change: an editor closed sooner would leave the next start to
    // read every log again. Written now (bounded; a write cut short by stop() leaves no file).
    const save = this.workspace.currentStore()?.saveCache?.();
    if (save !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_CACHE_WAIT_MS)));
      await Promise.race([save.catch(() => undefined), bound]);
      clearTimeout(timer);
    }
    this.stop();
  }

  /** Stop indexing, watching and publishing: on `shutdown`, and when the process stops (exit, signal, input closed). */
  stop(): void {
    this.status.dispose();
    this.routes.dispose();
    this.workspace.dispose();
  }
}
