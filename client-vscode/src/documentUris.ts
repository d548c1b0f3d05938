import { SESSION_URI_PREFIX, decodeSessionReferenceUri, displaySafeLabel, encodeSessionReferenceUri } from '@dsh-session-ls/shared';

/** The scheme of the read-only "what the model will see" documents. */
export const PREVIEW_SCHEME = 'dsh-preview';
/** The scheme of the read-only session transcripts (the mention URI scheme, so a mention's URI names its transcript). */
export const TRANSCRIPT_SCHEME = 'dsh-session';

/** The parts of a virtual document URI (what `vscode.Uri.from` takes). */
export interface VirtualDocumentUriParts {
  scheme: string;
  path: string;
  query: string;
}

const TITLE_LIMIT = 60;

// A tab title comes from the path's last segment; keep it one readable segment ending in `.md`
// (so VS Code picks Markdown for it).
function documentTitle(text: string): string {
  const oneSegment = text.replace(/[/\\]/g, '-').trim();
  const short = oneSegment.length > TITLE_LIMIT ? oneSegment.slice(0, TITLE_LIMIT - 1) + '…' : oneSegment;
  return `/${short === '' ? 'untitled' : short}.md`;
}

/** The preview document of a source document: titled after the source, the source URI in the query. */
export function previewDocumentUri(sourceUri: string, sourceName: string): VirtualDocumentUriParts {
  return { scheme: PREVIEW_SCHEME, path: documentTitle(`${sourceName} (model view)`), query: sourceUri };
}

/** The source document a preview document shows. */
export function sourceOfPreviewDocument(uri: { query: string }): string {
  return uri.query;
}

/** The transcript document of a session: titled after its label, the canonical URI payload in the query. */
export function transcriptDocumentUri(sessionId: string, label?: string): VirtualDocumentUriParts {
  const payload = encodeSessionReferenceUri(sessionId).slice(SESSION_URI_PREFIX.length);
  return { scheme: TRANSCRIPT_SCHEME, path: documentTitle(displaySafeLabel(label ?? sessionId, sessionId)), query: payload };
}

/**
 * The session a transcript document shows: the payload in the query, or, for a mention's own URI
 * opened as a link (`dsh-session:<payload>`), in the path. INVALID_REFERENCE when not canonical.
 */
export function sessionOfTranscriptDocument(uri: { path: string; query: string }): string {
  return decodeSessionReferenceUri(SESSION_URI_PREFIX + (uri.query !== '' ? uri.query : uri.path));
}
