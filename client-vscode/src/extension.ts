import { SESSION_STATUS_NOTIFICATION, SETTINGS_SECTION } from '@dsh-session-ls/shared';
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';
import { DOCUMENT_SELECTOR, languageClientOptions } from './clientOptions';
import { ExtensionCommands } from './commandIds';
import {
  FOREIGN_TRANSCRIPT_SCHEMES,
  PREVIEW_SCHEME,
  TRANSCRIPT_SCHEME,
  agentSessionOfTranscriptDocument,
  agentTranscriptDocumentUri,
  previewDocumentUri,
  sourceOfPreviewDocument,
} from './documentUris';
import { MarkdownDocuments } from './markdownDocuments';
import { mentionAtOffset } from './mentionAtCursor';
import { planMentionInsertion } from './mentionInsertion';
import { mentionToInsert } from './quickPickItems';
import { describeServerError, isCancellation } from './serverErrors';
import { pickSession } from './sessionPicker';
import { serverOptions } from './serverLaunch';
import { SessionServer } from './sessionServer';
import { isSessionStoreStatus, statusPresentation } from './statusText';

let client: LanguageClient | undefined;

/** Show a failure with its code; a cancellation is not a failure. */
function showError(error: unknown): void {
  if (isCancellation(error)) return;
  void vscode.window.showErrorMessage(describeServerError(error));
}

async function insertReference(server: SessionServer): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Open a text editor to insert a session reference.');
    return;
  }
  const documentUri = editor.document.uri.toString();
  const candidate = await pickSession((query, token) => server.candidates(query, documentUri, token));
  if (!candidate) return;
  const mention = mentionToInsert(candidate);
  await editor.edit((edit) => {
    for (const selection of editor.selections) {
      const lineBefore = editor.document.lineAt(selection.start.line).text.slice(0, selection.start.character);
      const { consumedBefore } = planMentionInsertion(lineBefore, selection.isEmpty);
      edit.replace(new vscode.Range(selection.start.translate(0, -consumedBefore), selection.end), mention);
    }
  });
}

/** Show the preview document of a source document (one per source, whoever asks for it). */
async function showPreviewOf(previews: MarkdownDocuments, sourceUri: string): Promise<void> {
  const name = vscode.Uri.parse(sourceUri).path.split('/').pop() || sourceUri;
  await previews.show(vscode.Uri.from(previewDocumentUri(sourceUri, name)));
}

async function previewPrepared(previews: MarkdownDocuments): Promise<void> {
  const document = vscode.window.activeTextEditor?.document;
  if (!document || vscode.languages.match(DOCUMENT_SELECTOR, document) === 0) {
    void vscode.window.showInformationMessage('Open a Markdown, plain text or prompt file to preview what the model will see.');
    return;
  }
  await showPreviewOf(previews, document.uri.toString());
}

async function openReferencedSession(transcripts: MarkdownDocuments): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const mention = editor && mentionAtOffset(editor.document.getText(), editor.document.offsetAt(editor.selection.active));
  if (!mention) {
    void vscode.window.showInformationMessage('Put the cursor on a session mention, @[label](dsh-session:…), to open its session.');
    return;
  }
  if (mention.error) throw mention.error;
  await transcripts.show(vscode.Uri.from(agentTranscriptDocumentUri(mention.sessionId, mention.label, mention.agent)));
}

/** Run a command body, showing any failure with its code. */
function reporting(body: () => Promise<void>): () => Promise<void> {
  return () => body().catch(showError);
}

/** Start the bundled server and register the commands, content providers and status item. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // The server's own "Preview what the model will see" code action lands in the same preview document.
  const openPreview = (sourceUri: string): Promise<void> => showPreviewOf(previews, sourceUri).catch(showError);
  const languageClient = new LanguageClient(
    'dshSessions',
    'dsh sessions',
    serverOptions(context.asAbsolutePath('dist/server.js')),
    languageClientOptions(vscode.workspace.getConfiguration(SETTINGS_SECTION), openPreview),
  );
  client = languageClient;
  const server = new SessionServer(languageClient);
  const previews = new MarkdownDocuments((uri) => server.preview(sourceOfPreviewDocument(uri)));
  const transcripts = new MarkdownDocuments((uri) => {
    const { sessionId, agent } = agentSessionOfTranscriptDocument(uri);
    return server.transcript(sessionId, agent);
  });

  const status = vscode.window.createStatusBarItem('dshSessions.status', vscode.StatusBarAlignment.Right, 100);
  status.name = 'dsh sessions';
  status.command = { title: 'dsh sessions settings', command: 'workbench.action.openSettings', arguments: [SETTINGS_SECTION] };

  context.subscriptions.push(
    previews,
    transcripts,
    status,
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, previews),
    vscode.workspace.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, transcripts),
    // Other agents' mentions link to their own schemes (one per foreign agent).
    ...FOREIGN_TRANSCRIPT_SCHEMES.map((scheme) => vscode.workspace.registerTextDocumentContentProvider(scheme, transcripts)),
    vscode.workspace.onDidCloseTextDocument((document) => {
      previews.forget(document.uri);
      transcripts.forget(document.uri);
    }),
    vscode.commands.registerCommand(ExtensionCommands.insertReference, reporting(() => insertReference(server))),
    vscode.commands.registerCommand(ExtensionCommands.previewPrepared, reporting(() => previewPrepared(previews))),
    vscode.commands.registerCommand(ExtensionCommands.openReferencedSession, reporting(() => openReferencedSession(transcripts))),
    // Hidden until the server reports its store (an older server never does).
    languageClient.onNotification(SESSION_STATUS_NOTIFICATION, (params: unknown) => {
      if (!isSessionStoreStatus(params)) return;
      const { text, tooltip } = statusPresentation(params);
      status.text = text;
      status.tooltip = tooltip;
      status.show();
    }),
    languageClient.onDidChangeState(({ newState }) => {
      if (newState === State.Stopped) status.hide();
    }),
  );

  try {
    await languageClient.start();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    void vscode.window.showErrorMessage(`dsh sessions: the language server did not start: ${reason}`);
  }
}

/** Stop the server when VS Code unloads the extension. */
export function deactivate(): Promise<void> | undefined {
  const stopping = client?.stop();
  client = undefined;
  return stopping;
}
