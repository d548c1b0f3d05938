import { SessionReferenceError } from './errors';
import type { ForeignAgent } from './agents';
import type { ParsedSessionReferenceText, SessionReferenceInput } from './types';
import {
  FOREIGN_SESSION_URI_PREFIXES,
  SESSION_URI_PREFIX,
  decodeAgentSessionUri,
  decodeSessionReferenceUri,
  encodeAgentSessionUri,
  foreignAgentOfUri,
} from './uri';

/** One mention-shaped run of text, as the grammar finds it (not yet decoded). */
export interface SessionMentionToken {
  /** `explicit` = `@[label](uri)`, `bare` = a bare `dsh-session:…` URI. */
  kind: 'explicit' | 'bare';
  /** UTF-16 offset of the first character (the `@`, or the `d` of a bare URI). */
  start: number;
  /** UTF-16 offset just past the last character. */
  end: number;
  /** The URI text as written. */
  uri: string;
  /** Offset of the URI inside the text. */
  uriStart: number;
  /** The unescaped label of an explicit mention; undefined for a bare URI. */
  label?: string;
  /** Set only for another agent's scheme (see `agents.ts`), found by `scanAgentSessionMentions`. */
  agent?: ForeignAgent;
}

/** A token with its URI decoded, or the error dsh would raise for it. */
export type DecodedSessionMention =
  | (SessionMentionToken & { sessionId: string; error?: undefined })
  | (SessionMentionToken & { sessionId?: undefined; error: SessionReferenceError });

const BARE_PAYLOAD_CHAR = /[A-Za-z0-9_-]/;
// `\s` as dsh's expression has it (the same set with or without `u`): every one is a single UTF-16 code unit.
const WHITESPACE = /\s/u;

/** Escape a label for a mention: `\` → `\\`, `]` → `\]`, nothing else. */
export function escapeMentionLabel(label: string): string {
  return label.replace(/[\\\]]/g, (ch) => '\\' + ch);
}

/** Undo label escaping: `\X` → `X` for any X. */
export function unescapeMentionLabel(raw: string): string {
  return raw.replace(/\\([\s\S])/g, '$1');
}

/** The canonical mention `@[label](dsh-session:…)`; the label defaults to the id. */
export function formatSessionReferenceMention(reference: SessionReferenceInput): string {
  if (
    typeof reference !== 'object' ||
    reference === null ||
    typeof reference.sessionId !== 'string' ||
    (reference.label !== undefined && typeof reference.label !== 'string')
  ) {
    throw new SessionReferenceError(
      'SESSION_REFERENCE_INVALID_REFERENCE',
      'session reference must contain a string sessionId and optional string label',
    );
  }
  const label = reference.label ?? reference.sessionId;
  // A foreign session gets its own scheme; a dsh one (no agent) exactly dsh's mention.
  const agent = reference.agent !== undefined && reference.agent in FOREIGN_SESSION_URI_PREFIXES ? reference.agent : undefined;
  // Joined rather than concatenated: one flat string, not a tree of five (an answer listing 100,000
  // sessions holds as many mentions).
  return ['@[', escapeMentionLabel(label), '](', encodeAgentSessionUri(agent, reference.sessionId), ')'].join('');
}

/** True for the characters JavaScript's `.` never matches: the line terminators. */
function isLineTerminator(code: number): boolean {
  return code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029;
}

