/**
 * `npm start`: the main job of dsh-session-ls, end to end. It starts the real built server over stdio
 * on the bundled example store, completes `@` in an example prompt as an editor would, accepts an
 * item, runs `dshSession.prepare` on the document, and prints what the user and the model see.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SessionCommands, displaySafeText, sessionCommandParams, type SessionCommandResult } from '@dsh-session-ls/shared';
import { StreamMessageReader, StreamMessageWriter, createMessageConnection, type MessageConnection } from 'vscode-jsonrpc/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CompletionItem, CompletionList, InitializeResult, MarkupContent, TextEdit } from 'vscode-languageserver/node';

/** The repository root (this file runs as server/dist/demo/demo.js). */
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const SERVER_BIN = path.join(REPO_ROOT, 'server', 'bin', 'dsh-session-ls.js');
const EXAMPLE_STORE = path.join(REPO_ROOT, 'examples', 'store');
const EXAMPLE_PROMPT = path.join(REPO_ROOT, 'examples', 'prompt.md');
/** The working directory of the example sessions: the demo's editor has it open as its workspace folder. */
const WORKSPACE = '/home/sam/weather-app';
const DOCUMENT_URI = pathToFileURL(path.join(WORKSPACE, 'PROMPT.md')).href;

const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const bold = (text: string): string => (color ? `\u001b[1m${text}\u001b[22m` : text);
const dim = (text: string): string => (color ? `\u001b[2m${text}\u001b[22m` : text);
const say = (text = ''): void => {
  process.stdout.write(text + '\n');
};

/** The document as the editor holds it. */
let document = TextDocument.create(DOCUMENT_URI, 'markdown', 1, readFileSync(EXAMPLE_PROMPT, 'utf8'));

async function edit(connection: MessageConnection, text: string): Promise<void> {
  document = TextDocument.create(DOCUMENT_URI, 'markdown', document.version + 1, text);
  await connection.sendNotification('textDocument/didChange', {
    textDocument: { uri: DOCUMENT_URI, version: document.version },
    contentChanges: [{ text }],
  });
}

/** The text of the editor, cursor shown as ▌, each line behind a gutter. */
function showEditor(cursor: number): void {
  const text = document.getText();
  const shown = text.slice(0, cursor) + '▌' + text.slice(cursor);
  for (const line of shown.replace(/\n$/, '').split('\n')) say(`   ${dim('│')} ${line}`);
}

/** A completion list as an editor popup: label, cwd, age; the first item selected. */
function showList(list: CompletionList, limit = 8): void {
  const items = list.items.slice(0, limit);
  const width = Math.max(...items.map((item) => item.label.length));
  const cwdWidth = Math.max(...items.map((item) => (item.detail ?? '').length));
  items.forEach((item, index) => {
    const marker = index === 0 ? bold('▸') : ' ';
    say(`   ${marker} ${item.label.padEnd(width)}  ${dim((item.detail ?? '').padEnd(cwdWidth))}  ${dim(item.labelDetails?.description ?? '')}`);
  });
  if (list.items.length > items.length) say(dim(`     … ${list.items.length - items.length} more`));
}

