import { DIAGNOSTIC_SOURCE, displaySafeLabel, displaySafeText, type SessionReferenceErrorCode } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver-types';
import {
  analyzeDocumentMentions,
  readFailureReason,
  sessionOfMention,
  type DocumentMention,
  type MentionAnalysis,
  type MentionedSession,
  type SurfaceReader,
} from './mentionAnalysis';
import { foreignMentionDiagnostics } from './foreignMentions';
import type { SessionServices } from './services';

/** The order in which `prepare` raises its errors (lsp-contract.md, Diagnostics): the first present is the one dsh reports. */
export const DSH_ERROR_ORDER: readonly SessionReferenceErrorCode[] = [
  'SESSION_REFERENCE_INVALID_REFERENCE',
  'SESSION_REFERENCE_SELF_REFERENCE',
  'SESSION_REFERENCE_TOO_MANY',
  'SESSION_REFERENCE_READ_FAILED',
  'SESSION_REFERENCE_BUDGET_EXCEEDED',
];

/** What a diagnostic is about; code actions route on it. */
export type MentionDiagnosticKind =
  | 'malformed'
  | 'non-canonical'
  | 'glued'
  | 'inside-text'
  | 'self'
  | 'too-many'
  | 'unknown-session'
  | 'unreadable'
  | 'budget-exceeded'
  | 'truncated'
  | 'stale-label';

/** The `data` of every diagnostic this server publishes. */
export interface MentionDiagnosticData {
  kind: MentionDiagnosticKind;
  sessionId?: string;
}

/** A label differs from the session's latest title when it is neither the title nor the title made display-safe. */
export function labelIsStale(mention: DocumentMention, session: MentionedSession): boolean {
  if (mention.token.kind !== 'explicit' || session.title === undefined) return false;
  const label = mention.token.label!;
  return label !== session.title && label !== displaySafeLabel(session.title, session.sessionId);
}

