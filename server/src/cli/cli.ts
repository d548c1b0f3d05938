import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  AGENTS,
  AGENT_HOME_SETTINGS,
  type AgentHomes,
  describeSessionsRootProblem,
  displaySafeLabel,
  displaySafeText,
  formatAge,
  formatSessionReferenceMention,
  isSessionReferenceError,
  SessionCommands,
  type AgentName,
  type ForeignAgent,
  type CandidatesCommandArgument,
  type PrepareTextArgument,
  type PreparedReferencedMessage,
  type SessionReferenceMentionCandidate,
  type SessionsRootProblem,
} from '@dsh-session-ls/shared';
import { createSessionLanguageService, type TargetRequest } from '../features';
import { describeCredentialTally, detectCredentials, tallyCredentials } from '../resolver';
import { findForeignMentions, foreignAgentsEnabled } from '../features/foreignMentions';
import { SessionWorkspace, type SessionWorkspaceOptions } from '../settings/sessionWorkspace';
import { absoluteSessionsRoot } from '../settings/settings';
import type { SessionStoreService } from '../store/service';
import { UsageError, agentSettingsOfFlags, type Invocation, type OutputFormat } from './commandLine';
import { explainPrepareFailure } from './explain';
import { describeReadError, readInputFile, readInputStdin } from './inputText';
import { AGENT_TITLES, agentsFlagFor, describeEmptyStores, type EmptyStore, type StoreLocations } from './storeHints';
import { didYouMean } from './suggest';

/** Where the CLI reads and writes. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Standard input, read whole (as bytes: they are checked to be UTF-8) for `prepare -`. */
  readStdin(): Promise<Uint8Array>;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** What the CLI needs to open a store. */
export interface CliStoreAccess {
  openStore: (root: string) => SessionStoreService;
  /** Open another agent's store (default: without a persistent cache). */
  openForeignStore?: SessionWorkspaceOptions['openForeignStore'];
  defaultSessionsRoot: (env: NodeJS.ProcessEnv) => string;
}

type Subcommand = Extract<Invocation, { kind: 'candidates' | 'prepare' }>;

// Terminal output of untrusted text: no control characters except line breaks and tabs.
function terminalSafe(text: string): string {
  return text
    .split('\n')
    .map((line) => line.split('\t').map(displaySafeText).join('\t'))
    .join('\n');
}

/**
 * `--agents` checked as the command line's: a name that is not an agent is a usage error that names
 * it (and the agent it most likely means), not the settings' INVALID_CONFIG.
 */
function checkAgentsFlag(value: string): void {
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.find((name) => !(AGENTS as readonly string[]).includes(name));
  if (names.every((name) => name === '')) throw new UsageError(`--agents takes a comma-separated list of ${AGENTS.join(', ')}, not ${JSON.stringify(value)}`);
  if (unknown !== undefined && unknown !== '') {
    throw new UsageError(`--agents takes a comma-separated list of ${AGENTS.join(', ')}; ${JSON.stringify(unknown)} is none of them${didYouMean(unknown, AGENTS)}`);
  }
}

function openWorkspace(invocation: Subcommand, io: CliIo, access: CliStoreAccess): SessionWorkspace {
  if (invocation.agents !== undefined) checkAgentsFlag(invocation.agents);
  const workspace = new SessionWorkspace({
    openStore: access.openStore,
    ...(access.openForeignStore === undefined ? {} : { openForeignStore: access.openForeignStore }),
    defaultSessionsRoot: access.defaultSessionsRoot,
    env: io.env,
    commandLine: {
      ...(invocation.root === undefined ? {} : { sessionsRoot: absoluteSessionsRoot(invocation.root, io.cwd) }),
      ...agentSettingsOfFlags(invocation, io.cwd, absoluteSessionsRoot),
      ...(invocation.kind === 'prepare' && invocation.redactSecrets === true ? { redactSecrets: true } : {}),
    },
  });
  // The current directory plays the workspace folder: the cwd of last resort for ranking.
  workspace.setWorkspace([pathToFileURL(io.cwd).href]);
  return workspace;
}

