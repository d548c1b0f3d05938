import {
  SessionReferenceError,
  displaySafeLabel,
  isSessionReferenceError,
  type AgentName,
  type SessionReferenceConfig,
} from '@dsh-session-ls/shared';
import { foreignAgentsEnabled } from '../features/foreignMentions';
import { analyzeMentions, readFailureReason, type MentionedSession } from '../features/mentionAnalysis';
import type { SessionServices, TargetRequest } from '../features/services';
import { projectSessionSurface, smallestFittingBudget } from '../resolver';
import { describeEmptyStores, searchedStore, type StoreLocations } from './storeHints';

/**
 * The CLI's words for a failed `prepare`. The core's error message is dsh's own and stays as it is
 * (tests compare it with dsh's); the CLI knows more (the mention, the stores, the budget and where
 * it came from), so it adds that after it, in parentheses, on the same line.
 */

/** What the CLI knows about the failed call. */
export interface PrepareCall {
  text: string;
  services: SessionServices;
  target: TargetRequest;
  /** The config fields the command line set. */
  override: Partial<SessionReferenceConfig>;
  locations: StoreLocations;
}

const READ_FAILED_PREFIX = 'failed to read referenced session: ';

/** ` (details)` for a failed prepare, or the error as it is when there is nothing to add. */
export async function explainPrepareFailure(error: unknown, call: PrepareCall): Promise<unknown> {
  if (!isSessionReferenceError(error)) return error;
  if (error.code !== 'SESSION_REFERENCE_READ_FAILED' && error.code !== 'SESSION_REFERENCE_BUDGET_EXCEEDED') return error;
  let detail: string | undefined;
  try {
    const { services } = call;
    const config = services.resolver(call.override).config;
    const target = await services.resolveTarget(call.target, undefined);
    const analysis = await analyzeMentions(call.text, { sessions: services.sessions, foreign: foreignAgentsEnabled(services), target, config, indexing: false });
    detail =
      error.code === 'SESSION_REFERENCE_READ_FAILED'
        ? await readFailureDetail(error, analysis.sessions, call)
        : budgetDetail(analysis.sessions, config.maxReferenceBytes, call.override.maxReferenceBytes !== undefined);
  } catch {
    // The explanation is a courtesy: the core's error stands without it.
    detail = undefined;
  }
  return detail === undefined ? error : new SessionReferenceError(error.code, `${error.message} (${detail})`, { cause: error });
}

/** How the message names a session: its label when the mention has one, and its id unless the core's message has it. */
function mentionWords(session: MentionedSession, coreMessage: string): string[] {
  const words: string[] = [];
  if (!coreMessage.includes(JSON.stringify(session.sessionId))) words.push(`${session.agent ?? 'dsh'} session ${JSON.stringify(session.sessionId)}`);
  if (session.label !== session.sessionId) words.push(`mentioned as ${JSON.stringify(displaySafeLabel(session.label, session.sessionId))}`);
  return words;
}

async function readFailureDetail(error: SessionReferenceError, sessions: readonly MentionedSession[], call: PrepareCall): Promise<string | undefined> {
  const failed = sessions.filter((session) => session.read !== undefined && !session.read.ok);
  const reason = error.message.startsWith(READ_FAILED_PREFIX) ? error.message.slice(READ_FAILED_PREFIX.length) : undefined;
  // The session whose failure the core reported (reads run in parallel: the first to fail wins).
  const session = failed.find((candidate) => candidate.read?.ok === false && readFailureReason(candidate.read.error) === reason) ?? failed[0];
  if (session === undefined || session.read?.ok !== false) return undefined;
  const agent: AgentName = session.agent ?? 'dsh';
  const words = mentionWords(session, error.message);
  const searched = searchedStore(agent, call.locations);
  words.push(session.read.notFound || !call.locations.agents.includes(agent) ? searched : searched.replace(/^searched /, 'in '));
  if (session.read.notFound && call.locations.agents.includes(agent)) {
    // A store that lists nothing at all may be the wrong folder: say which is the right one.
    const listed = (await call.services.sessions.listSessions()).filter((summary) => (summary.agent ?? 'dsh') === agent).length;
    const hint = describeEmptyStores({ ...call.locations, agents: [agent] }, new Map([[agent, listed]]))[0];
    if (hint?.hint !== undefined) words.push(hint.hint);
    else if (hint?.note !== undefined) words.push(hint.note);
  }
  return words.join('; ');
}

function budgetDetail(sessions: readonly MentionedSession[], budget: number, fromFlag: boolean): string | undefined {
  // prepare fits its sources in mention order: the first that does not fit is the one it reported.
  const session = sessions.find((candidate) => candidate.budget !== undefined && !candidate.budget.fits);
  if (session === undefined || session.read?.ok !== true) return undefined;
  const needed = smallestFittingBudget(projectSessionSurface(session.read.surface, session.label));
  const label = session.label === session.sessionId ? '' : ` mentioned as ${JSON.stringify(displaySafeLabel(session.label, session.sessionId))}`;
  const name = `${session.agent ?? 'dsh'} session ${JSON.stringify(session.sessionId)}${label}`;
  const source = fromFlag ? 'set by --max-reference-bytes' : 'the default';
  return `${name} needs at least ${needed} bytes, the budget is ${budget} (${source}): pass --max-reference-bytes ${needed} or more`;
}
