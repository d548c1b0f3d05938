import { displaySafeLabel, encodeSessionReferenceUri } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DocumentLink } from 'vscode-languageserver/node';
import { findDocumentMentions } from './mentionAnalysis';

/**
 * `textDocument/documentLink`: each mention whose URI dsh accepts links to its session by that canonical
 * `dsh-session:` URI (the VS Code client opens it as the session's transcript). Needs no store.
 */
export function provideDocumentLinks(document: TextDocument): DocumentLink[] {
  const links: DocumentLink[] = [];
  for (const mention of findDocumentMentions(document.getText())) {
    if (mention.sessionId === undefined) continue;
    links.push({
      range: { start: document.positionAt(mention.token.start), end: document.positionAt(mention.token.end) },
      target: encodeSessionReferenceUri(mention.sessionId),
      tooltip: `Open the session ${displaySafeLabel(mention.label!, mention.sessionId)}`,
    });
  }
  return links;
}
