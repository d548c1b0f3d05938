import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  describeSessionsRootProblem,
  displaySafeLabel,
  displaySafeText,
  formatAge,
  formatSessionReferenceMention,
  isPositiveSafeInteger,
  isSessionReferenceError,
  SessionCommands,
  type CandidatesCommandArgument,
  type PrepareTextArgument,
  type PreparedReferencedMessage,
  type SessionReferenceMentionCandidate,
  type SessionsRootProblem,
} from '@dsh-session-ls/shared';
import { createSessionLanguageService } from '../features';
import { SessionWorkspace, type SessionWorkspaceOptions } from '../settings/sessionWorkspace';
import { absoluteSessionsRoot, parseAgents } from '../settings/settings';
import type { SessionStoreService } from '../store/service';
import { UsageError, agentSettingsOfFlags, type Invocation } from './commandLine';

/** Where the CLI reads and writes. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Standard input, read whole for `prepare -`. */
  readStdin(): Promise<string>;
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

/** A numeric flag as a number (NaN when it is not a number), so the core's validation names the problem. */
function numberFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return value.trim() === '' ? Number.NaN : Number(value);
}

function openWorkspace(invocation: Subcommand, io: CliIo, access: CliStoreAccess): SessionWorkspace {
  // A bad --agents is a mistake to report (INVALID_CONFIG), not to fall back from.
  if (invocation.agents !== undefined) parseAgents(invocation.agents);
  const workspace = new SessionWorkspace({
    openStore: access.openStore,
    ...(access.openForeignStore === undefined ? {} : { openForeignStore: access.openForeignStore }),
    defaultSessionsRoot: access.defaultSessionsRoot,
    env: io.env,
    commandLine: {
      ...(invocation.root === undefined ? {} : { sessionsRoot: absoluteSessionsRoot(invocation.root, io.cwd) }),
      ...agentSettingsOfFlags(invocation, io.cwd, absoluteSessionsRoot),
    },
  });
  // The current directory plays the workspace folder: the cwd of last resort for ranking.
  workspace.setWorkspace([pathToFileURL(io.cwd).href]);
  return workspace;
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

function renderCandidates(candidates: readonly SessionReferenceMentionCandidate[], cut: boolean, store: SessionStoreService, now: number): string {
  if (candidates.length === 0) {
    const why = ROOT_PROBLEM_NOTE[store.status().rootProblem ?? 'none'];
    return `No sessions found in ${terminalSafe(store.root)}${why}.\n`;
  }
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
    const requested = numberFlag(invocation.limit) ?? workspace.settings().config.candidateLimit;
    // One more than asked tells whether the list was cut; an invalid limit goes to the core as given.
    const probe = isPositiveSafeInteger(requested) && requested < Number.MAX_SAFE_INTEGER ? requested + 1 : requested;
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
    io.stdout.write(
      invocation.json ? JSON.stringify(shown, null, 2) + '\n' : renderCandidates(shown, found.length > shown.length, store, Date.now()),
    );
    await saveIndexCache(workspace);
  } finally {
    workspace.dispose();
  }
}

async function prepare(invocation: Extract<Invocation, { kind: 'prepare' }>, io: CliIo, access: CliStoreAccess): Promise<void> {
  let text: string;
  if (invocation.input.from === 'text') {
    text = invocation.input.text;
  } else if (invocation.input.from === 'file') {
    text = await readFile(path.resolve(io.cwd, invocation.input.path), 'utf8');
  } else {
    text = await io.readStdin();
  }
  const maxReferenceBytes = numberFlag(invocation.maxReferenceBytes);
  const workspace = openWorkspace(invocation, io, access);
  try {
    await indexedStore(workspace, io);
    const argument: PrepareTextArgument = {
      text,
      target: invocation.target === undefined ? { sessionId: null } : { sessionId: invocation.target },
      ...(maxReferenceBytes === undefined ? {} : { config: { maxReferenceBytes } }),
    };
    const prepared = await createSessionLanguageService(workspace).executeCommand(SessionCommands.prepare, [argument]);
    io.stdout.write(invocation.json ? JSON.stringify(prepared, null, 2) + '\n' : renderPrepared(prepared));
    await saveIndexCache(workspace);
  } finally {
    workspace.dispose();
  }
}

/** Run a CLI subcommand; returns the exit code (0 done, 1 a session-reference or I/O error, 2 a usage error). */
export async function runCli(invocation: Subcommand, io: CliIo, access: CliStoreAccess): Promise<number> {
  try {
    if (invocation.kind === 'candidates') await candidates(invocation, io, access);
    else await prepare(invocation, io, access);
    return 0;
  } catch (error) {
    if (isSessionReferenceError(error)) {
      io.stderr.write(`${error.code}: ${error.message}\n`);
      return 1;
    }
    if (error instanceof UsageError) {
      io.stderr.write(`USAGE: ${error.message}\n`);
      return 2;
    }
    const code = (error as NodeJS.ErrnoException | null)?.code;
    io.stderr.write(`${typeof code === 'string' ? code : 'ERROR'}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
