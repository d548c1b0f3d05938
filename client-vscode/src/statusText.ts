import { SESSIONS_ROOT_PROBLEMS, describeSessionsRootProblem, displaySafeText, type SessionStoreStatus, type SessionsRootProblem } from '@dsh-session-ls/shared';

/** What the status bar item shows. */
export interface StatusPresentation {
  text: string;
  tooltip: string;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** True when a notification payload has the documented shape (the server is another process: check it). */
export function isSessionStoreStatus(value: unknown): value is SessionStoreStatus {
  if (typeof value !== 'object' || value === null) return false;
  const status = value as Record<string, unknown>;
  return (
    (status.root === null || typeof status.root === 'string') &&
    isCount(status.indexed) &&
    typeof status.indexing === 'boolean' &&
    isCount(status.discovered) &&
    // A newer server may name problems this client does not know: they show as an unreadable root.
    (status.rootProblem === undefined || typeof status.rootProblem === 'string')
  );
}

/** The status bar text of each root problem: the list is empty, and this says why. */
const ROOT_PROBLEM_TEXT: Record<SessionsRootProblem, string> = {
  missing: 'no sessions root',
  'not-a-directory': 'sessions root is not a directory',
  inaccessible: 'sessions root cannot be read',
};

/** Where to fix the root, for the tooltip (README, Settings: a remote window does not read the local user setting). */
export const ROOT_SETTING_HINT =
  'Set dshSessions.sessionsRoot to your dsh store. In a remote window (Remote-SSH, WSL, Dev Containers, Codespaces, code-server) the User setting is not read for it: set it in the Remote or the workspace settings.';

/** The status bar text and tooltip for a store status. */
export function statusPresentation(status: SessionStoreStatus): StatusPresentation {
  const store = status.root ?? '(no sessions root)';
  if (status.rootProblem !== undefined) {
    const problem = knownProblem(status.rootProblem);
    return {
      text: `$(warning) dsh: ${ROOT_PROBLEM_TEXT[problem]}`,
      tooltip: `dsh sessions store: ${displaySafeText(store)}\n${describeSessionsRootProblem(store, problem)}\n${ROOT_SETTING_HINT}`,
    };
  }
  const sessions = (n: number) => `${n} session${n === 1 ? '' : 's'}`;
  const count = sessions(status.indexed);
  // While indexing, "5/12 sessions" once the server has found some (before that, "0/0" says nothing).
  const progress = status.discovered > 0 && status.discovered >= status.indexed ? `${status.indexed}/${sessions(status.discovered)}` : count;
  const text = status.indexing ? `$(sync~spin) dsh: indexing… ${progress}` : `$(history) dsh: ${count}`;
  const state = status.indexing ? `${progress} indexed so far` : `${count} indexed`;
  return { text, tooltip: `dsh sessions store: ${displaySafeText(store)}\n${state}` };
}

function knownProblem(problem: string): SessionsRootProblem {
  return (SESSIONS_ROOT_PROBLEMS as readonly string[]).includes(problem) ? (problem as SessionsRootProblem) : 'inaccessible';
}
