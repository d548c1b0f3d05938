import {
  DIAGNOSTIC_SOURCE,
  decodeAgentSessionUri,
  displaySafeLabel,
  isSessionReferenceError,
  scanAgentSessionMentions,
  type ForeignAgent,
  type SessionMentionToken,
} from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver-types';
import { raceWithSignal, throwIfCancelled } from '../resolver';
import type { SessionServices } from './services';

/** True when another agent than dsh is enabled (`agents` setting): only then are foreign mentions resolved. */
export function foreignAgentsEnabled(services: Pick<SessionServices, 'settings'>): boolean {
  return services.settings().agents.some((agent) => agent !== 'dsh');
}

/** A mention of another agent's session (`claude-session:`, `codex-session:`), decoded or not. */
export interface ForeignMention {
  token: SessionMentionToken & { agent: ForeignAgent };
  sessionId?: string;
}

/** The foreign mentions of a text: those dsh reads as plain text (never overlapping one of dsh's). */
export function findForeignMentions(text: string): ForeignMention[] {
  if (!text.includes('-session:')) return [];
  const found: ForeignMention[] = [];
  for (const token of scanAgentSessionMentions(text)) {
    if (token.agent === undefined) continue;
    const mention: ForeignMention = { token: token as ForeignMention['token'] };
    try {
      mention.sessionId = decodeAgentSessionUri(token.uri).sessionId;
    } catch (error) {
      if (!isSessionReferenceError(error)) throw error;
    }
    found.push(mention);
  }
  return found;
}

/**
 * The diagnostics of a document's foreign mentions, when another agent is enabled: an Information
 * that dsh itself will not expand it (ours does: the Preview action, `dshSession.prepare`,
 * `dsh-session-ls prepare`), an Error for a malformed URI (our prepare refuses the text), a Warning
 * for a session the enabled stores do not list.
 */
export async function foreignMentionDiagnostics(document: TextDocument, services: SessionServices, signal?: AbortSignal): Promise<Diagnostic[]> {
  if (!foreignAgentsEnabled(services)) return [];
  const mentions = findForeignMentions(document.getText());
  if (mentions.length === 0) return [];
  let listed = new Map<string, string | undefined>();
  try {
    const listing = await raceWithSignal(services.sessions.listSessions(signal), signal);
    listed = new Map(listing.filter((s) => s.agent !== undefined).map((s) => [`${s.agent}\u0000${s.id}`, s.title]));
  } catch {
    throwIfCancelled(signal);
  }
  const diagnostics: Diagnostic[] = [];
  for (const { token, sessionId } of mentions) {
    const range = { start: document.positionAt(token.start), end: document.positionAt(token.end) };
    const data = { kind: 'foreign-agent', agent: token.agent, ...(sessionId === undefined ? {} : { sessionId }) };
    if (sessionId === undefined) {
      diagnostics.push({
        range,
        source: DIAGNOSTIC_SOURCE,
        severity: DiagnosticSeverity.Error,
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
        message: `This ${token.agent} mention's URI is not canonical: prepare refuses the whole message.`,
        data: { ...data, kind: 'malformed' },
      });
      continue;
    }
    const key = `${token.agent}\u0000${sessionId}`;
    if (!listed.has(key)) {
      diagnostics.push({
        range,
        source: DIAGNOSTIC_SOURCE,
        severity: services.settings().agents.includes(token.agent) ? DiagnosticSeverity.Warning : DiagnosticSeverity.Information,
        message: services.settings().agents.includes(token.agent)
          ? `No ${token.agent} session ${JSON.stringify(sessionId)} was found: prepare would fail to read it.`
          : `${token.agent} is not among the enabled agents (setting "agents"): prepare would fail to read this mention.`,
        data: { ...data, kind: 'unknown-session' },
      });
    }
    const title = listed.get(key);
    const name = title === undefined ? '' : ` ${JSON.stringify(displaySafeLabel(title, sessionId))}`;
    diagnostics.push({
      range,
      source: DIAGNOSTIC_SOURCE,
      severity: DiagnosticSeverity.Information,
      message: `dsh itself will not expand this ${token.agent} session${name}: it reads the mention as plain text. Send the prepared message instead (the preview action, or dsh-session-ls prepare).`,
      data,
    });
  }
  return diagnostics;
}
