import { AGENT_HOME_SETTINGS, agentHomeSetting, type ForeignAgent, type SessionReferenceConfig, type SessionReferenceTarget } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { ListingView, SessionLogs, SessionServiceViews, SessionServices, WorkspaceFileSystem } from '../features/services';
import {
  createSessionReferenceResolver,
  findListedSession,
  raceWithSignal,
  SessionReadError,
  type SessionReferenceResolver,
  type SessionStore,
} from '../resolver';
import type { SessionStoreService, StoreStatus } from '../store/service';
import { composeAgentStores, storeServesAgent } from '../store/composite';
import type { ForeignSessionStore } from '../store/engine/foreignStore';
import { openForeignStore } from '../store/engine/openForeignStore';
import { sessionLogFiles } from '../store/sessionLogFile';
import { SettingsState, type SessionSettings, type SettingKey, type SettingProblem } from './settings';
import { fileUriToPath, resolveTarget, type TargetRequest } from './target';
import { nodeWorkspaceFileSystem } from './workspaceFileSystem';

/** How a workspace reaches the outside world (all injected, so it runs the same in the server, the CLI and tests). */
export interface SessionWorkspaceOptions {
  /** Open the store of a sessions root. */
  openStore: (root: string) => SessionStoreService;
  /** `$DSH_HOME/sessions`, else `~/.dsh/sessions`. */
  defaultSessionsRoot: (env: NodeJS.ProcessEnv) => string;
  env: NodeJS.ProcessEnv;
  /** Settings given on the command line. */
  commandLine?: Partial<Record<SettingKey, unknown>>;
  /** Open documents, by URI. */
  document?(uri: string): TextDocument | undefined;
  /** Called with each store opened (the first, and one per root change). */
  onStoreOpened?(store: SessionStoreService): void;
  /** Diagnostic logging of other agents' stores. */
  log?: (message: string) => void;
  /** Open another agent's store (default: without a persistent cache, logging to `log`). */
  openForeignStore?: (agent: ForeignAgent, home: string) => ForeignSessionStore;
  now?(): number;
  /** The workspace's files for file mentions (default: this machine's, through Node's directory reads). */
  workspaceFiles?: WorkspaceFileSystem;
  /** Whole dsh logs over `sessions` (default: the transcript files under the sessions root). */
  sessionLogs?(sessions: SessionStore): SessionLogs;
}

const NOT_OPEN_STATUS: StoreStatus = Object.freeze({ indexing: true, indexed: 0, discovered: 0, rootExists: false });

/** How one request's services answer from the listing (declared with the services the features use). */
export type { ListingView } from '../features/services';

/**
 * The server's view of one workspace: settings from every source, workspace folders, and the store
 * of the effective sessions root (reopened when the root changes). It implements the services the
 * features use; it knows nothing about the connection.
 */
export class SessionWorkspace implements SessionServices, SessionServiceViews {
  private readonly settingsState = new SettingsState();
  private section: unknown;
  private initializationOptions: unknown;
  private folders: string[] = [];
  private rootPath: string | undefined;
  private store: SessionStoreService | undefined;
  /** The agents and homes the open store was composed for. */
  private storeAgentsKey = '';
  private storeOpened!: () => void;
  private readonly firstStore = new Promise<void>((resolve) => (this.storeOpened = resolve));
  /** Settles when the current store is replaced (a new one is made for each store). */
  private storeReplaced: () => void = () => undefined;
  private replacement = new Promise<void>((resolve) => (this.storeReplaced = resolve));
  private disposed = false;

  /**
   * The sessions of the current root. A listing never comes from an unfinished first index: calls made
   * before a store is open, or while its first index is built, wait for it (lsp-contract.md, First answers).
   */
  readonly sessions: SessionStore = this.listing({});
  readonly sessionLogs: SessionLogs;
  readonly workspaceFiles: WorkspaceFileSystem;

  constructor(private readonly options: SessionWorkspaceOptions) {
    this.settingsState.update(this.sources());
    this.sessionLogs = this.sessionLogsOver(this.sessions);
    this.workspaceFiles = options.workspaceFiles ?? nodeWorkspaceFileSystem;
  }

