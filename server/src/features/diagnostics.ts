import { DIAGNOSTIC_SOURCE, displaySafeLabel, displaySafeText } from '@dsh-session-ls/shared';
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
import { foreignAgentsEnabled, foreignMentionDiagnostics } from './foreignMentions';
import { describeCredentialTally } from '../resolver';
import type { SessionServices } from './services';
import { WorkSlices } from './workSlices';

/** The code of the Warning on a mention whose snapshot sends credentials. */
const REFERENCED_SECRETS = 'REFERENCED_SECRETS';

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
  | 'referenced-secrets'
  | 'stale-label'
  /** The one Information at the end of a list cut at {@link MAX_DIAGNOSTICS_PER_DOCUMENT}. */
  | 'more-left-out';

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

/** The Warning on a mention whose snapshot, as `prepare` sends it (after the byte budget), holds credentials; none otherwise. */
function secretsDiagnostics(session: MentionedSession): Array<Omit<Diagnostic, 'range'>> {
  const budget = session.budget;
  if (budget?.fits !== true || budget.redacted || budget.credentials.total === 0) return [];
  // Kinds and counts only: a credential's value never goes into a diagnostic.
  return [
    {
      severity: DiagnosticSeverity.Warning,
      code: REFERENCED_SECRETS,
      message: `This session's context holds ${plural(budget.credentials.total, 'credential')} (${describeCredentialTally(budget.credentials)}) that will be sent to the model. Set redactSecrets to replace them.`,
      data: { kind: 'referenced-secrets', sessionId: session.sessionId } satisfies MentionDiagnosticData,
    },
  ];
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
  result.push(...secretsDiagnostics(session));
  if (labelIsStale(mention, session)) {
    result.push({
      severity: DiagnosticSeverity.Hint,
      message: `The label ${quoted(displaySafeLabel(mention.token.label!, session.sessionId))} no longer matches the session's title ${quoted(displaySafeLabel(session.title!, session.sessionId))}.`,
      data: data('stale-label'),
    });
  }
  return result;
}

/** How many mentions' findings one pass remembers (a dense document repeats the same few mentions). */
const FINDINGS_MEMO = 4096;

/**
 * Each mention (those `only` accepts) with the diagnostics dsh's view of it gives, still without their
 * range. They depend only on the mention's own text (with the text glued before a bare URI) and its
 * session, so a mention written again gets the same list, computed once.
 */
function* mentionFindings(
  text: string,
  analysis: MentionAnalysis,
  only?: (mention: DocumentMention) => boolean,
  agents: readonly string[] = [],
): Generator<[DocumentMention, ReadonlyArray<Omit<Diagnostic, 'range'>>]> {
  const memo = new Map<string, ReadonlyArray<Omit<Diagnostic, 'range'>>>();
  for (const mention of analysis.mentions) {
    if (only !== undefined && !only(mention)) continue;
    const { token } = mention;
    const key = `${mention.agent ?? ''}\u0000${token.kind}\u0000${text.slice(token.start - (mention.precededBy?.length ?? 0), token.end)}`;
    let found = memo.get(key);
    if (found === undefined) {
      const session = sessionOfMention(analysis, mention);
      if (mention.agent !== undefined) {
        // Another agent's mention has its own diagnostics (foreignMentions.ts); the credentials check is shared, for an enabled agent.
        found = session !== undefined && agents.includes(mention.agent) ? secretsDiagnostics(session) : [];
      } else {
        found = [...grammarDiagnostics(mention, text), ...(session === undefined ? [] : sessionDiagnostics(mention, session, analysis))];
      }
      if (memo.size >= FINDINGS_MEMO) memo.clear();
      memo.set(key, found);
    }
    yield [mention, found];
  }
}

function mentionRange(document: TextDocument, mention: DocumentMention): Diagnostic['range'] {
  return { start: document.positionAt(mention.token.start), end: document.positionAt(mention.token.end) };
}

/**
 * The diagnostics of an analysed document: every problem dsh would have with each mention (of those
 * `only` accepts), each on the mention's range. Uncapped: for a few mentions (code actions); the
 * pushed diagnostics go through {@link computeDiagnostics}.
 */
export function mentionDiagnostics(document: TextDocument, analysis: MentionAnalysis, only?: (mention: DocumentMention) => boolean): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const [mention, found] of mentionFindings(document.getText(), analysis, only)) {
    const range = mentionRange(document, mention);
    for (const diagnostic of found) diagnostics.push({ range, source: DIAGNOSTIC_SOURCE, ...diagnostic });
  }
  return diagnostics;
}