/** The folders the workspace's stores read. */
function storeLocations(workspace: SessionWorkspace): StoreLocations {
  const settings = workspace.settings();
  const homes = Object.fromEntries(AGENT_HOME_SETTINGS.map((key) => [key, settings[key]])) as AgentHomes;
  return { agents: settings.agents, sessionsRoot: settings.sessionsRoot, ...homes };
}

/** What the candidates listing adds after the root when it found nothing there. */
const ROOT_PROBLEM_NOTE: Record<SessionsRootProblem | 'none', string> = {
  none: '',
  missing: ' (it does not exist yet)',
  'not-a-directory': ' (it is not a directory)',
  inaccessible: ' (it cannot be read)',
};

async function indexedStore(workspace: SessionWorkspace, io: CliIo): Promise<SessionStoreService> {
  workspace.openStoreForSettings();
  const store = workspace.currentStore()!;
  // A script asks once: it gets every session, not the part indexed so far.
  await store.whenIndexed();
  // A root that is there but cannot be read is a mistake worth a warning (a missing one is just empty).
  const problem = store.status().rootProblem;
  if (problem !== undefined && problem !== 'missing') io.stderr.write(`warning: ${terminalSafe(describeSessionsRootProblem(store.root, problem))}\n`);
  return store;
}

/**
 * After the answer is out: the persistent index cache, so the next call on this store adopts the
 * summaries instead of reading every log again (the server writes it a few seconds after its first
 * index; a CLI process is gone by then). A failed write is logged by the store and changes no answer.
 */
async function saveIndexCache(workspace: SessionWorkspace): Promise<void> {
  await workspace.currentStore()?.saveCache?.();
}

/** The sessions each enabled agent's store lists. */
async function sessionCounts(store: SessionStoreService): Promise<Map<AgentName, number>> {
  const counts = new Map<AgentName, number>();
  for (const summary of await store.listSessions()) {
    const agent = summary.agent ?? 'dsh';
    counts.set(agent, (counts.get(agent) ?? 0) + 1);
  }
  return counts;
}

/** Where "No sessions found" looked: the dsh root alone as a bare path (with why it gave none), else each store named. */
function emptyPlaces(empty: readonly EmptyStore[], store: SessionStoreService): string {
  const places = empty.map(({ agent, folder, note }) => {
    const why = agent === 'dsh' && store.status().rootProblem !== undefined ? ROOT_PROBLEM_NOTE[store.status().rootProblem!] : note === undefined ? '' : ` (${note})`;
    const name = empty.length === 1 && agent === 'dsh' ? '' : agent === 'dsh' ? 'the dsh sessions root ' : `the ${AGENT_TITLES[agent]} home `;
    return `${name}${terminalSafe(folder)}${why}`;
  });
  return places.length <= 1 ? places.join('') : `${places.slice(0, -1).join(', ')} or ${places.at(-1)!}`;
}

/** What an empty list says: where nothing was found, or, when the stores have sessions, that none is left to offer. */
function noCandidates(invocation: Extract<Invocation, { kind: 'candidates' }>, empty: readonly EmptyStore[], agents: number, store: SessionStoreService): string {
  if (empty.length === agents) return `No sessions found in ${emptyPlaces(empty, store)}.\n`;
  if (invocation.query !== '') return `No sessions match ${terminalSafe(JSON.stringify(invocation.query))}.\n`;
  // Every listed session is the target, which is never offered.
  return `No sessions found besides the target session ${terminalSafe(JSON.stringify(invocation.target ?? ''))}.\n`;
}

function renderCandidates(candidates: readonly SessionReferenceMentionCandidate[], cut: boolean, now: number): string {
  const lines: string[] = [];
  candidates.forEach((candidate, index) => {
    const label = displaySafeLabel(candidate.label, candidate.sessionId);
    const cwd = candidate.cwd === undefined ? '(no cwd)' : displaySafeText(candidate.cwd);
    lines.push(
      `${String(index + 1).padStart(3)}. ${label}`,
      `     ${formatAge(candidate.createdAt, now)} · ${cwd} · ${candidate.agent === undefined ? '' : `${candidate.agent} · `}${displaySafeText(candidate.sessionId)}`,
      `     ${formatSessionReferenceMention({ sessionId: candidate.sessionId, label, ...(candidate.agent === undefined ? {} : { agent: candidate.agent }) })}`,
    );
  });
  if (cut) lines.push('', `More sessions match; raise --limit to see them.`);
  return lines.join('\n') + '\n';
}

