import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IN_CI, REPO_ROOT } from '../../support/conformance';
import { installedServer, installedServerEnv } from '../../support/installedPackage';
import { type EditorTestSession, writeEditorTestStore } from './editorStore';

/** The README configurations the editor tests load (docs/editors/). */
export const EDITOR_DOCS_DIR = path.join(REPO_ROOT, 'docs', 'editors');

/** The per-editor drivers that act like a user in the real editor (test/editors/drivers/). */
export const DRIVERS_DIR = path.join(REPO_ROOT, 'test', 'editors', 'drivers');

/** How long one headless editor run may take before its process group is killed. */
export const EDITOR_RUN_TIMEOUT_MS = 60_000;

/** The vitest timeout of an editor test: longer than the run, so a hung editor reports itself. */
export const EDITOR_TEST_TIMEOUT_MS = EDITOR_RUN_TIMEOUT_MS + 30_000;

/** The text of the prompt file before the driver types `@` at its end (non-ASCII: UTF-16 columns). */
export const PROMPT_LINE = 'Résumé of ';

/** What a driver writes to $DSH_RESULT_FILE. */
export interface EditorResult {
  ok?: boolean;
  error?: string;
  editor?: string;
  steps?: string[];
  /** The completion items the editor's completion path offered, in its order. */
  menu?: Array<{ label: string; insert?: string }>;
  /** What `dshSession.candidates` returned through the editor's client. */
  candidates?: unknown;
  /** Line 1 after accepting the first item. */
  lineAfterAccept?: string;
  /** The `dshSession.prepare` result as the editor's client received it. */
  prepare?: {
    content?: Array<{ type: string; text?: string }>;
    additionalContext?: {
      role?: string;
      content?: Array<{ type: string; text?: string }>;
      source?: { kind?: string; references?: Array<{ sessionId: string; label: string }> };
    };
  };
  [key: string]: unknown;
}

/** One headless editor run: how it ended and what its driver reported. */
export interface EditorRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stderr: string;
  result?: EditorResult;
  /** The store's sessions in server order. */
  sessions: readonly EditorTestSession[];
  /** The store root the run passed as DSH_SESSIONS_ROOT (deleted after the run). */
  storeRoot: string;
  /** The tail of the editor's own LSP log, where it keeps one (Neovim), for failure messages. */
  editorLog?: string;
}

/** The command every editor config starts by default, as the README's snippets say. */
export const DOCUMENTED_COMMAND = ['dsh-session-ls', '--stdio'];

/**
 * Whether an editor plugin is usable, by a probe command that exits 0. Same policy as findProgram:
 * locally a missing plugin is a skip with the reason; under CI=true it throws (CI installs it).
 */
export function findEditorPackage(what: string, probe: () => boolean): { found: boolean; reason?: string } {
  let found: boolean;
  try {
    found = probe();
  } catch {
    found = false;
  }
  if (found) return { found };
  const reason = `${what} is not installed (.ci/install-editors.sh installs it)`;
  if (IN_CI) throw new Error(`CI=true: ${reason}`);
  return { found, reason };
}

/** Options for one scenario run. */
export interface EditorScenario {
  /** The program and its arguments; `{driver}` in an argument is replaced by the driver's path. */
  program: string;
  args: string[];
  /** The driver file under test/editors/drivers/. */
  driver: string;
  /** The config file under docs/editors/ the driver loads (the README snippet). */
  config: string;
}

/**
 * Builds a fresh store and workspace in a temp dir, runs the editor headless on the driver with
 * the README config and the real server, and returns the driver's JSON report.
 */
export async function runEditorScenario(scenario: EditorScenario): Promise<EditorRun> {
  const base = mkdtempSync(path.join(os.tmpdir(), 'dsh-editor-'));
  try {
    const storeRoot = path.join(base, 'sessions');
    const work = path.join(base, 'work');
    const home = path.join(base, 'home');
    for (const dir of [storeRoot, work, home]) mkdirSync(dir, { recursive: true });
    const sessions = writeEditorTestStore(storeRoot);
    const promptFile = path.join(work, 'prompt.md');
    writeFileSync(promptFile, PROMPT_LINE + '\n');
    const resultFile = path.join(base, 'result.json');
    const driver = path.join(DRIVERS_DIR, scenario.driver);
    const config = path.join(EDITOR_DOCS_DIR, scenario.config);

    // A private HOME keeps editor state (logs, caches, lsp-mode's session file) out of the user's.
    // The REAL server as a user installs it: the packed tarball installed into a scratch prefix, its
    // bin first on PATH; the configs start their default `dsh-session-ls --stdio` (no DSH_SESSION_LS_CMD).
    const installed = await installedServer();
    const env: NodeJS.ProcessEnv = { ...installedServerEnv(installed), HOME: home, DSH_SESSIONS_ROOT: storeRoot,
      DSH_EDITOR_CONFIG: config, DSH_TEST_FILE: promptFile, DSH_RESULT_FILE: resultFile, TERM: 'xterm',
      DSH_EXPECTED_CANDIDATES: String(sessions.length) };
    for (const key of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME', 'VIMINIT', 'EMACSLOADPATH', 'DSH_HOME']) delete env[key];

    const ended = await runProcess(scenario.program, scenario.args.map((a) => a.replaceAll('{driver}', driver)), work, env, EDITOR_RUN_TIMEOUT_MS);
    const result = existsSync(resultFile) ? (JSON.parse(readFileSync(resultFile, 'utf8')) as EditorResult) : undefined;
    const nvimLog = path.join(home, '.cache', 'nvim', 'lsp.log');
    const editorLog = existsSync(nvimLog) ? readFileSync(nvimLog, 'utf8').slice(-3000) : undefined;
    return { ...ended, result, sessions, storeRoot, editorLog };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

/** Runs a program in its own process group; on timeout the whole group (editor + server) is killed. */
function runProcess(program: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number):
  Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; timedOut: boolean; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let stderr = '';
    let timedOut = false;
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
    }, timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    // Once the editor is gone, end whatever of its group is left (a server it failed to stop),
    // so `close` is not held open by an inherited pipe.
    child.on('exit', () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* none left */ } });
    child.on('close', (exitCode, signal) => { clearTimeout(timer); resolve({ exitCode, signal, timedOut, stderr }); });
  });
}

/** A one-line account of a failed run, for assertion messages. */
export function describeRun(run: EditorRun): string {
  return JSON.stringify({ exitCode: run.exitCode, signal: run.signal, timedOut: run.timedOut,
    error: run.result?.error, steps: run.result?.steps, serverStderr: run.result?.serverStderr,
    stderr: run.stderr.slice(-2000), editorLog: run.editorLog });
}