  /** Whole logs over one view's sessions, so a read fails exactly as that view's `readSurface` does. */
  private sessionLogsOver(sessions: SessionStore): SessionLogs {
    return this.options.sessionLogs?.(sessions) ?? sessionLogFiles(() => this.settings().sessionsRoot, sessions);
  }

  /** Set `initializationOptions`; returns the setting problems not reported before. */
  setInitializationOptions(value: unknown): SettingProblem[] {
    this.initializationOptions = value;
    return this.settingsState.update(this.sources());
  }

  /** Set the pulled or pushed `dshSessions` section; returns the setting problems not reported before. */
  setSection(value: unknown): SettingProblem[] {
    this.section = value;
    return this.settingsState.update(this.sources());
  }

  /** Set the workspace folders (URIs, in the client's order) and the initialize root URI. */
  setWorkspace(folderUris: readonly string[], rootUri?: string | null, rootPath?: string | null): SettingProblem[] {
    this.folders = folderUris.map(fileUriToPath).filter((folder): folder is string => folder !== undefined);
    this.rootPath = (typeof rootUri === 'string' ? fileUriToPath(rootUri) : undefined) ?? rootPath ?? undefined;
    // A relative sessionsRoot is resolved against the first folder, so it may move.
    return this.settingsState.update(this.sources());
  }

  /** True when `initializationOptions` fixes the root, so no later setting can change it. */
  rootFixedByInitializationOptions(): boolean {
    const options = this.initializationOptions as { sessionsRoot?: unknown } | null | undefined;
    return typeof options?.sessionsRoot === 'string' && options.sessionsRoot.trim() !== '';
  }

  /** Open the store of the effective root when none is open or the root changed; returns the store opened, if any. */
  openStoreForSettings(): SessionStoreService | undefined {
    if (this.disposed) return undefined;
    const settings = this.settings();
    const root = settings.sessionsRoot;
    const foreignAgents = settings.agents.filter((agent) => agent !== 'dsh');
    const agentsKey = JSON.stringify([settings.agents, ...AGENT_HOME_SETTINGS.map((key) => (foreignAgents.length === 0 ? '' : settings[key]))]);
    if (this.store !== undefined && this.store.root === root && this.storeAgentsKey === agentsKey) return undefined;
    const previous = this.store;
    // Other agents' stores sit behind the same seam; with the default `["dsh"]` the store is dsh's alone.
    const dsh = this.options.openStore(root);
    const openForeign = this.options.openForeignStore ?? ((agent: ForeignAgent, home: string) => openForeignStore(agent, home, this.options.log));
    const foreign = foreignAgents.map((agent) => openForeign(agent, settings[agentHomeSetting(agent)]));
    const dshListed = settings.agents.includes('dsh');
    this.store = foreign.length === 0 && dshListed ? dsh : composeAgentStores(dsh, foreign, { dshListed });
    this.storeAgentsKey = agentsKey;
    previous?.dispose();
    this.storeOpened();
    const replaced = this.storeReplaced;
    this.replacement = new Promise<void>((resolve) => (this.storeReplaced = resolve));
    replaced();
    this.options.onStoreOpened?.(this.store);
    return this.store;
  }

  /** The open store, if any. */
  currentStore(): SessionStoreService | undefined {
    return this.store;
  }

  /** True once a store is open and its first index is built (after that, answers follow the store's freshness). */
  indexed(): boolean {
    return this.store !== undefined && !this.store.status().indexing;
  }

