import { displaySafeLabel, encodeAgentSessionUri } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DocumentLink } from 'vscode-languageserver-types';
import { findDocumentMentions, type MentionScope } from './mentionAnalysis';

/**
 * `textDocument/documentLink`: each mention whose URI dsh accepts links to its session by that canonical
 * `dsh-session:` URI (the VS Code client opens it as the session's transcript). With `scope.foreign`
 * (another agent enabled), another agent's mention links by its own canonical URI (its agent's
 * scheme) too. Needs no store.
 */
export function provideDocumentLinks(document: TextDocument, scope: MentionScope = {}): DocumentLink[] {
  const links: DocumentLink[] = [];
  for (const mention of findDocumentMentions(document.getText(), scope)) {
    if (mention.sessionId === undefined) continue;
    const label = displaySafeLabel(mention.label!, mention.sessionId);
    links.push({
      range: { start: document.positionAt(mention.token.start), end: document.positionAt(mention.token.end) },
      target: encodeAgentSessionUri(mention.agent, mention.sessionId),
      tooltip: mention.agent === undefined ? `Open the session ${label}` : `Open the ${mention.agent} session ${label}`,
    });
  }
  return links;
}
