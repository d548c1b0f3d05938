/** dsh's default sessions root (dsh-session-store.md §1.5). */
import os from 'node:os';
import path from 'node:path';

/** Expands a leading `~`, `~/` or `~\` to the home directory (default: the OS one), as dsh's home paths do; nothing else. */
export function expandHome(value: string, home: string = os.homedir()): string {
  if (value === '~') return home;
  if (value.startsWith('~/') || value.startsWith('~\\')) return path.join(home, value.slice(2));
  return value;
}

/**
 * The process's working directory, also when it was removed after the process started in it, where
 * `process.cwd()` throws ENOENT (an editor started from a terminal in a deleted worktree, and the
 * server it starts): then `$PWD` when it is absolute (where the process was, so a relative path given
 * to it names what is no longer there), else the home directory.
 */
export function workingDirectory(env: NodeJS.ProcessEnv = process.env, cwd: () => string = () => process.cwd()): string {
  try {
    return cwd();
  } catch {
    const pwd = env.PWD;
    return pwd !== undefined && path.isAbsolute(pwd) ? pwd : os.homedir();
  }
}

/** `$DSH_HOME/sessions` when DSH_HOME is set and not blank, else `~/.dsh/sessions`; always absolute. */
export function defaultSessionsRoot(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const dshHome = env.DSH_HOME;
  const base = dshHome !== undefined && dshHome.trim() !== '' ? expandHome(dshHome, home) : path.join(home, '.dsh');
  return path.resolve(workingDirectory(env), base, 'sessions');
}
