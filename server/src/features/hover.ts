import { displaySafeLabel } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { MarkupKind, type Hover, type Position } from 'vscode-languageserver-types';
import {
  analyzeDocumentMentions,
  findDocumentMentions,
  readFailureReason,
  sessionOfMention,
  type DocumentMention,
  type MentionAnalysis,
  type MentionedSession,
  type SurfaceReader,
} from './mentionAnalysis';
import { foreignAgentsEnabled } from './foreignMentions';
import { escapeMarkdownText, previewCredentialMask, sessionPreviewMarkdown, type PreviewMask } from './sessionPreview';
import type { SessionServices } from './services';

function bytes(count: number): string {
  return `${count.toLocaleString('en-US')} byte${count === 1 ? '' : 's'}`;
}

/** A label or title in a hover: display-safe, bounded (lsp-contract.md, Completion `label`), inert Markdown. */
function shownLabel(label: string, sessionId: string): string {
  return escapeMarkdownText(displaySafeLabel(label, sessionId));
}

/** What dsh would do about this one session, as bullet lines (our words; session text escaped). */
function sessionFacts(mention: DocumentMention, session: MentionedSession, analysis: MentionAnalysis): string[] {
  const lines: string[] = [];
  const budget = analysis.config.maxReferenceBytes;
  // dsh reads another agent's mention as plain text: only our prepared message expands it.
  const fails = session.agent === undefined ? 'dsh fails the message' : 'prepare fails the message';
  if (session.agent !== undefined) {
    lines.push(`- ${session.agent} session: dsh itself reads this mention as plain text; the prepared message (the preview, or dsh-session-ls prepare) expands it`);
  }
  // The session's own name is its latest title, else its id (dsh's candidate label), as written or as
  // completion inserts it (display-safe and bounded).
  const own = session.title ?? session.sessionId;
  const label = mention.token.label;
  if (mention.token.kind === 'explicit' && label !== own && label !== displaySafeLabel(own, session.sessionId)) {
    lines.push(`- mentioned as: ${shownLabel(label!, session.sessionId)}`);
  }
  if (session.overLimit) {
    lines.push(`- **too many sessions**: this is distinct session ${session.order + 1}, more than maxReferences ${analysis.config.maxReferences}; ${fails}`);
  }
  const fit = session.budget;
  if (fit === undefined) return lines;
  if (!fit.fits) {
    lines.push(`- context: **cannot fit** ${bytes(budget)} even shortened; ${fails}`);
    return lines;
  }
  const { stats } = fit.retained;
  lines.push(`- context: ${bytes(fit.bytes)} of ${bytes(budget)}`);
  if (stats.truncated) {
    const dropped = stats.omittedMessages > 0 ? `${stats.omittedMessages} of ${stats.originalMessages} messages dropped, ` : '';
    lines.push(`- **will be shortened**: ${dropped}${bytes(stats.omittedBytes)} omitted`);
  } else {
    lines.push('- sent whole, not shortened');
  }
  // Kinds and counts, never a value.
  const { credentials } = fit;
  if (credentials.total > 0) {
    const kinds = credentials.byKind.map(({ kind, count }) => `${kind} × ${count}`).join(', ');
    lines.push(
      fit.redacted
        ? `- credentials: ${credentials.total} redacted (${kinds})`
        : `- **credentials sent to the model**: ${credentials.total} (${kinds}); set redactSecrets to replace them`,
    );
  }
  return lines;
}

/** The hover Markdown of one mention in an analysed document. */
export function mentionHoverMarkdown(mention: DocumentMention, analysis: MentionAnalysis, now: number, mask?: PreviewMask): string {
  if (mention.sessionId === undefined) {
    const reason = mention.grammar === 'glued' ? 'the URI runs into the text after it' : escapeMarkdownText(mention.error?.message ?? '');
    if (mention.agent !== undefined) {
      return `**Malformed ${mention.agent} session mention**\n\ndsh reads it as plain text, but prepare refuses the whole message: ${reason}`;
    }
    return `**Malformed session mention**\n\ndsh rejects the whole message: ${reason}`;
  }
  const session = sessionOfMention(analysis, mention)!;
  const name = shownLabel(session.title ?? mention.label ?? session.sessionId, session.sessionId);
  if (session.self) {
    return `**${name}**\n\nThis is the session the message is for: dsh refuses a message that references its own session.`;
  }
  const read = session.read;
  if (read === undefined || !read.ok) {
    const why = read === undefined ? 'not read' : read.notFound && analysis.indexing ? 'not found yet (the store is still being indexed)' : escapeMarkdownText(readFailureReason(read.error));
    return [`**${shownLabel(mention.label ?? session.sessionId, session.sessionId)}**`, '', `This session cannot be read: ${why}`, ...sessionFacts(mention, session, analysis)].join('\n');
  }
  const { header } = read.surface;
  const preview = sessionPreviewMarkdown(
    {
      kind: 'dsh-session',
      sessionId: session.sessionId,
      label: displaySafeLabel(session.title ?? session.sessionId, session.sessionId),
      ...(header.cwd === undefined ? {} : { cwd: header.cwd }),
      createdAt: header.createdAt,
      ...(session.agent === undefined ? {} : { agent: session.agent }),
    },
    read.surface,
    now,
    mask,
  );
  return [preview, '', '---', '', ...sessionFacts(mention, session, analysis)].join('\n');
}

/** `textDocument/hover` on a mention: the session, and what dsh will do with it when the message is sent. */
export async function provideMentionHover(
  document: TextDocument,
  position: Position,
  services: SessionServices,
  signal?: AbortSignal,
  readSurface?: SurfaceReader,
): Promise<Hover | null> {
  const offset = document.offsetAt(position);
  // The end is exclusive for hovers: a cursor just after a mention is over the next character.
  const under = (mentions: readonly DocumentMention[]) => mentions.find((m) => m.token.start <= offset && offset < m.token.end);
  // Other agents' mentions only when one is enabled; by default exactly dsh's.
  const scope = { foreign: foreignAgentsEnabled(services) };
  // Most hovers are not over a mention: answer those without reading any session.
  if (under(findDocumentMentions(document.getText(), scope)) === undefined) return null;
  const analysis = await analyzeDocumentMentions(document, services, signal, readSurface, scope);
  const mention = under(analysis.mentions);
  if (mention === undefined) return null;
  // The preview quotes the session's messages: their credentials are masked there too.
  const read = sessionOfMention(analysis, mention)?.read;
  const mask = read?.ok === true ? await previewCredentialMask(read.surface) : undefined;
  return {
    contents: { kind: MarkupKind.Markdown, value: mentionHoverMarkdown(mention, analysis, services.now(), mask) },
    range: { start: document.positionAt(mention.token.start), end: document.positionAt(mention.token.end) },
  };
}