/**
 * How many diagnostics one document gets at most, besides the first error of each code past it and
 * one Information saying how many were left out. A thousand problems is more than anyone reads in an
 * editor, and it keeps a document dense with mentions (a million problems in 20 MB) from costing a
 * publish of hundreds of MB and the editor's time to show it.
 */
export const MAX_DIAGNOSTICS_PER_DOCUMENT = 1000;

/** How many distinct sessions the pushed diagnostics read at most (in order of first mention): more would be cut anyway. */
const MAX_SESSIONS_READ = MAX_DIAGNOSTICS_PER_DOCUMENT;

/**
 * A document's diagnostics, cut at a cap. Past it, a diagnostic is kept only when it is the first
 * error of its code (so the list still predicts `prepare`'s error, the agreement rule); the others
 * are counted, and the list ends with one Information saying so, on the first one left out.
 */
export class CappedDiagnostics {
  private readonly kept: Diagnostic[] = [];
  private readonly errorCodes = new Set<unknown>();
  private leftOut = 0;
  private firstLeftOut: Diagnostic['range'] | undefined;

  constructor(private readonly cap = MAX_DIAGNOSTICS_PER_DOCUMENT) {}

  /** Add one (its range computed only if it is kept; `source` is ours). */
  add(diagnostic: Omit<Diagnostic, 'range'>, range: () => Diagnostic['range']): void {
    const newError = diagnostic.severity === DiagnosticSeverity.Error && !this.errorCodes.has(diagnostic.code);
    if (this.kept.length < this.cap || newError) {
      this.kept.push({ range: range(), source: DIAGNOSTIC_SOURCE, ...diagnostic });
      if (diagnostic.severity === DiagnosticSeverity.Error) this.errorCodes.add(diagnostic.code);
      return;
    }
    this.leftOut++;
    this.firstLeftOut ??= range();
  }

  /** The list: what was kept, then (when any was left out) the Information that says how many. */
  finish(): Diagnostic[] {
    if (this.leftOut === 0) return this.kept;
    const shown = this.kept.length;
    return [
      ...this.kept,
      {
        range: this.firstLeftOut!,
        source: DIAGNOSTIC_SOURCE,
        severity: DiagnosticSeverity.Information,
        message:
          `${this.leftOut.toLocaleString('en-US')} more problems with session mentions in this document are not listed: ` +
          `at most ${this.cap.toLocaleString('en-US')} are (${shown.toLocaleString('en-US')} here, with the first error of each kind). ` +
          'Fix these, or run dsh-session-ls prepare on the file to see what dsh would say.',
        data: { kind: 'more-left-out' } satisfies MentionDiagnosticData,
      },
    ];
  }
}

/**
 * The diagnostics of an open document (lsp-contract.md, Diagnostics): they predict what
 * `dshSession.prepare` does with the same text, for the same target and limits. Bounded for a big
 * document: at most {@link MAX_DIAGNOSTICS_PER_DOCUMENT} (see {@link CappedDiagnostics}), at most
 * as many sessions read, and the work done in slices that give the event loop back, so other
 * documents' requests are answered meanwhile.
 */
export async function computeDiagnostics(
  document: TextDocument,
  services: SessionServices,
  signal?: AbortSignal,
  readSurface?: SurfaceReader,
): Promise<Diagnostic[]> {
  // Other agents' mentions are analysed too when one is enabled: `prepare` sends their snapshots just the same.
  const scope = { foreign: foreignAgentsEnabled(services) };
  const analysis = await analyzeDocumentMentions(document, services, signal, readSurface, scope, MAX_SESSIONS_READ);
  const slices = new WorkSlices(signal);
  const capped = new CappedDiagnostics();
  for (const [mention, found] of mentionFindings(document.getText(), analysis, undefined, services.settings().agents)) {
    if (found.length > 0) {
      const range = (): Diagnostic['range'] => mentionRange(document, mention);
      for (const diagnostic of found) capped.add(diagnostic, range);
    }
    if (slices.due()) await slices.pause();
  }
  // Other agents' mentions: a Hint while their agent is off; more when another agent is enabled (dsh reads them as plain text).
  await foreignMentionDiagnostics(document, services, signal, (diagnostic, range) => capped.add(diagnostic, range));
  return capped.finish();
}