/** Session-provided text inside a diagnostic message: display-safe and quoted. */
function quoted(text: string): string {
  return JSON.stringify(displaySafeText(text));
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The diagnostics of one mention's own text (grammar and position), which need no store. */
function grammarDiagnostics(mention: DocumentMention, text: string): Array<Omit<Diagnostic, 'range'>> {
  const result: Array<Omit<Diagnostic, 'range'>> = [];
  const code = 'SESSION_REFERENCE_INVALID_REFERENCE';
  if (mention.grammar === 'malformed') {
    result.push({
      severity: DiagnosticSeverity.Error,
      code,
      message: `Malformed session mention: ${displaySafeText(mention.error!.message)}. dsh rejects the whole message.`,
      data: { kind: 'malformed' } satisfies MentionDiagnosticData,
    });
  } else if (mention.grammar === 'glued') {
    const glued = text.slice(mention.gluedAt!, mention.token.end);
    result.push({
      severity: DiagnosticSeverity.Error,
      code,
      message:
        `This session URI runs into the text after it (${quoted(glued)}): dsh reads that text as part of the URI ` +
        'and rejects the whole message. Put a space or punctuation after the URI.',
      data: { kind: 'glued' } satisfies MentionDiagnosticData,
    });
  } else if (mention.grammar === 'non-canonical') {
    result.push({
      severity: DiagnosticSeverity.Error,
      code,
      message: `Not a canonical session URI: ${displaySafeText(mention.error!.message)}. dsh rejects the whole message.`,
      data: { kind: 'non-canonical' } satisfies MentionDiagnosticData,
    });
  }
  if (mention.precededBy !== undefined) {
    const rewritten = mention.sessionId === undefined ? '' : ` to ${quoted('@' + mention.sessionId)}`;
    result.push({
      severity: DiagnosticSeverity.Warning,
      message:
        `dsh rewrites this session URI${rewritten} even inside other text (after ${quoted(mention.precededBy)}), ` +
        'and attaches the session. Put a space before it, or write it as a mention.',
      data: { kind: 'inside-text', ...(mention.sessionId === undefined ? {} : { sessionId: mention.sessionId }) } satisfies MentionDiagnosticData,
    });
  }
  return result;
}

/** The diagnostics a decodable mention gets from its session, in dsh's order, then the non-errors. */
function sessionDiagnostics(mention: DocumentMention, session: MentionedSession, analysis: MentionAnalysis): Array<Omit<Diagnostic, 'range'>> {
  const result: Array<Omit<Diagnostic, 'range'>> = [];
  const { sessionId } = session;
  const data = (kind: MentionDiagnosticKind): MentionDiagnosticData => ({ kind, sessionId });
  if (session.self) {
    result.push({
      severity: DiagnosticSeverity.Error,
      code: 'SESSION_REFERENCE_SELF_REFERENCE',
      message: `session ${quoted(sessionId)} cannot reference itself: it is the session this message is for.`,
      data: data('self'),
    });
    return result;
  }
  if (session.overLimit) {
    const max = analysis.config.maxReferences;
    result.push({
      severity: DiagnosticSeverity.Error,
      code: 'SESSION_REFERENCE_TOO_MANY',
      message: `a message may reference at most ${max} sessions; this is the ${ordinal(session.order + 1)} distinct one.`,
      data: data('too-many'),
    });
  }
  const read = session.read;
  if (read !== undefined && !read.ok) {
    // A session the store has not indexed yet may still turn up: say nothing until indexing is done.
    if (!(read.notFound && analysis.indexing)) {
      result.push({
        severity: DiagnosticSeverity.Error,
        code: 'SESSION_REFERENCE_READ_FAILED',
        message: read.notFound
          ? `Unknown session ${quoted(sessionId)}: dsh fails the message (failed to read referenced session: ${displaySafeText(readFailureReason(read.error))}).`
          : `Session ${quoted(sessionId)} cannot be read: ${displaySafeText(readFailureReason(read.error))}. dsh fails the message.`,
        data: data(read.notFound ? 'unknown-session' : 'unreadable'),
      });
    }
  }
  const budget = session.budget;
  if (budget !== undefined && !budget.fits) {
    result.push({
      severity: DiagnosticSeverity.Error,
      code: 'SESSION_REFERENCE_BUDGET_EXCEEDED',
      message: `${budget.error.message} (maxReferenceBytes ${analysis.config.maxReferenceBytes}): even shortened, this session does not fit. dsh fails the message.`,
      data: data('budget-exceeded'),
    });
  } else if (budget !== undefined && budget.retained.stats.truncated) {
    const { stats } = budget.retained;
    const parts: string[] = [];
    if (stats.omittedMessages > 0) parts.push(`${stats.omittedMessages} of ${plural(stats.originalMessages, 'message')} dropped`);
    parts.push(`${plural(stats.omittedBytes, 'UTF-8 byte')} omitted`);
    result.push({
      severity: DiagnosticSeverity.Information,
      message: `dsh will shorten this session to fit ${analysis.config.maxReferenceBytes} bytes: ${parts.join(', ')}.`,
      data: data('truncated'),
    });
  }
  if (labelIsStale(mention, session)) {
    result.push({
      severity: DiagnosticSeverity.Hint,
      message: `The label ${quoted(displaySafeLabel(mention.token.label!, session.sessionId))} no longer matches the session's title ${quoted(displaySafeLabel(session.title!, session.sessionId))}.`,
      data: data('stale-label'),
    });
  }
  return result;
}

/** The diagnostics of an analysed document: every problem dsh would have with each mention, each on the mention's range. */
export function mentionDiagnostics(document: TextDocument, analysis: MentionAnalysis): Diagnostic[] {
  const text = document.getText();
  const diagnostics: Diagnostic[] = [];
  for (const mention of analysis.mentions) {
    const range = { start: document.positionAt(mention.token.start), end: document.positionAt(mention.token.end) };
    const session = sessionOfMention(analysis, mention);
    const found = [...grammarDiagnostics(mention, text), ...(session === undefined ? [] : sessionDiagnostics(mention, session, analysis))];
    for (const diagnostic of found) diagnostics.push({ range, source: DIAGNOSTIC_SOURCE, ...diagnostic });
  }
  return diagnostics;
}

/**
 * The diagnostics of an open document (lsp-contract.md, Diagnostics): they predict what
 * `dshSession.prepare` does with the same text, for the same target and limits.
 */
export async function computeDiagnostics(
  document: TextDocument,
  services: SessionServices,
  signal?: AbortSignal,
  readSurface?: SurfaceReader,
): Promise<Diagnostic[]> {
  const own = mentionDiagnostics(document, await analyzeDocumentMentions(document, services, signal, readSurface));
  // Other agents' mentions: a Hint while their agent is off; more when another agent is enabled (dsh reads them as plain text).
  const foreign = await foreignMentionDiagnostics(document, services, signal);
  return foreign.length === 0 ? own : [...own, ...foreign];
}

/** The code `prepare` fails with for these diagnostics: the first error in dsh's order, or undefined when none is an error. @forTests */
export function predictedPrepareError(diagnostics: readonly Diagnostic[]): SessionReferenceErrorCode | undefined {
  const codes = new Set(diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => d.code));
  return DSH_ERROR_ORDER.find((code) => codes.has(code));
}