/** A JSON answer as `--json` (indented) or `--jsonl` (one compact line per row of a list, or one line) prints it. */
function renderJson(value: unknown, format: Exclude<OutputFormat, 'text'>): string {
  if (format === 'json') return JSON.stringify(value, null, 2) + '\n';
  const rows = Array.isArray(value) ? value : [value];
  return rows.map((row) => JSON.stringify(row) + '\n').join('');
}

function renderPrepared(prepared: PreparedReferencedMessage): string {
  const text = prepared.content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('\n');
  const lines = ['Message (as the model reads it):', '', terminalSafe(text), ''];
  const context = prepared.additionalContext;
  if (context === undefined) {
    lines.push('No sessions referenced: nothing is added.');
    return lines.join('\n') + '\n';
  }
  lines.push(`Context added for the model (${context.source.references.length} referenced session${context.source.references.length === 1 ? '' : 's'}):`);
  for (const reference of context.source.references) {
    const cut = reference.truncated ? `, ${reference.omittedMessages} messages and ${reference.omittedBytes} bytes omitted` : '';
    lines.push(
      `  - ${reference.agent === undefined ? '' : `[${reference.agent}] `}${displaySafeLabel(reference.label, reference.sessionId)}: ${reference.retainedMessages} of ${reference.originalMessages} messages${cut}`,
    );
  }
  const contextText = context.content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('\n');
  lines.push('', terminalSafe(contextText));
  return lines.join('\n') + '\n';
}

async function candidates(invocation: Extract<Invocation, { kind: 'candidates' }>, io: CliIo, access: CliStoreAccess): Promise<void> {
  const workspace = openWorkspace(invocation, io, access);
  try {
    const store = await indexedStore(workspace, io);
    const requested = invocation.limit ?? workspace.settings().config.candidateLimit;
    // One more than asked tells whether the list was cut.
    const probe = requested < Number.MAX_SAFE_INTEGER ? requested + 1 : requested;
    const argument: CandidatesCommandArgument = {
      query: invocation.query,
      limit: probe,
      target: {
        ...(invocation.target === undefined ? {} : { sessionId: invocation.target }),
        ...(invocation.cwd === undefined ? {} : { cwd: path.resolve(io.cwd, invocation.cwd) }),
      },
    };
    // The same command table the server answers `workspace/executeCommand` from.
    const found = await createSessionLanguageService(workspace).executeCommand(SessionCommands.candidates, [argument]);
    const shown = found.slice(0, requested);
    const locations = storeLocations(workspace);
    // A store that gives nothing may be the wrong folder (checked when there is something to say).
    const empty = shown.length === 0 || locations.agents.length > 1 || locations.agents[0] !== 'dsh' ? describeEmptyStores(locations, await sessionCounts(store)) : [];
    const text = (): string => (shown.length === 0 ? noCandidates(invocation, empty, locations.agents.length, store) : renderCandidates(shown, found.length > shown.length, Date.now()));
    io.stdout.write(invocation.format === 'text' ? text() : renderJson(shown, invocation.format));
    for (const { hint } of empty) if (hint !== undefined) io.stderr.write(`hint: ${terminalSafe(hint)}\n`);
    await saveIndexCache(workspace);
  } finally {
    workspace.dispose();
  }
}

