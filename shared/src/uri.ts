import { SessionReferenceError } from './errors';
import type { ForeignAgent } from './types';

/** The scheme of a canonical session reference URI, colon included. */
export const SESSION_URI_PREFIX = 'dsh-session:';

const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE64URL_VALUE = new Map<string, number>([...BASE64URL_ALPHABET].map((ch, i) => [ch, i]));
const BASE64URL_PAYLOAD = /^[A-Za-z0-9_-]+$/;

const strictUtf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Unpadded base64url of `text`'s UTF-8 bytes, encoded as they are read: no byte array is made (a
 * 100,000-row answer encodes as many URIs). `text` must be well-formed (no lone surrogates).
 */
function encodeBase64UrlOfUtf8(text: string): string {
  let out = '';
  // Up to three bytes waiting for their four characters, oldest in the highest bits.
  let group = 0;
  let inGroup = 0;
  const push = (byte: number): void => {
    group = (group << 8) | byte;
    if (++inGroup === 3) {
      out += BASE64URL_ALPHABET[group >> 18]! + BASE64URL_ALPHABET[(group >> 12) & 63]! + BASE64URL_ALPHABET[(group >> 6) & 63]! + BASE64URL_ALPHABET[group & 63]!;
      group = 0;
      inGroup = 0;
    }
  };
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      push(code);
      continue;
    }
    if (code < 0x800) {
      push(0xc0 | (code >> 6));
    } else {
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          i++;
        }
      }
      if (code >= 0x10000) {
        push(0xf0 | (code >> 18));
        push(0x80 | ((code >> 12) & 63));
      } else {
        push(0xe0 | (code >> 12));
      }
      push(0x80 | ((code >> 6) & 63));
    }
    push(0x80 | (code & 63));
  }
  if (inGroup === 1) {
    out += BASE64URL_ALPHABET[group >> 2]! + BASE64URL_ALPHABET[(group & 3) << 4]!;
  } else if (inGroup === 2) {
    out += BASE64URL_ALPHABET[group >> 10]! + BASE64URL_ALPHABET[(group >> 4) & 63]! + BASE64URL_ALPHABET[(group & 15) << 2]!;
  }
  return out;
}

/** Decode unpadded base64url leniently (trailing bits ignored); canonicality is checked by re-encoding. */
function decodeBase64Url(payload: string): Uint8Array | undefined {
  if (payload.length % 4 === 1) return undefined;
  const bytes = new Uint8Array(Math.floor((payload.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (const ch of payload) {
    acc = (acc << 6) | BASE64URL_VALUE.get(ch)!;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[o++] = (acc >> bits) & 0xff;
    }
    acc &= (1 << bits) - 1;
  }
  return bytes.subarray(0, o);
}

/** The canonical URI of a session id: `dsh-session:` + unpadded base64url of UTF-8 `JSON.stringify(id)`. */
export function encodeSessionReferenceUri(sessionId: string): string {
  if (typeof sessionId !== 'string') {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'session reference must contain a string sessionId and optional string label');
  }
  // Well-formed JSON.stringify escapes lone surrogates, so the UTF-8 step is lossless.
  return SESSION_URI_PREFIX + encodeBase64UrlOfUtf8(JSON.stringify(sessionId));
}

function invalidUri(uri: unknown, reason: string): SessionReferenceError {
  let shown: string;
  try {
    shown = JSON.stringify(uri) ?? String(uri);
  } catch {
    shown = String(uri);
  }
  return new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', `invalid session reference URI ${shown}`, {
    cause: reason,
  });
}

/** Decode a canonical session URI to its id; anything else is INVALID_REFERENCE. */
export function decodeSessionReferenceUri(uri: string): string {
  if (typeof uri !== 'string') throw invalidUri(uri, 'URI is not a string');
  if (!uri.startsWith(SESSION_URI_PREFIX)) throw invalidUri(uri, 'URI scheme is not dsh-session');
  return decodePayload(uri, SESSION_URI_PREFIX, encodeSessionReferenceUri);
}

/**
 * The schemes of other agents' sessions (ours, not dsh's): the same shape and the same lossless
 * payload as `dsh-session:`, so a foreign mention reads `@[label](claude-session:…)`.
 */
export const FOREIGN_SESSION_URI_PREFIXES: Readonly<Record<ForeignAgent, string>> = Object.freeze({
  'claude-code': 'claude-session:',
  codex: 'codex-session:',
});

/** The URI of a session of `agent` (undefined = dsh, exactly `encodeSessionReferenceUri`). */
export function encodeAgentSessionUri(agent: ForeignAgent | undefined, sessionId: string): string {
  const dsh = encodeSessionReferenceUri(sessionId);
  return agent === undefined ? dsh : FOREIGN_SESSION_URI_PREFIXES[agent] + dsh.slice(SESSION_URI_PREFIX.length);
}

/** The foreign agent whose scheme `uri` starts with, if any. */
export function foreignAgentOfUri(uri: string): ForeignAgent | undefined {
  for (const agent of Object.keys(FOREIGN_SESSION_URI_PREFIXES) as ForeignAgent[]) {
    if (uri.startsWith(FOREIGN_SESSION_URI_PREFIXES[agent])) return agent;
  }
  return undefined;
}

/** Decode a dsh or foreign session URI; `agent` is set only for a foreign one. INVALID_REFERENCE otherwise. */
export function decodeAgentSessionUri(uri: string): { sessionId: string; agent?: ForeignAgent } {
  if (typeof uri !== 'string') throw invalidUri(uri, 'URI is not a string');
  const agent = foreignAgentOfUri(uri);
  if (agent === undefined) return { sessionId: decodeSessionReferenceUri(uri) };
  const sessionId = decodePayload(uri, FOREIGN_SESSION_URI_PREFIXES[agent], (id) => encodeAgentSessionUri(agent, id));
  return { sessionId, agent };
}

function decodePayload(uri: string, prefix: string, encode: (sessionId: string) => string): string {
  const payload = uri.slice(prefix.length);
  if (payload === '') throw invalidUri(uri, 'URI payload is empty');
  if (!BASE64URL_PAYLOAD.test(payload)) throw invalidUri(uri, 'URI payload is not unpadded base64url');
  const bytes = decodeBase64Url(payload);
  if (!bytes) throw invalidUri(uri, 'URI payload has an impossible length');
  let json: string;
  try {
    json = strictUtf8Decoder.decode(bytes);
  } catch {
    throw invalidUri(uri, 'URI payload is not UTF-8');
  }
  let sessionId: unknown;
  try {
    sessionId = JSON.parse(json);
  } catch {
    throw invalidUri(uri, 'URI payload is not JSON');
  }
  if (typeof sessionId !== 'string') throw invalidUri(uri, 'URI payload is not a JSON string');
  if (encode(sessionId) !== uri) throw invalidUri(uri, 'URI is not canonical');
  return sessionId;
}
