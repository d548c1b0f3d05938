import {
  DIAGNOSTIC_SOURCE,
  decodeAgentSessionUri,
  displaySafeLabel,
  isSessionReferenceError,
  FOREIGN_SESSION_URI_PREFIXES,
  iterateAgentSessionMentions,
  type ForeignAgent,
  type SessionMentionToken,
} from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver-types';
import { raceWithSignal, throwIfCancelled } from '../resolver';
import type { SessionServices } from './services';
import { WorkSlices } from './workSlices';

/** True when another agent than dsh is enabled (`agents` setting): only then are foreign mentions resolved. */
export function foreignAgentsEnabled(services: Pick<SessionServices, 'settings'>): boolean {
  return services.settings().agents.some((agent) => agent !== 'dsh');
}

/** A mention of another agent's session (in its own scheme), decoded or not. */
export interface ForeignMention {
  token: SessionMentionToken & { agent: ForeignAgent };
  sessionId?: string;
}

/** How many decoded URIs one scan remembers. */
const DECODED_URI_MEMO = 4096;

/** The foreign mentions of a text, found as they are asked for: those dsh reads as plain text (never overlapping one of dsh's). */
function* foreignMentions(text: string): Generator<ForeignMention> {
  if (!Object.values(FOREIGN_SESSION_URI_PREFIXES).some((prefix) => text.includes(prefix))) return;
  // A document dense with mentions repeats a few URIs: each distinct one is decoded once (a failure costs an exception).
  const decoded = new Map<string, string | undefined>();
  for (const token of iterateAgentSessionMentions(text)) {
    if (token.agent === undefined) continue;
    const mention: ForeignMention = { token: token as ForeignMention['token'] };
    let sessionId = decoded.get(token.uri);
    if (sessionId === undefined && !decoded.has(token.uri)) {
      try {
        sessionId = decodeAgentSessionUri(token.uri).sessionId;
      } catch (error) {
        if (!isSessionReferenceError(error)) throw error;
      }
      if (decoded.size >= DECODED_URI_MEMO) decoded.clear();
      decoded.set(token.uri, sessionId);
    }
    if (sessionId !== undefined) mention.sessionId = sessionId;
    yield mention;
  }
}

/** The foreign mentions of a text: those dsh reads as plain text (never overlapping one of dsh's). */
export function findForeignMentions(text: string): ForeignMention[] {
  return [...foreignMentions(text)];
}

/** The `code` of the Hint on a mention of another agent's session while that agent is off (setting `agents`). */
export const AGENT_NOT_ENABLED_CODE = 'AGENT_NOT_ENABLED';

/** The Hint on a mention of `agent`'s session while `agent` is not among `agents`: what happens now, and the setting that turns it on. */
function agentOffHint(agent: ForeignAgent, agents: readonly string[], foreignScope: boolean): Pick<Diagnostic, 'severity' | 'code' | 'message'> {
  const now = foreignScope ? 'prepare would fail to read this mention' : 'dsh and prepare read this mention as plain text';
  const example = [...agents, agent].map((name) => JSON.stringify(name)).join(', ');
  return {
    severity: DiagnosticSeverity.Hint,
    code: AGENT_NOT_ENABLED_CODE,
    message: `${agent} sessions are off, so ${now}. To read it, turn ${agent} on in the agents setting: "agents": [${example}].`,
  };
}

/**
 * The diagnostics of a document's foreign mentions. A mention of an agent that is off (not in the `agents`
 * setting) gets a Hint naming the setting ({@link AGENT_NOT_ENABLED_CODE}), whatever else is enabled.
 * When another agent is enabled, each mention also gets an Information that dsh itself will not expand
 * it (ours does: the Preview action, `dshSession.prepare`, `dsh-session-ls prepare`), a malformed URI an
 * Error (our prepare refuses the text), and a session an enabled store does not list a Warning.
 */
export async function foreignMentionDiagnostics(
  document: TextDocument,
  services: SessionServices,
  signal: AbortSignal | undefined,
  add: (diagnostic: Omit<Diagnostic, 'range'>, range: () => Diagnostic['range']) => void,
): Promise<void> {
  const mentions = foreignMentions(document.getText());
  const first = mentions.next();
  if (first.done === true) return;
  const agents = services.settings().agents;
  const foreignScope = foreignAgentsEnabled(services);
  let listed = new Map<string, string | undefined>();
  if (foreignScope) {
    try {
      const listing = await raceWithSignal(services.sessions.listSessions(signal), signal);
      listed = new Map(listing.filter((s) => s.agent !== undefined).map((s) => [`${s.agent}\u0000${s.id}`, s.title]));
    } catch {
      throwIfCancelled(signal);
    }
  }
  const slices = new WorkSlices(signal);
  for (let next: IteratorResult<ForeignMention> = first; next.done !== true; next = mentions.next()) {
    if (slices.due()) await slices.pause();
    const { token, sessionId } = next.value;
    const range = (): Diagnostic['range'] => ({ start: document.positionAt(token.start), end: document.positionAt(token.end) });
    const data = { kind: 'foreign-agent', agent: token.agent, ...(sessionId === undefined ? {} : { sessionId }) };
    const enabled = agents.includes(token.agent);
    if (!enabled) add({ source: DIAGNOSTIC_SOURCE, ...agentOffHint(token.agent, agents, foreignScope), data: { ...data, kind: 'agent-off' } }, range);
    if (!foreignScope) continue;
    if (sessionId === undefined) {
      add(
        {
          source: DIAGNOSTIC_SOURCE,
          severity: DiagnosticSeverity.Error,
          code: 'SESSION_REFERENCE_INVALID_REFERENCE',
          message: `This ${token.agent} mention's URI is not canonical: prepare refuses the whole message.`,
          data: { ...data, kind: 'malformed' },
        },
        range,
      );
      continue;
    }
    const key = `${token.agent}\u0000${sessionId}`;
    if (enabled && !listed.has(key)) {
      add(
        {
          source: DIAGNOSTIC_SOURCE,
          severity: DiagnosticSeverity.Warning,
          message: `No ${token.agent} session ${JSON.stringify(sessionId)} was found: prepare would fail to read it.`,
          data: { ...data, kind: 'unknown-session' },
        },
        range,
      );
    }
    const title = listed.get(key);
    const name = title === undefined ? '' : ` ${JSON.stringify(displaySafeLabel(title, sessionId))}`;
    add(
      {
        source: DIAGNOSTIC_SOURCE,
        severity: DiagnosticSeverity.Information,
        message: `dsh itself will not expand this ${token.agent} session${name}: it reads the mention as plain text. Send the prepared message instead (the preview action, or dsh-session-ls prepare).`,
        data,
      },
      range,
    );
  }
}
