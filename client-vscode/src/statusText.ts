import { SESSIONS_ROOT_PROBLEMS, describeSessionsRootProblem, type SessionStoreStatus, type SessionsRootProblem } from '@dsh-session-ls/shared';

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

/** The status bar text and tooltip for a store status. */
export function statusPresentation(status: SessionStoreStatus): StatusPresentation {
  const problem = status.rootProblem === undefined ? undefined : knownProblem(status.rootProblem);
  if (problem !== undefined && problem !== 'missing') {
    const what = problem === 'not-a-directory' ? 'is not a directory' : 'cannot be read';
    return { text: `$(warning) dsh: sessions root ${what}`, tooltip: describeSessionsRootProblem(status.root ?? '(no sessions root)', problem) };
  }
  const sessions = (n: number) => `${n} session${n === 1 ? '' : 's'}`;
  const count = sessions(status.indexed);
  // While indexing, "5/12 sessions" once the server has found some (before that, "0/0" says nothing).
  const progress = status.discovered > 0 && status.discovered >= status.indexed ? `${status.indexed}/${sessions(status.discovered)}` : count;
  const text = status.indexing ? `$(sync~spin) dsh: indexing… ${progress}` : `$(history) dsh: ${count}`;
  const store = status.root ?? '(no sessions root)';
  const state = status.indexing ? `${progress} indexed so far` : `${count} indexed`;
  const missing = problem === 'missing' ? `\n${describeSessionsRootProblem(store, problem)}` : '';
  return { text, tooltip: `dsh sessions store: ${store}\n${state}${missing}` };
}

function knownProblem(problem: string): SessionsRootProblem {
  return (SESSIONS_ROOT_PROBLEMS as readonly string[]).includes(problem) ? (problem as SessionsRootProblem) : 'inaccessible';
}
