import {
  isSessionReferenceError,
  parseAgentReferenceText,
  parseSessionReferenceText,
  SessionReferenceError,
  type PreparedReferencedMessage,
  type PreviewCommandArgument,
  type SessionCommandResult,
  type SessionCommands,
} from '@dsh-session-ls/shared';
import {
  REFERENCED_SESSIONS_PROMPT_PREFIX,
  REFERENCED_SESSIONS_PROMPT_SUFFIX,
  describeCredentialTally,
  detectCredentials,
  tagSafeJsonByteLength,
  tallyCredentials,
} from '../resolver';
import { configOverride, requiredString, targetRequest, textDocumentUri, type CommandArgument } from './commandArguments';
import { fencedText } from './markdownBlocks';
import { escapeMarkdownText } from './sessionPreview';
import { foreignAgentsEnabled } from './foreignMentions';
import type { SessionServices } from './services';

function invalidReference(message: string): SessionReferenceError {
  return new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', message);
}

/** Serialised bytes of each source's data object inside a prepared context text (what the budget measures). */
export function sourceBytes(contextText: string): number[] {
  if (!contextText.startsWith(REFERENCED_SESSIONS_PROMPT_PREFIX) || !contextText.endsWith(REFERENCED_SESSIONS_PROMPT_SUFFIX)) return [];
  const json = contextText.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, contextText.length - REFERENCED_SESSIONS_PROMPT_SUFFIX.length);
  // Parsing and re-measuring gives the same bytes: tag-safe JSON round-trips, key order included.
  const data = JSON.parse(json) as unknown[];
  return data.map((entry) => tagSafeJsonByteLength(entry));
}

const readableText = (prepared: PreparedReferencedMessage): string =>
  prepared.content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('\n');

/** How the preview shows the context text's credentials: the text with each marked, and a line saying so. */
interface MarkedContext {
  text: string;
  note?: string;
}

const PLACEHOLDER = /\[REDACTED:([a-z0-9-]+)\]/g;

/**
 * The context text with each credential it sends shown as `[CREDENTIAL:<kind>]` (never its value), and a
 * line that counts them; when `prepare` redacted them, a line that counts the placeholders.
 */
async function markCredentials(text: string, redacted: boolean): Promise<MarkedContext> {
  if (redacted) {
    const tally = tallyCredentials(Array.from(text.matchAll(PLACEHOLDER), (match) => match[1]!));
    return tally.total === 0 ? { text } : { text, note: `${tally.total} credentials were redacted (${describeCredentialTally(tally)}).` };
  }
  const spans = await detectCredentials(text);
  if (spans.length === 0) return { text };
  let marked = '';
  let from = 0;
  for (const { start, end, kind } of spans) {
    marked += `${text.slice(from, start)}[CREDENTIAL:${kind}]`;
    from = end;
  }
  const tally = tallyCredentials(spans.map(({ kind }) => kind));
  return {
    text: marked + text.slice(from),
    note:
      `**${tally.total} credentials are sent to the model** (${describeCredentialTally(tally)}); each is shown below as ` +
      '[CREDENTIAL:kind]. Set redactSecrets to send [REDACTED:kind] instead.',
  };
}

/** The preview of a prepared message: the readable text, each source's bytes against the budget, and the context text. */
export function modelPreviewMarkdown(prepared: PreparedReferencedMessage, maxReferenceBytes: number, marked?: MarkedContext): string {
  const lines = ['# What the model will see', '', '## The message', '', fencedText(readableText(prepared)), ''];
  const context = prepared.additionalContext;
  if (context === undefined) {
    lines.push('No sessions are referenced: nothing else is sent.');
    return lines.join('\n') + '\n';
  }
  const text = context.content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('');
  const sizes = sourceBytes(text);
  lines.push('## Referenced sessions', '', '| # | session | bytes | shortened |', '|---|---|---|---|');
  for (const reference of context.source.references) {
    const size = sizes[reference.inputIndex];
    const shortened = !reference.truncated
      ? 'no'
      : `${reference.omittedMessages} of ${reference.originalMessages} messages dropped, ${reference.omittedBytes} bytes omitted`;
    lines.push(
      `| ${reference.inputIndex + 1} | ${escapeMarkdownText(reference.label)} | ${size ?? '?'} of ${maxReferenceBytes} | ${shortened} |`,
    );
  }
  lines.push('', '## The context message', '');
  if (marked?.note !== undefined) lines.push(marked.note, '');
  lines.push(fencedText(marked?.text ?? text));
  return lines.join('\n') + '\n';
}

/** The preview of a message dsh would refuse: the code and message of the error `prepare` raises. */
export function refusedPreviewMarkdown(error: SessionReferenceError): string {
  return `# What the model will see\n\nNothing: dsh refuses this message with ${error.code}: ${escapeMarkdownText(error.message)}\n`;
}

/**
 * `dshSession.preview {target?, text} | {target?, textDocument}`: Markdown of what the model will see for
 * the message, prepared exactly as `dshSession.prepare` prepares it; a message dsh would refuse shows
 * the refusal. A malformed argument, an unopened document and cancellation are errors.
 */
export async function previewCommand(
  argument: CommandArgument<PreviewCommandArgument>,
  services: SessionServices,
  signal?: AbortSignal,
): Promise<SessionCommandResult<typeof SessionCommands.preview>> {
  const forms = (['text', 'textDocument'] as const).filter((field) => argument[field] !== undefined);
  if (forms.length !== 1 || argument.content !== undefined || argument.references !== undefined) {
    throw invalidReference('dshSession.preview takes exactly one of text or textDocument');
  }
  const documentUri = textDocumentUri(argument);
  let text: string;
  if (forms[0] === 'text') {
    text = requiredString(argument, 'text');
  } else {
    const document = services.document(documentUri!);
    if (document === undefined) throw invalidReference(`document ${JSON.stringify(documentUri)} is not open`);
    text = document.getText();
  }
  const resolver = services.resolver(configOverride(argument));
  const target = await services.resolveTarget(targetRequest(argument), documentUri, signal);
  let prepared: PreparedReferencedMessage;
  try {
    const parsed = foreignAgentsEnabled(services) ? parseAgentReferenceText(text) : parseSessionReferenceText(text);
    prepared = await resolver.prepare(target, [{ type: 'text', text: parsed.text }], parsed.references, signal);
  } catch (error) {
    if (isSessionReferenceError(error) && error.code !== 'SESSION_REFERENCE_CANCELLED') return refusedPreviewMarkdown(error);
    throw error;
  }
  const context = prepared.additionalContext?.content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('');
  const marked = context === undefined ? undefined : await markCredentials(context, resolver.redactsSecrets);
  return modelPreviewMarkdown(prepared, resolver.config.maxReferenceBytes, marked);
}
