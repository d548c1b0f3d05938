import {
  SessionCommands,
  SessionReferenceError,
  foreignAgentChoices,
  formatSessionReferenceMention,
  isForeignAgent,
  parseAgentReferenceText,
  parseSessionReferenceText,
  type CandidatesCommandArgument,
  type ContentBlock,
  type FormatMentionCommandArgument,
  type ParseCommandArgument,
  type PrepareCommandArgument,
  type SessionCommandArgument,
  type SessionCommandName,
  type SessionCommandResult,
} from '@dsh-session-ls/shared';
import {
  commandArgument,
  configOverride,
  optionalString,
  requiredString,
  targetRequest,
  textDocumentUri,
  type CommandArgument,
} from './commandArguments';
import type { MentionCandidateOnWrite } from '../resolver/candidates';
import { UnknownCommandError } from './errors';
import { foreignAgentsEnabled } from './foreignMentions';
import { previewCommand } from './modelPreview';
import type { SessionServices } from './services';
import { transcriptCommand } from './transcript';

function invalidReference(message: string): SessionReferenceError {
  return new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', message);
}

/** The text of an open document, or INVALID_REFERENCE. */
function openDocumentText(services: SessionServices, uri: string): string {
  const document = services.document(uri);
  if (document === undefined) throw invalidReference(`document ${JSON.stringify(uri)} is not open`);
  return document.getText();
}

/**
 * `dshSession.candidates`: mention-carrying candidates for the target, dsh's labels unchanged.
 * `toJson`: the answer only goes to JSON, so its rows may be made as they are written.
 */
export async function listCandidatesCommand(
  argument: CommandArgument<CandidatesCommandArgument>,
  services: SessionServices,
  signal?: AbortSignal,
  toJson = false,
): Promise<SessionCommandResult<typeof SessionCommands.candidates> | MentionCandidateOnWrite[]> {
  const query = optionalString(argument, 'query') ?? '';
  const limit = argument.limit === null ? undefined : argument.limit;
  const resolver = services.resolver(configOverride(argument));
  const documentUri = textDocumentUri(argument);
  const target = await services.resolveTarget(targetRequest(argument), documentUri, signal);
  // The resolver validates the limit (INVALID_REFERENCE) and defaults it to candidateLimit.
  if (toJson) return resolver.listMentionCandidatesOnWrite(target, query, limit as number | undefined, signal);
  return resolver.listMentionCandidates(target, query, limit as number | undefined, signal);
}

/**
 * `dshSession.prepare` in exactly one of its forms: `content` with `references` (used as given), or
 * `text`, or an open `textDocument` (mentions parsed as dsh parses a direct message).
 */
export async function prepareCommand(
  argument: CommandArgument<PrepareCommandArgument>,
  services: SessionServices,
  signal?: AbortSignal,
): Promise<SessionCommandResult<typeof SessionCommands.prepare>> {
  const forms = (['content', 'text', 'textDocument'] as const).filter((field) => argument[field] !== undefined);
  if (forms.length !== 1) {
    throw invalidReference('dshSession.prepare takes exactly one of content (with references), text or textDocument');
  }
  if (forms[0] !== 'content' && argument.references !== undefined) {
    throw invalidReference('references go with content; text and textDocument carry their mentions');
  }
  const resolver = services.resolver(configOverride(argument));
  const documentUri = textDocumentUri(argument);
  let content: ContentBlock[];
  let references: unknown;
  if (forms[0] === 'content') {
    if (!Array.isArray(argument.content)) throw invalidReference('content must be an array of content blocks');
    if (argument.references === undefined) throw invalidReference('content goes with references');
    content = argument.content as ContentBlock[];
    references = argument.references;
  } else {
    const text = forms[0] === 'text' ? requiredString(argument, 'text') : openDocumentText(services, documentUri!);
    // With another agent enabled, its mentions resolve too; by default the text parses exactly as dsh parses it.
    const parsed = foreignAgentsEnabled(services) ? parseAgentReferenceText(text) : parseSessionReferenceText(text);
    content = [{ type: 'text', text: parsed.text }];
    references = parsed.references;
  }
  const target = await services.resolveTarget(targetRequest(argument), documentUri, signal);
  return resolver.prepare(target, content, references, signal);
}

