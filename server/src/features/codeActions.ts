import { SessionCommands, displaySafeLabel, formatSessionReferenceMention, sessionCommandParams } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  DiagnosticSeverity,
  type CodeAction,
  type CodeActionContext,
  type Diagnostic,
  type Range,
  type TextEdit,
} from 'vscode-languageserver-types';
import { labelIsStale, mentionDiagnostics, type MentionDiagnosticData } from './diagnostics';
import { findForeignMentions, foreignAgentsEnabled } from './foreignMentions';
import { analyzeDocumentMentions, findDocumentMentions, sessionOfMention, type DocumentMention, type SurfaceReader } from './mentionAnalysis';
import type { SessionServices } from './services';

/** The title of the action that previews what the model will see. */
export const PREVIEW_ACTION_TITLE = 'Preview what the model will see';

function overlaps(mention: DocumentMention, start: number, end: number): boolean {
  return mention.token.start <= end && start <= mention.token.end;
}

function sameRange(a: Range, b: Range): boolean {
  return a.start.line === b.start.line && a.start.character === b.start.character && a.end.line === b.end.line && a.end.character === b.end.character;
}

/** The edit that deletes a mention and one space next to it, so no double space is left behind. */
function removalEdit(document: TextDocument, text: string, mention: DocumentMention): TextEdit {
  let { start, end } = mention.token;
  if (text[end] === ' ') end++;
  else if (start > 0 && text[start - 1] === ' ') start--;
  return { range: { start: document.positionAt(start), end: document.positionAt(end) }, newText: '' };
}

/** The edit that replaces a mention's text, taking along an `@` written right before a bare URI (it would double). */
function replacementEdit(document: TextDocument, text: string, mention: DocumentMention, newText: string): TextEdit {
  const start = mention.token.kind === 'bare' && text[mention.token.start - 1] === '@' ? mention.token.start - 1 : mention.token.start;
  return { range: { start: document.positionAt(start), end: document.positionAt(mention.token.end) }, newText };
}

function edit(document: TextDocument, edits: TextEdit[]) {
  return { changes: { [document.uri]: edits } };
}

/** True when `kind` is wanted by the client's `only` filter (a kind matches itself and its sub-kinds). */
function wanted(kind: string, only: readonly string[] | undefined): boolean {
  return only === undefined || only.some((prefix) => kind === prefix || kind.startsWith(prefix + '.'));
}

/**
 * `textDocument/codeAction` over mentions in `range`: update a stale label to the current title, turn a
 * bare URI into a labelled mention, remove a mention dsh would refuse, and preview what the model will see.
 */
export async function provideCodeActions(
  document: TextDocument,
  range: Range,
  context: CodeActionContext,
  services: SessionServices,
  signal?: AbortSignal,
  readSurface?: SurfaceReader,
): Promise<CodeAction[]> {
  const text = document.getText();
  const start = document.offsetAt(range.start);
  const end = document.offsetAt(range.end);
  // Without a mention in range there is nothing to offer: answer without reading any session.
  const foreignInRange = foreignAgentsEnabled(services) && findForeignMentions(text).some((mention) => overlaps(mention, start, end));
  if (!foreignInRange && !findDocumentMentions(text).some((mention) => overlaps(mention, start, end))) return [];
  const analysis = await analyzeDocumentMentions(document, services, signal, readSurface);
  const diagnostics = mentionDiagnostics(document, analysis, (mention) => overlaps(mention, start, end));
  const actions: CodeAction[] = [];
  const only = context.only;
  for (const mention of analysis.mentions) {
    if (!overlaps(mention, start, end)) continue;
    const mentionRange = { start: document.positionAt(mention.token.start), end: document.positionAt(mention.token.end) };
    const own = diagnostics.filter((d) => sameRange(d.range, mentionRange));
    // The client's copies of our diagnostics, so it can link the fix to them.
    const fixes = (kind: MentionDiagnosticData['kind']): Diagnostic[] =>
      context.diagnostics.filter((d) => sameRange(d.range, mentionRange) && (d.data as MentionDiagnosticData | undefined)?.kind === kind);
    const session = sessionOfMention(analysis, mention);

    if (session !== undefined && labelIsStale(mention, session) && wanted(CodeActionKind.QuickFix, only)) {
      const label = displaySafeLabel(session.title!, session.sessionId);
      actions.push({
        title: `Update the label to the session's title "${label}"`,
        kind: CodeActionKind.QuickFix,
        diagnostics: fixes('stale-label'),
        isPreferred: true,
        edit: edit(document, [replacementEdit(document, text, mention, formatSessionReferenceMention({ sessionId: session.sessionId, label }))]),
      });
    }
    if (session !== undefined && mention.token.kind === 'bare' && wanted(CodeActionKind.RefactorRewrite, only)) {
      const label = displaySafeLabel(session.title ?? session.sessionId, session.sessionId);
      actions.push({
        title: `Write as a labelled mention "@${label}"`,
        kind: CodeActionKind.RefactorRewrite,
        edit: edit(document, [replacementEdit(document, text, mention, formatSessionReferenceMention({ sessionId: session.sessionId, label }))]),
      });
    }
    const errors = own.filter((d) => d.severity === DiagnosticSeverity.Error);
    if (errors.length > 0 && wanted(CodeActionKind.QuickFix, only)) {
      const errorKinds = new Set(errors.map((d) => (d.data as MentionDiagnosticData).kind));
      actions.push({
        title: 'Remove this mention (dsh would refuse the message)',
        kind: CodeActionKind.QuickFix,
        diagnostics: context.diagnostics.filter(
          (d) => sameRange(d.range, mentionRange) && errorKinds.has((d.data as MentionDiagnosticData | undefined)?.kind as MentionDiagnosticData['kind']),
        ),
        edit: edit(document, [removalEdit(document, text, mention)]),
      });
    }
  }
  // A command, not an edit: kind-less, so clients list it with the fixes; not offered under an `only` filter.
  if (only === undefined) {
    actions.push({
      title: PREVIEW_ACTION_TITLE,
      command: { title: PREVIEW_ACTION_TITLE, ...sessionCommandParams(SessionCommands.preview, { textDocument: { uri: document.uri } }) },
    });
  }
  return actions;
}
