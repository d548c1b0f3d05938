import { SessionReferenceError } from './errors';
import { FOREIGN_AGENT_INFO, type ForeignAgent } from './agents';

/** The scheme of a canonical session reference URI, colon included. */
export const SESSION_URI_PREFIX = 'dsh-session:';

const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE64URL_VALUE = new Map<string, number>([...BASE64URL_ALPHABET].map((ch, i) => [ch, i]));
const BASE64URL_PAYLOAD = /^[A-Za-z0-9_-]+$/;

const utf8Encoder = new TextEncoder();
const strictUtf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function encodeBase64Url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += BASE64URL_ALPHABET[n >> 18]! + BASE64URL_ALPHABET[(n >> 12) & 63]! + BASE64URL_ALPHABET[(n >> 6) & 63]! + BASE64URL_ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += BASE64URL_ALPHABET[n >> 18]! + BASE64URL_ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += BASE64URL_ALPHABET[n >> 18]! + BASE64URL_ALPHABET[(n >> 12) & 63]! + BASE64URL_ALPHABET[(n >> 6) & 63]!;
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
  return SESSION_URI_PREFIX + encodeBase64Url(utf8Encoder.encode(JSON.stringify(sessionId)));
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
 * payload as `dsh-session:`, so a foreign mention reads `@[label](<scheme>…)`.
 */
export const FOREIGN_SESSION_URI_PREFIXES: Readonly<Record<ForeignAgent, string>> = Object.freeze(
  Object.fromEntries(FOREIGN_AGENT_INFO.map((info) => [info.name, info.scheme])) as Record<ForeignAgent, string>,
);

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