/** The one-line warning for mentions of other agents' sessions that stay plain text (no other agent is on), if any. */
function foreignMentionWarning(text: string): string | undefined {
  const mentions = findForeignMentions(text);
  if (mentions.length === 0) return undefined;
  const agents = [...new Set(mentions.map((mention) => mention.token.agent))].sort() as ForeignAgent[];
  const titles = agents.map((agent) => AGENT_TITLES[agent]).join(' and ');
  const one = mentions.length === 1;
  const what = one ? `a mention of a ${titles} session stays` : `${mentions.length} mentions of ${titles} sessions stay`;
  return `${what} plain text, as dsh reads ${one ? 'it' : 'them'}; to expand ${one ? 'it' : 'them'}, pass ${agentsFlagFor(agents)}`;
}

/** The warning for credentials the context sends (kinds and counts, never values), if it sends any. */
async function credentialWarning(prepared: PreparedReferencedMessage): Promise<string | undefined> {
  const context = prepared.additionalContext?.content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('');
  if (context === undefined) return undefined;
  const tally = tallyCredentials((await detectCredentials(context)).map(({ kind }) => kind));
  if (tally.total === 0) return undefined;
  const what = tally.total === 1 ? '1 credential' : `${tally.total} credentials`;
  return `the context sends ${what} to the model (${describeCredentialTally(tally)}); pass --redact-secrets to replace them`;
}

async function prepare(invocation: Extract<Invocation, { kind: 'prepare' }>, io: CliIo, access: CliStoreAccess): Promise<void> {
  let text: string;
  if (invocation.input.from === 'text') {
    text = invocation.input.text;
  } else if (invocation.input.from === 'file') {
    text = await readInputFile(path.resolve(io.cwd, invocation.input.path));
  } else {
    text = await readInputStdin(() => io.readStdin());
  }
  const workspace = openWorkspace(invocation, io, access);
  try {
    await indexedStore(workspace, io);
    // Without another agent, its mentions are plain text, as dsh reads them: not silently.
    if (!foreignAgentsEnabled(workspace)) {
      const warning = foreignMentionWarning(text);
      if (warning !== undefined) io.stderr.write(`warning: ${terminalSafe(warning)}\n`);
    }
    const target: TargetRequest = { sessionId: invocation.target ?? null };
    const override = invocation.maxReferenceBytes === undefined ? {} : { maxReferenceBytes: invocation.maxReferenceBytes };
    const argument: PrepareTextArgument = { text, target, ...(invocation.maxReferenceBytes === undefined ? {} : { config: override }) };
    let prepared: PreparedReferencedMessage;
    try {
      prepared = await createSessionLanguageService(workspace).executeCommand(SessionCommands.prepare, [argument]);
    } catch (error) {
      throw await explainPrepareFailure(error, { text, services: workspace.view({}), target, override, locations: storeLocations(workspace) });
    }
    io.stdout.write(invocation.format === 'text' ? renderPrepared(prepared) : renderJson(prepared, invocation.format));
    if (!workspace.settings().redactSecrets) {
      const warning = await credentialWarning(prepared);
      if (warning !== undefined) io.stderr.write(`warning: ${warning}\n`);
    }
    await saveIndexCache(workspace);
  } finally {
    workspace.dispose();
  }
}

/** One line for stderr: display-safe, every line break a space. */
function oneLine(message: string): string {
  return displaySafeText(message.replace(/\s*\n\s*/g, ' '));
}

/** Run a CLI subcommand; returns the exit code (0 done, 1 a session-reference error, 2 a usage error or unreadable input). */
export async function runCli(invocation: Subcommand, io: CliIo, access: CliStoreAccess): Promise<number> {
  try {
    if (invocation.kind === 'candidates') await candidates(invocation, io, access);
    else await prepare(invocation, io, access);
    return 0;
  } catch (error) {
    if (isSessionReferenceError(error)) {
      io.stderr.write(`${error.code}: ${oneLine(error.message)}\n`);
      return 1;
    }
    if (error instanceof UsageError) {
      io.stderr.write(`USAGE: ${oneLine(error.message)}\n`);
      return 2;
    }
    // Anything else is unexpected: still one line, its code said once.
    const code = (error as NodeJS.ErrnoException | null)?.code;
    io.stderr.write(`${typeof code === 'string' ? code : 'ERROR'}: ${oneLine(describeReadError(error))}\n`);
    return 1;
  }
}