/**
 * The mention grammar, once. dsh's rule is one regular expression (session-reference.md §5):
 *
 *     /@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^\s)]*)\)|(dsh-session:[A-Za-z0-9_-]+)/gu
 *
 * and this is the same match, written as one left-to-right scan that at each position tries an
 * explicit mention, then a bare URI:
 * - label: characters other than `\` and `]`, or `\` + any character but a line terminator
 *   (`.` takes none); a `\` before a line break or at the very end stops the label, and that `@[`
 *   is no explicit mention;
 * - explicit URI: `dsh-session:` + zero or more characters that are neither `)` nor `\s`, then `)`
 *   (so `@[x](dsh-session:)` is a mention, with an empty payload that decoding refuses);
 * - bare URI: `dsh-session:` + one or more `[A-Za-z0-9_-]`.
 * No backtracking is needed: each part can end in only one place. Positions are UTF-16 code units;
 * nothing the grammar tests for is a surrogate, so scanning code units matches the `u` flag's code points.
 *
 * Linear time: a label scan is remembered, because every later `@[` inside it stops where it stopped
 * (it cannot start mid-escape); so is the last URI run, because a run started inside it ends where it ends.
 */
export function scanSessionMentions(text: string): Generator<SessionMentionToken> {
  return scanMentionsWith(text, DSH_PREFIXES);
}

const DSH_PREFIXES: readonly string[] = [SESSION_URI_PREFIX];
const FOREIGN_PREFIXES: readonly string[] = Object.values(FOREIGN_SESSION_URI_PREFIXES);

/** The prefix of `prefixes` that `text` has at `at`, if any. */
function prefixAt(text: string, at: number, prefixes: readonly string[]): string | undefined {
  for (const prefix of prefixes) if (text.startsWith(prefix, at)) return prefix;
  return undefined;
}

/**
 * Every mention our features resolve, in text order: dsh's own tokens exactly as `scanSessionMentions`
 * finds them, plus other agents' scheme tokens (see `agents.ts`, same grammar) that do
 * not overlap one of dsh's. dsh reads foreign mentions as plain text, so whatever dsh finds wins.
 */
export function scanAgentSessionMentions(text: string): SessionMentionToken[] {
  return [...iterateAgentSessionMentions(text)];
}

/** The same tokens as {@link scanAgentSessionMentions}, found as they are asked for (a long text can be scanned in slices). */
export function* iterateAgentSessionMentions(text: string): Generator<SessionMentionToken> {
  const dsh = scanMentionsWith(text, DSH_PREFIXES);
  if (!text.includes('-session:')) {
    yield* dsh;
    return;
  }
  let next = dsh.next();
  for (const token of scanMentionsWith(text, FOREIGN_PREFIXES)) {
    while (!next.done && next.value.end <= token.start) {
      yield next.value;
      next = dsh.next();
    }
    const overlaps = !next.done && next.value.start < token.end;
    if (!overlaps) yield { ...token, agent: foreignAgentOfUri(token.uri) };
  }
  while (!next.done) {
    yield next.value;
    next = dsh.next();
  }
}