  /**
   * Resolves once a store is open and its first index is built; a store replaced meanwhile (the root
   * changed) is followed to its successor. Rejects with CANCELLED when `signal` aborts.
   */
  async whenIndexed(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const store = await this.openedStore(signal);
      if (this.disposed) return;
      // Replaced while this call resumed: wait for the new store.
      if (this.store !== store) continue;
      if (store.status().indexing) await raceWithSignal(Promise.race([store.whenIndexed(signal), this.replacement]), signal);
      if (this.store === store) return;
    }
  }

  /**
   * The services as one request sees them: by default its listing answers wait for the first index
   * (`onWait` tells when one must), with `partial` they answer from what is indexed so far.
   */
  view(options: ListingView): SessionServices {
    const sessions = this.listing(options);
    return {
      sessions,
      sessionLogs: this.sessionLogsOver(sessions),
      workspaceFiles: this.workspaceFiles,
      storeStatus: () => this.storeStatus(),
      settings: () => this.settings(),
      resolver: (override) => this.resolverOver(sessions, override),
      resolveTarget: (request, documentUri, signal) => this.resolveTargetOver(sessions, request, documentUri, signal),
      document: (uri) => this.document(uri),
      now: () => this.now(),
    };
  }

  private listing(options: ListingView): SessionStore {
    return {
      listSessions: async (signal) => {
        if (options.partial === true) return this.store === undefined ? [] : this.store.listSessions(signal);
        if (!this.indexed()) {
          options.onWait?.();
          await this.whenIndexed(signal);
        }
        return (await this.openedStore(signal)).listSessions(signal);
      },
      // A surface is read from disk by id: it needs an open store, not its index.
      readSurface: async (sessionId, signal, agent) => {
        const store = await this.openedStore(signal);
        // dsh's own store knows no other agent: a foreign session is not found unless its agent is enabled.
        if (agent !== undefined && !storeServesAgent(store, agent)) {
          throw new SessionReadError('not-found', `${agent} session ${JSON.stringify(sessionId)} not found: ${agent} is not among the enabled agents`);
        }
        return store.readSurface(sessionId, signal, agent);
      },
      readAgentLog: async (sessionId, agent, signal) => {
        const store = await this.openedStore(signal);
        if (store.readAgentLog === undefined || !storeServesAgent(store, agent)) {
          throw new SessionReadError('not-found', `${agent} session ${JSON.stringify(sessionId)} not found: ${agent} is not among the enabled agents`);
        }
        return store.readAgentLog(sessionId, agent, signal);
      },
    };
  }

  private async openedStore(signal?: AbortSignal): Promise<SessionStoreService> {
    if (this.store === undefined) await raceWithSignal(this.firstStore, signal);
    return this.store!;
  }

  private sources() {
    return {
      section: this.section,
      initializationOptions: this.initializationOptions,
      commandLine: this.options.commandLine,
      env: this.options.env,
      baseDir: this.folders[0],
      defaultSessionsRoot: this.options.defaultSessionsRoot,
    };
  }

  storeStatus(): StoreStatus {
    return this.store?.status() ?? NOT_OPEN_STATUS;
  }

  settings(): SessionSettings {
    return this.settingsState.settings;
  }

  resolver(override?: Partial<SessionReferenceConfig>): SessionReferenceResolver {
    return this.resolverOver(this.sessions, override);
  }

  resolveTarget(request: TargetRequest | undefined, documentUri: string | undefined, signal?: AbortSignal): Promise<SessionReferenceTarget> {
    return this.resolveTargetOver(this.sessions, request, documentUri, signal);
  }

  private resolverOver(sessions: SessionStore, override?: Partial<SessionReferenceConfig>): SessionReferenceResolver {
    return createSessionReferenceResolver(sessions, { ...this.settings().config, ...override }, { redactSecrets: this.settings().redactSecrets });
  }

  private resolveTargetOver(
    sessions: SessionStore,
    request: TargetRequest | undefined,
    documentUri: string | undefined,
    signal?: AbortSignal,
  ): Promise<SessionReferenceTarget> {
    return resolveTarget(
      request,
      {
        targetSessionId: this.settings().targetSessionId,
        workspaceFolders: this.folders,
        rootPath: this.rootPath,
        documentUri,
        findSession: async (sessionId, findSignal) => {
          const session = findListedSession(await sessions.listSessions(findSignal), sessionId);
          return session === undefined ? undefined : { cwd: session.cwd };
        },
      },
      signal,
    );
  }

  document(uri: string): TextDocument | undefined {
    return this.options.document?.(uri);
  }

  now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Close the store; the workspace opens no other. */
  dispose(): void {
    this.disposed = true;
    this.store?.dispose();
  }
}
