import type { ForeignAgent } from './agents';

/** An opaque dsh session id: any JavaScript string. */
export type SessionId = string;

/** One source picked by a host: the id is authoritative, the label is display text. */
export interface SessionReferenceInput {
  sessionId: SessionId;
  label?: string;
  /** Set only for a foreign agent's session; absent means a dsh session. */
  agent?: ForeignAgent;
}

/** One discovery row, as `listCandidates` returns it. */
export interface SessionReferenceCandidate {
  sessionId: SessionId;
  /** Latest title, else the session id. */
  label: string;
  /** Absent (not undefined-valued) when the session has no cwd. */
  cwd?: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Set only for a foreign agent's session (dsh rows never carry it). */
  agent?: ForeignAgent;
}

/** A candidate carrying its canonical `@[label](dsh-session:…)` mention. */
export interface SessionReferenceMentionCandidate extends SessionReferenceCandidate {
  mention: string;
}

/** A text content block. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** A content block of a dsh message; unknown block types pass through untouched. */
export type ContentBlock = TextBlock | { type: string; [key: string]: unknown };

/** Statistics for one referenced session inside the aggregated snapshot. */
export interface SessionReferenceRecord {
  sessionId: string;
  label: string;
  capturedThroughSeq: number | null;
  compacted: boolean;
  originalMessages: number;
  retainedMessages: number;
  omittedMessages: number;
  omittedBytes: number;
  truncated: boolean;
  /** Position in the de-duplicated reference list. */
  inputIndex: number;
  /** Set only for a foreign agent's session. */
  agent?: ForeignAgent;
}

/** The `source` of the context message `prepare` emits. */
export interface SessionReferenceSource {
  kind: 'session-reference';
  form: 'recall';
  version: 1;
  references: SessionReferenceRecord[];
}

/** The minimal user message shape `prepare` emits for the aggregated snapshot. */
export interface UserMessage {
  id: string;
  role: 'user';
  content: ContentBlock[];
  source: SessionReferenceSource;
}

/** What `prepare` returns: the direct content, plus ONE snapshot message when anything is referenced. */
export interface PreparedReferencedMessage {
  content: ContentBlock[];
  additionalContext?: UserMessage;
}

/** One role/text pair of a projected source conversation. */
export interface ProjectedMessage {
  role: 'user' | 'assistant';
  text: string;
}

/** The per-source data object serialised into the model-facing prompt (key order is significant). */
export interface ReferencedSessionData {
  /** Set only for a foreign agent's session (then it is the first key). */
  agent?: ForeignAgent;
  sessionId: string;
  label: string;
  cwd: string | null;
  capturedThroughSeq: number | null;
  conversation: ProjectedMessage[];
}

/** The target: the session a message is being written for (both fields optional). */
export interface SessionReferenceTarget {
  sessionId?: SessionId;
  cwd?: string;
}

/** The result of parsing a direct user message for mentions. */
export interface ParsedSessionReferenceText {
  /** The readable text, each mention replaced by `@` + its label (bare URIs: `@` + id). */
  text: string;
  /** The references in appearance order, duplicates kept. */
  references: Array<{ sessionId: SessionId; label: string; agent?: ForeignAgent }>;
}