function* scanMentionsWith(text: string, prefixes: readonly string[]): Generator<SessionMentionToken> {
  const n = text.length;
  // Memo of the last label scan: any start inside [memoFrom, memoEnd) closes at memoClose (-1 = fails).
  let memoFrom = -1;
  let memoEnd = -1;
  let memoClose = -1;
  // Memo of the last URI run scanned: a run started anywhere inside [uriMemoFrom, uriMemoEnd] ends
  // at uriMemoEnd too, so overlapping runs (many unclosed `](dsh-session:…`) are scanned once.
  let uriMemoFrom = -1;
  let uriMemoEnd = -1;
  let i = 0;
  while (i < n) {
    const ch = text.charCodeAt(i);
    if (ch === 0x40 /* @ */ && text.charCodeAt(i + 1) === 0x5b /* [ */) {
      const labelStart = i + 2;
      let close: number;
      if (labelStart >= memoFrom && labelStart < memoEnd) {
        close = memoClose;
      } else {
        close = -1;
        let j = labelStart;
        while (j < n) {
          const c = text.charCodeAt(j);
          if (c === 0x5c /* \ */) {
            // A backslash escapes the next character, unless there is none or it is a line terminator.
            if (j + 1 >= n || isLineTerminator(text.charCodeAt(j + 1))) break;
            j += 2;
            continue;
          }
          if (c === 0x5d /* ] */) {
            close = j;
            break;
          }
          j++;
        }
        memoFrom = labelStart;
        memoEnd = j;
        memoClose = close;
      }
      const prefix = close !== -1 && text.charCodeAt(close + 1) === 0x28 /* ( */ ? prefixAt(text, close + 2, prefixes) : undefined;
      if (prefix !== undefined) {
        const uriStart = close + 2;
        const runStart = uriStart + prefix.length;
        if (runStart < uriMemoFrom || runStart > uriMemoEnd) {
          let k = runStart;
          while (k < n) {
            const c = text[k]!;
            if (c === ')' || WHITESPACE.test(c)) break;
            k++;
          }
          uriMemoFrom = runStart;
          uriMemoEnd = k;
        }
        const k = uriMemoEnd;
        if (text.charCodeAt(k) === 0x29 /* ) */) {
          yield {
            kind: 'explicit',
            start: i,
            end: k + 1,
            uri: text.slice(uriStart, k),
            uriStart,
            label: unescapeMentionLabel(text.slice(labelStart, close)),
          };
          i = k + 1;
          continue;
        }
      }
    } else if ((ch === 0x64 /* d */ || ch === 0x63) /* c */ && prefixAt(text, i, prefixes) !== undefined) {
      const prefixLength = prefixAt(text, i, prefixes)!.length;
      let k = i + prefixLength;
      while (k < n && BARE_PAYLOAD_CHAR.test(text[k]!)) k++;
      if (k > i + prefixLength) {
        yield { kind: 'bare', start: i, end: k, uri: text.slice(i, k), uriStart: i };
        i = k;
        continue;
      }
    }
    i++;
  }
}

/** Decode one token's URI, keeping the error instead of throwing (for diagnostics). */
export function decodeSessionMention(token: SessionMentionToken): DecodedSessionMention {
  try {
    if (token.agent !== undefined) return { ...token, sessionId: decodeAgentSessionUri(token.uri).sessionId };
    return { ...token, sessionId: decodeSessionReferenceUri(token.uri) };
  } catch (error) {
    if (error instanceof SessionReferenceError) return { ...token, error };
    throw error;
  }
}

/**
 * Parse a direct user message as dsh does: each mention becomes `@` + label (bare URI: `@` + id)
 * and yields `{sessionId, label}` in appearance order, duplicates kept. Any bad URI fails the
 * whole text with INVALID_REFERENCE.
 */
export function parseSessionReferenceText(text: string): ParsedSessionReferenceText {
  if (typeof text !== 'string') {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'session reference text must be a string');
  }
  let out = '';
  let last = 0;
  const references: ParsedSessionReferenceText['references'] = [];
  for (const token of scanSessionMentions(text)) {
    const sessionId = decodeSessionReferenceUri(token.uri);
    const label = token.label ?? sessionId;
    out += text.slice(last, token.start) + '@' + label;
    last = token.end;
    references.push({ sessionId, label });
  }
  return { text: out + text.slice(last), references };
}

/**
 * `parseSessionReferenceText`, also resolving other agents' mentions (their schemes in `agents.ts`):
 * what our `prepare` uses. dsh's mentions parse exactly as dsh parses them; each foreign reference
 * carries its `agent`. Any bad URI fails the whole text with INVALID_REFERENCE.
 */
export function parseAgentReferenceText(text: string): ParsedSessionReferenceText {
  if (typeof text !== 'string') {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'session reference text must be a string');
  }
  let out = '';
  let last = 0;
  const references: ParsedSessionReferenceText['references'] = [];
  for (const token of scanAgentSessionMentions(text)) {
    const { sessionId, agent } = decodeAgentSessionUri(token.uri);
    const label = token.label ?? sessionId;
    out += text.slice(last, token.start) + '@' + label;
    last = token.end;
    references.push(agent === undefined ? { sessionId, label } : { sessionId, label, agent });
  }
  return { text: out + text.slice(last), references };
}