/** `dshSession.parse`: the readable text and the references, as dsh parses a direct message. */
export function parseCommand(argument: CommandArgument<ParseCommandArgument>): SessionCommandResult<typeof SessionCommands.parse> {
  return parseSessionReferenceText(requiredString(argument, 'text'));
}

/** `dshSession.formatMention`: the canonical mention of `{sessionId, label?}`. */
export function formatMentionCommand(
  argument: CommandArgument<FormatMentionCommandArgument>,
): SessionCommandResult<typeof SessionCommands.formatMention> {
  const label = optionalString(argument, 'label');
  const agent = optionalString(argument, 'agent');
  if (agent !== undefined && !isForeignAgent(agent)) throw invalidReference(`agent must be ${foreignAgentChoices()}`);
  return formatSessionReferenceMention({
    sessionId: requiredString(argument, 'sessionId'),
    ...(label === undefined ? {} : { label }),
    ...(agent === undefined ? {} : { agent }),
  });
}

/**
 * One command's handler: its argument object as received (fields unchecked), typed by the shared
 * command map. `toJson`: the answer only goes to JSON, and may then hold values that give that
 * result's JSON when written (`toJSON`) instead of the result itself.
 */
type CommandHandler<C extends SessionCommandName> = (
  argument: CommandArgument<SessionCommandArgument<C>>,
  services: SessionServices,
  signal?: AbortSignal,
  toJson?: boolean,
) => Promise<SessionCommandResult<C> | MentionCandidateOnWrite[]> | SessionCommandResult<C>;

/**
 * The one command table (lsp-contract.md, Commands): every command of `SessionCommandMap`, each with its
 * handler. A command added to the shared map fails to compile here until it has one.
 */
const COMMAND_TABLE: { readonly [C in SessionCommandName]: CommandHandler<C> } = {
  [SessionCommands.candidates]: listCandidatesCommand,
  [SessionCommands.prepare]: prepareCommand,
  [SessionCommands.parse]: parseCommand,
  [SessionCommands.formatMention]: formatMentionCommand,
  [SessionCommands.transcript]: transcriptCommand,
  [SessionCommands.preview]: previewCommand,
};

/** The commands this server answers, in the table's order. */
export const EXECUTABLE_COMMANDS: readonly SessionCommandName[] = Object.freeze(Object.keys(COMMAND_TABLE) as SessionCommandName[]);

function isCommandName(command: unknown): command is SessionCommandName {
  return typeof command === 'string' && Object.hasOwn(COMMAND_TABLE, command);
}

/**
 * Run one command with its `arguments` (exactly one object, or one string of JSON for one); an unknown
 * command is an {@link UnknownCommandError}, a bad argument INVALID_REFERENCE.
 */
export async function executeSessionCommand<C extends SessionCommandName>(
  command: C,
  args: unknown,
  services: SessionServices,
  signal?: AbortSignal,
): Promise<SessionCommandResult<C>>;
export async function executeSessionCommand(command: string, args: unknown, services: SessionServices, signal?: AbortSignal, toJson?: boolean): Promise<unknown>;
export async function executeSessionCommand(command: string, args: unknown, services: SessionServices, signal?: AbortSignal, toJson = false): Promise<unknown> {
  if (!isCommandName(command)) throw new UnknownCommandError(command);
  const handler = COMMAND_TABLE[command] as CommandHandler<SessionCommandName>;
  return handler(commandArgument(command, args) as CommandArgument<SessionCommandArgument<SessionCommandName>>, services, signal, toJson);
}
