import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SessionReferenceTarget } from '@dsh-session-ls/shared';
import type { TargetRequest } from '../features/services';

/** A target as a request gives it (declared with the services the features use). */
export type { TargetRequest } from '../features/services';

/** What the defaults of a target come from. */
export interface TargetDefaults {
  /** The `targetSessionId` setting. */
  targetSessionId?: string;
  /** Workspace folder paths, in the client's order. */
  workspaceFolders: readonly string[];
  /** The path of the initialize `rootUri` (or `rootPath`). */
  rootPath?: string;
  /** The URI of the document the request is about, if any. */
  documentUri?: string;
  /** The recorded cwd of a stored session: `{cwd}` when it exists (cwd undefined when it has none), else undefined. */
  findSession(sessionId: string, signal?: AbortSignal): Promise<{ cwd?: string } | undefined>;
}

/** The file-system path of a `file:` URI, else undefined (other schemes have no folder). */
export function fileUriToPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** The longest workspace folder holding `documentPath` (exact string comparison, as the contract says). */
export function containingWorkspaceFolder(documentPath: string, folders: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const folder of folders) {
    const prefix = folder.endsWith(path.sep) ? folder : folder + path.sep;
    if (documentPath !== folder && !documentPath.startsWith(prefix)) continue;
    if (best === undefined || folder.length > best.length) best = folder;
  }
  return best;
}

// A requested field: undefined = take the default, null = explicitly none, else the value.
function requested(value: string | null | undefined): string | null | undefined {
  return value === '' ? null : value;
}

/**
 * The target a request means (lsp-contract.md, The target): the session id given, else the setting;
 * the cwd given, else the target session's recorded cwd, else the workspace folder holding the
 * document, else the first workspace folder, else the root, else none.
 */
export async function resolveTarget(
  request: TargetRequest | undefined,
  defaults: TargetDefaults,
  signal?: AbortSignal,
): Promise<SessionReferenceTarget> {
  const target: SessionReferenceTarget = {};
  const sessionId = requested(request?.sessionId);
  if (sessionId === undefined) {
    if (defaults.targetSessionId !== undefined && defaults.targetSessionId !== '') target.sessionId = defaults.targetSessionId;
  } else if (sessionId !== null) {
    target.sessionId = sessionId;
  }

  const cwd = requested(request?.cwd);
  if (cwd === null) return target;
  if (cwd !== undefined) return { ...target, cwd };
  if (target.sessionId !== undefined) {
    const session = await defaults.findSession(target.sessionId, signal);
    // dsh ranks by the agent's own header: a target without a cwd has none.
    if (session !== undefined) return session.cwd === undefined ? target : { ...target, cwd: session.cwd };
  }
  const documentPath = defaults.documentUri === undefined ? undefined : fileUriToPath(defaults.documentUri);
  const folder =
    (documentPath === undefined ? undefined : containingWorkspaceFolder(documentPath, defaults.workspaceFolders)) ??
    defaults.workspaceFolders[0] ??
    defaults.rootPath;
  return folder === undefined ? target : { ...target, cwd: folder };
}
