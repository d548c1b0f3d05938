import {
  formatSessionReferenceMention,
  SESSION_URI_PREFIX,
  type SessionReferenceCandidate,
  type SessionReferenceMentionCandidate,
} from '@dsh-session-ls/shared';
import type { StoredSessionSummary } from './sessionStore';
import { isJsonPlain, type JsonSink, type JsonSinkSource } from './jsonSink';

/** A listed session's label: its latest title, else its id (a failed title read leaves no title). */
export function candidateLabel(summary: StoredSessionSummary): string {
  return typeof summary.title === 'string' ? summary.title : summary.id;
}

/** The row a client sees: exactly `sessionId, label, cwd?, createdAt`, `cwd` absent when unknown. */
export function toCandidate(summary: StoredSessionSummary): SessionReferenceCandidate {
  const label = candidateLabel(summary);
  const candidate: SessionReferenceCandidate =
    summary.cwd === undefined
      ? { sessionId: summary.id, label, createdAt: summary.createdAt }
      : { sessionId: summary.id, label, cwd: summary.cwd, createdAt: summary.createdAt };
  // Another agent's row says so; a dsh row stays exactly `sessionId, label, cwd?, createdAt`.
  if (summary.agent !== undefined) candidate.agent = summary.agent;
  return candidate;
}

/**
 * The row with its mention, as `{ ...toCandidate(summary), mention }` (same keys, same order) but
 * built at once: an answer of 100,000 rows then makes 100,000 objects, not twice as many.
 */
export function toMentionCandidate(summary: StoredSessionSummary): SessionReferenceMentionCandidate {
  const sessionId = summary.id;
  const label = candidateLabel(summary);
  const agent = summary.agent;
  if (agent !== undefined) {
    // Built at once as well (no spread of a candidate): same keys, same order, plus `agent`.
    const mention = formatSessionReferenceMention({ sessionId, label, agent });
    return summary.cwd === undefined
      ? { sessionId, label, createdAt: summary.createdAt, agent, mention }
      : { sessionId, label, cwd: summary.cwd, createdAt: summary.createdAt, agent, mention };
  }
  const mention = formatSessionReferenceMention({ sessionId, label });
  return summary.cwd === undefined
    ? { sessionId, label, createdAt: summary.createdAt, mention }
    : { sessionId, label, cwd: summary.cwd, createdAt: summary.createdAt, mention };
}

/**
 * A {@link toMentionCandidate} row for an answer that only ever goes to JSON (the LSP wire): it
 * keeps the listed summary (listings are rebuilt, never changed in place) and makes the row in
 * `toJSON`. The wire encoder writes a long answer a slice at a time, so a 100,000-row answer no
 * longer holds 100,000 rows and their mentions at once (~20 MiB at 100,000 sessions). `toJSON`
 * takes no key: the row's JSON is the same wherever it sits, which the encoder relies on.
 */
export class MentionCandidateOnWrite implements JsonSinkSource {
  constructor(private readonly summary: StoredSessionSummary) {}

  toJSON(): SessionReferenceMentionCandidate {
    return toMentionCandidate(this.summary);
  }

  /** `JSON.stringify(this)`, written without making the row (the wire encoder's path). */
  writeJson(out: JsonSink): void {
    writeMentionCandidate(out, this.summary);
  }
}

/** What comes between a mention's label and its URI's payload. */
const MENTION_URI_OPENING = `](${SESSION_URI_PREFIX}`;

/** `JSON.stringify(text)`, without its work when the text needs no escape. */
function jsonString(text: string): string {
  return isJsonPlain(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * Writes `JSON.stringify(toMentionCandidate(summary))`, as few pieces as it can: a row's text, then
 * its mention's URI payload. The mention of a dsh session whose label needs neither JSON nor
 * mention escaping is written piece by piece; any other is made as a string first
 * (`formatSessionReferenceMention`), as the row would hold it.
 */
export function writeMentionCandidate(out: JsonSink, summary: StoredSessionSummary): void {
  const sessionId = summary.id;
  const label = candidateLabel(summary);
  const agent = summary.agent;
  const plainLabel = isJsonPlain(label);
  let row = `{"sessionId":${jsonString(sessionId)},"label":${plainLabel ? `"${label}"` : JSON.stringify(label)}`;
  if (summary.cwd !== undefined) row += `,"cwd":${jsonString(summary.cwd)}`;
  row += `,"createdAt":${JSON.stringify(summary.createdAt)}`;
  if (agent !== undefined) row += `,"agent":${jsonString(agent)}`;
  if (agent === undefined && plainLabel && !label.includes(']')) {
    out.raw(`${row},"mention":"@[${label}${MENTION_URI_OPENING}`);
    out.base64UrlOfJsonString(sessionId);
    out.raw(')"}');
    return;
  }
  out.raw(`${row},"mention":${JSON.stringify(formatSessionReferenceMention(agent === undefined ? { sessionId, label } : { sessionId, label, agent }))}}`);
}
