import { TextDocument } from 'vscode-languageserver-textdocument';
import type { InMemorySession } from './inMemorySessionStore';
import { InMemoryStoreService } from './inMemoryStoreService';
import { SessionWorkspace } from '../settings/sessionWorkspace';

/** A workspace over an in-memory store with some open documents, for feature tests. */
export function testWorkspace(
  sessions: InMemorySession[],
  options: { indexing?: boolean; folders?: string[]; documents?: TextDocument[]; section?: unknown; now?: number } = {},
): { workspace: SessionWorkspace; store: InMemoryStoreService } {
  const store = new InMemoryStoreService('/sessions', sessions, { indexing: options.indexing });
  const documents = new Map((options.documents ?? []).map((document) => [document.uri, document]));
  const workspace = new SessionWorkspace({
    openStore: () => store,
    defaultSessionsRoot: () => '/sessions',
    env: {},
    document: (uri) => documents.get(uri),
    now: () => options.now ?? Date.UTC(2026, 0, 10),
  });
  workspace.setWorkspace((options.folders ?? []).map((folder) => `file://${folder}`));
  if (options.section !== undefined) workspace.setSection(options.section);
  workspace.openStoreForSettings();
  return { workspace, store };
}

/** An open Markdown document. */
export function openDocument(uri: string, text: string): TextDocument {
  return TextDocument.create(uri, 'markdown', 1, text);
}
