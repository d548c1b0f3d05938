import type { SessionReferenceConfig, SessionReferenceTarget } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { SessionServices } from '../features/services';
import {
  createSessionReferenceResolver,
  findListedSession,
  raceWithSignal,
  type SessionReferenceResolver,
  type SessionStore,
} from '../resolver';
import type { SessionStoreService, StoreStatus } from '../store/service';
import { SettingsState, type SessionSettings, type SettingKey, type SettingProblem } from './settings';
import { fileUriToPath, resolveTarget, type TargetRequest } from './target';

/** How a workspace reaches the outside world (all injected, so it runs the same in the server, the CLI and tests). */
export interface SessionWorkspaceOptions {
  /** Open the store of a sessions root. */
  openStore(root: string): SessionStoreService;
  /** `$DSH_HOME/sessions`, else `~/.dsh/sessions`. */
  defaultSessionsRoot(env: NodeJS.ProcessEnv): string;
  env: NodeJS.ProcessEnv;
  /** Settings given on the command line. */
  commandLine?: Partial<Record<SettingKey, unknown>>;
  /** Open documents, by URI. */
  document?(uri: string): TextDocument | undefined;
  /** Called with each store opened (the first, and one per root change). */
  onStoreOpened?(store: SessionStoreService): void;
  now?(): number;
}

const NOT_OPEN_STATUS: StoreStatus = Object.freeze({ indexing: true, indexed: 0, discovered: 0, rootExists: false });

/**
 * The server's view of one workspace: settings from every source, workspace folders, and the store
 * of the effective sessions root (reopened when the root changes). It implements the services the
 * features use; it knows nothing about the connection.
 */
export class SessionWorkspace implements SessionServices {
  private readonly settingsState = new SettingsState();
  private section: unknown;
  private initializationOptions: unknown;
  private folders: string[] = [];
  private rootPath: string | undefined;
  private store: SessionStoreService | undefined;
  private storeOpened!: () => void;
  private readonly firstStore = new Promise<void>((resolve) => (this.storeOpened = resolve));
  private disposed = false;

  /** The sessions of the current root; calls made before a store is open wait for it. */
  readonly sessions: SessionStore = {
    listSessions: async (signal) => (await this.openedStore(signal)).listSessions(signal),
    readSurface: async (sessionId, signal) => (await this.openedStore(signal)).readSurface(sessionId, signal),
  };

  constructor(private readonly options: SessionWorkspaceOptions) {
    this.settingsState.update(this.sources());
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
    const root = this.settings().sessionsRoot;
    if (this.store !== undefined && this.store.root === root) return undefined;
    const previous = this.store;
    this.store = this.options.openStore(root);
    previous?.dispose();
    this.storeOpened();
    this.options.onStoreOpened?.(this.store);
    return this.store;
  }

  /** The open store, if any. */
  currentStore(): SessionStoreService | undefined {
    return this.store;
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
    return createSessionReferenceResolver(this.sessions, { ...this.settings().config, ...override });
  }

  resolveTarget(request: TargetRequest | undefined, documentUri: string | undefined, signal?: AbortSignal): Promise<SessionReferenceTarget> {
    return resolveTarget(
      request,
      {
        targetSessionId: this.settings().targetSessionId,
        workspaceFolders: this.folders,
        rootPath: this.rootPath,
        documentUri,
        findSession: async (sessionId, findSignal) => {
          const sessions = await this.sessions.listSessions(findSignal);
          const session = findListedSession(sessions, sessionId);
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