/** Markdown as plain terminal text: backslash escapes undone, emphasis markers dropped. */
function markdownToText(markdown: string): string {
  return markdown.replace(/\*\*/g, '').replace(/\\([!-/:-@[-`{-~])/g, '$1');
}

function blockText(blocks: ReadonlyArray<{ type: string; text?: unknown }>): string {
  return blocks.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('\n');
}

/** Complete at the cursor until the list is complete (during the first index the server waits up to 0.7 s, then answers incomplete). */
async function completeWhenIndexed(connection: MessageConnection, cursor: number): Promise<CompletionList> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const list = await connection.sendRequest<CompletionList>('textDocument/completion', {
      textDocument: { uri: DOCUMENT_URI },
      position: document.positionAt(cursor),
      context: { triggerKind: 2, triggerCharacter: '@' },
    });
    if (!list.isIncomplete || Date.now() > deadline) return list;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function run(connection: MessageConnection): Promise<void> {
  const initialized = await connection.sendRequest<InitializeResult>('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(WORKSPACE).href,
    workspaceFolders: [{ uri: pathToFileURL(WORKSPACE).href, name: 'weather-app' }],
    initializationOptions: { sessionsRoot: EXAMPLE_STORE },
    capabilities: { textDocument: { completion: { completionItem: { labelDetailsSupport: true } } } },
  });
  await connection.sendNotification('initialized', {});
  await connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri: DOCUMENT_URI, languageId: 'markdown', version: document.version, text: document.getText() },
  });

  say(bold('dsh-session-ls demo: mention earlier dsh sessions while you write, and see what the model will get'));
  say();
  say(`   server    ${initialized.serverInfo?.name} ${initialized.serverInfo?.version}, over stdio (${path.relative(REPO_ROOT, SERVER_BIN)} --stdio)`);
  say(`   sessions  ${path.relative(REPO_ROOT, EXAMPLE_STORE)}/ (a dsh store, as dsh writes it)`);
  say(`   editor    ${WORKSPACE}/PROMPT.md, in the workspace folder ${WORKSPACE}`);
  say();

  // 1. Type `@`.
  const at = document.getText().lastIndexOf('@') + 1;
  say(bold('1. You type "@" in your prompt'));
  showEditor(at);
  const all = await completeWhenIndexed(connection, at);
  say();
  say('   and the editor pops up your dsh sessions (this folder first, then no cwd, then the rest):');
  showList(all);
  say();

  // 2. Keep typing: the query narrows the list.
  const query = 'cach';
  await edit(connection, document.getText().slice(0, at) + query + document.getText().slice(at));
  const cursor = at + query.length;
  say(bold(`2. You keep typing "@${query}": the server filters by title, id and cwd, as dsh does`));
  const narrowed = await completeWhenIndexed(connection, cursor);
  showList(narrowed);
  const chosen = narrowed.items[0];
  if (chosen === undefined) throw new Error('the example store offered no session for the query');
  const resolved = await connection.sendRequest<CompletionItem>('completionItem/resolve', chosen);
  const preview = markdownToText((resolved.documentation as MarkupContent | undefined)?.value ?? '');
  say();
  say(dim('   the preview beside the list:'));
  for (const line of preview.split('\n').filter((text) => text.trim() !== '' && text.trim() !== '>')) say(dim(`     ${line}`));
  say();

  // 3. Accept: the editor applies the item's textEdit.
  const accepted = TextDocument.applyEdits(document, [chosen.textEdit as TextEdit]);
  await edit(connection, accepted);
  say(bold(`3. You accept "${chosen.label}": the token becomes a dsh mention`));
  const line = document.positionAt(cursor).line;
  showEditor(document.offsetAt({ line, character: Number.MAX_SAFE_INTEGER }));
  say();

  // 4. Prepare, as dsh does when the message is sent.
  const prepared = await connection.sendRequest<SessionCommandResult<typeof SessionCommands.prepare>>(
    'workspace/executeCommand',
    sessionCommandParams(SessionCommands.prepare, { textDocument: { uri: DOCUMENT_URI } }),
  );
  say(bold('4. You send it. dshSession.prepare gives exactly what dsh would:'));
  say();
  say('   the message, as the model reads it:');
  for (const text of blockText(prepared.content).replace(/\n$/, '').split('\n')) say(`   ${dim('│')} ${displaySafeText(text)}`);
  const context = prepared.additionalContext;
  if (context !== undefined) {
    const [reference] = context.source.references;
    say();
    say(
      `   one more message, added for the model: a read-only snapshot of "${reference?.label}" ` +
        `(${reference?.retainedMessages} of ${reference?.originalMessages} messages, ${reference?.truncated ? 'truncated' : 'nothing cut'}):`,
    );
    for (const text of blockText(context.content).split('\n')) say(`   ${dim('│')} ${displaySafeText(text)}`);
  }
  say();
  say(dim(`Try it on your own sessions: npx dsh-session-ls candidates  (reads ~/.dsh/sessions, or $DSH_HOME/sessions)`));

  await connection.sendRequest('shutdown');
  await connection.sendNotification('exit');
}

function main(): void {
  const server = spawn(process.execPath, [SERVER_BIN, '--stdio'], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let serverLog = '';
  server.stderr.setEncoding('utf8');
  server.stderr.on('data', (chunk: string) => (serverLog += chunk));
  const connection = createMessageConnection(new StreamMessageReader(server.stdout), new StreamMessageWriter(server.stdin));
  // The server may ask for settings, a progress token or a registration: a plain editor answers null.
  connection.onRequest((method) => (method === 'workspace/configuration' ? [null] : null));
  connection.listen();
  run(connection).then(
    () => connection.dispose(),
    (error: unknown) => {
      process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n${serverLog}`);
      connection.dispose();
      server.kill();
      process.exitCode = 1;
    },
  );
}

main();
