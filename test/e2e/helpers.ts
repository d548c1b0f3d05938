/** Shared pieces of the end-to-end tests: the example store, temporary stores, a started server, edits. */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CompletionItem, InitializeParams, InitializeResult, TextEdit } from 'vscode-languageserver-protocol';
import { SessionCommands } from '@dsh-session-ls/shared';
import { DshSessionClient, type DshSessionClientOptions } from '../../server/src/client';
import { LspTestClient, REPO_ROOT, SERVER_BIN, fileUri, pollUntil, type StartOptions } from '../support/lspClient';

/** The bundled example store (raw JSONL, laid out as dsh lays it out). */
export const EXAMPLE_STORE = path.join(REPO_ROOT, 'examples', 'store');

/** The example sessions' working directory: a workspace folder there ranks them first. */
export const WEATHER_APP = '/home/sam/weather-app';

/** The example sessions, by what they are about. */
export const EXAMPLE_SESSIONS = {
  hourly: '0b6f3c1e-5a7d-4c2e-9f11-3d8e2a4b6c01',
  cache: '7d2a9e44-0c61-4b8f-a3d5-6e7f8091a2b3',
  flakyTest: 'c3e8f1a2-4b5d-4f60-8e71-92a3b4c5d6e7',
  httpNotes: 'e5f6a7b8-9c0d-4e1f-a2b3-c4d5e6f7a8b9',
  releaseNames: 'f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9',
} as const;

/** A fresh temporary directory, removed by `removeTemporary`. */
export function temporaryDirectory(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `dsh-session-ls-${prefix}-`));
}

/** Remove a temporary directory. */
export function removeTemporary(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A copy of a store in a temporary directory (for tests that change a store while the server runs). */
export function copyStore(source: string = EXAMPLE_STORE): string {
  const dir = temporaryDirectory('store');
  const root = path.join(dir, 'sessions');
  cpSync(source, root, { recursive: true });
  return root;
}

/**
 * Start the built server with a private cache and DSH_HOME, so a test never touches the user's files;
 * `initialize` with the given params (default: a workspace folder at the example sessions' cwd).
 */
export async function startServer(
  initialize: Partial<InitializeParams> = {},
  options: StartOptions & { settings?: unknown } = {},
): Promise<{ client: LspTestClient; initialized: InitializeResult; cleanup: () => Promise<void> }> {
  const scratch = temporaryDirectory('home');
  const client = LspTestClient.start({
    ...options,
    env: { XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'dsh'), ...options.env },
  });
  client.settings = options.settings ?? null;
  const initialized = await client.initialize({
    workspaceFolders: [{ uri: fileUri(WEATHER_APP), name: 'weather-app' }],
    rootUri: fileUri(WEATHER_APP),
    ...initialize,
  });
  return {
    client,
    initialized,
    cleanup: async () => {
      if (client.running) {
        await client.shutdown().catch(() => client.dispose());
      }
      client.dispose();
      removeTemporary(scratch);
    },
  };
}

/**
 * Start the built server through `dsh-session-ls/client` (server/src/client), with a private cache and
 * DSH_HOME; the default workspace folder is the example sessions' cwd.
 */
export async function startSessionClient(options: DshSessionClientOptions = {}): Promise<{ client: DshSessionClient; cleanup: () => Promise<void> }> {
  const scratch = temporaryDirectory('home');
  const client = await DshSessionClient.start({
    server: SERVER_BIN,
    workspaceFolder: WEATHER_APP,
    cwd: scratch,
    ...options,
    env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'dsh'), ...options.env },
  });
  return {
    client,
    cleanup: async () => {
      await client.shutdown().finally(() => client.dispose());
      removeTemporary(scratch);
    },
  };
}

/** Wait (polling, generous deadline) until `dshSession.candidates` lists `count` sessions: the store is indexed. */
export async function waitForSessions(client: LspTestClient, count: number, query = ''): Promise<void> {
  await pollUntil(async () => {
    const candidates = await client.executeCommand<unknown[]>(SessionCommands.candidates, { query, limit: 10_000 });
    return candidates.length >= count ? true : undefined;
  }, 20_000, `${count} sessions`);
}

/** The text and the cursor of a `|`-marked text. */
export function cursorIn(marked: string): { text: string; position: { line: number; character: number } } {
  const offset = marked.indexOf('|');
  const text = marked.slice(0, offset) + marked.slice(offset + 1);
  return { text, position: TextDocument.create('file:///x', 'markdown', 1, text).positionAt(offset) };
}

/** The text after accepting an item the way an editor does: apply its textEdit. */
export function acceptItem(text: string, item: CompletionItem): string {
  const edit = item.textEdit as TextEdit;
  return TextDocument.applyEdits(TextDocument.create('file:///x', 'markdown', 1, text), [edit]);
}
