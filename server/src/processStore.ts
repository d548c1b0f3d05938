/** What the server and the CLI processes share: stderr logging and opening a store with the persistent cache. */
import os from 'node:os';
import path from 'node:path';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { openSessionStore, type SessionStoreService } from './store';
import type { ForeignSessionStore } from './store/engine/foreignStore';
import { openForeignStore } from './store/engine/openForeignStore';

// Never stdout: in stdio mode it carries the protocol. Nothing once stderr broke (brokenPipes.ts).
export function logToStderr(message: string): void {
  if (process.stderr.writable) process.stderr.write(`[dsh-session-ls] ${message}\n`);
}

/** Where a persistent index cache may live: the OS cache directory, never under a sessions root. */
export function cacheDirectory(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'dsh-session-ls');
}

/** Opens the store of `root`, with the persistent index cache and stderr logging. */
export function openStore(root: string): SessionStoreService {
  return openSessionStore({ root, cacheDir: cacheDirectory(process.env), log: logToStderr });
}

/** Opens another agent's store under `home`, with its persistent summary cache beside the dsh store's. */
export function openAgentStore(agent: ForeignAgent, home: string): ForeignSessionStore {
  return openForeignStore(agent, home, { cacheDir: cacheDirectory(process.env), log: logToStderr });
}
