import {
  FOREIGN_SESSION_URI_PREFIXES,
  SESSION_URI_PREFIX,
  decodeAgentSessionUri,
  decodeSessionReferenceUri,
  displaySafeLabel,
  encodeAgentSessionUri,
  encodeSessionReferenceUri,
  type ForeignAgent,
} from '@dsh-session-ls/shared';

/** The scheme of the read-only "what the model will see" documents. */
export const PREVIEW_SCHEME = 'dsh-preview';
/** The scheme of the read-only session transcripts (the mention URI scheme, so a mention's URI names its transcript). */
export const TRANSCRIPT_SCHEME = 'dsh-session';

/**
 * The schemes of other agents' read-only transcripts: each foreign mention scheme (without its
 * colon), so a foreign mention's URI followed as a link names its transcript too.
 */
export const FOREIGN_TRANSCRIPT_SCHEMES: readonly string[] = Object.values(FOREIGN_SESSION_URI_PREFIXES).map((prefix) => prefix.slice(0, -1));

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

/** The transcript document of a session of any agent (`agent` undefined: dsh's, exactly `transcriptDocumentUri`). */
export function agentTranscriptDocumentUri(sessionId: string, label: string | undefined, agent: ForeignAgent | undefined): VirtualDocumentUriParts {
  const dsh = transcriptDocumentUri(sessionId, label);
  if (agent === undefined) return dsh;
  const prefix = FOREIGN_SESSION_URI_PREFIXES[agent];
  return { ...dsh, scheme: prefix.slice(0, -1), query: encodeAgentSessionUri(agent, sessionId).slice(prefix.length) };
}

/**
 * The session (and, for another agent's, its agent) a transcript document of any of the transcript
 * schemes shows. INVALID_REFERENCE when not canonical.
 */
export function agentSessionOfTranscriptDocument(uri: { scheme: string; path: string; query: string }): { sessionId: string; agent?: ForeignAgent } {
  if (uri.scheme === TRANSCRIPT_SCHEME) return { sessionId: sessionOfTranscriptDocument(uri) };
  return decodeAgentSessionUri(`${uri.scheme}:${uri.query !== '' ? uri.query : uri.path}`);
}
