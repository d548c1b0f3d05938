import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SESSION_URI_PREFIX,
  SessionReferenceError,
  decodeSessionReferenceUri,
  encodeSessionReferenceUri,
} from '@dsh-session-ls/shared';

// An independent oracle for the payload: Node's own base64url of raw bytes (tests may use Node).
const uriOfBytes = (bytes: number[] | string): string =>
  SESSION_URI_PREFIX + (typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes)).toString('base64url');

/** Any JS string, lone surrogates included: built from arbitrary UTF-16 code units. */
const anyUtf16String = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units)),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
);

function expectInvalidUri(uri: string): void {
  let thrown: unknown;
  try {
    decodeSessionReferenceUri(uri);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(SessionReferenceError);
  expect(thrown).toMatchObject({
    name: 'SessionReferenceError',
    code: 'SESSION_REFERENCE_INVALID_REFERENCE',
    message: `invalid session reference URI ${JSON.stringify(uri)}`,
  });
}

describe('encodeSessionReferenceUri', () => {
  it.each([
    ['source', 'dsh-session:InNvdXJjZSI'],
    ['', 'dsh-session:IiI'],
    ['会话', 'dsh-session:IuS8muivnSI'],
    ['demo-1', 'dsh-session:ImRlbW8tMSI'],
    ['demo-2', 'dsh-session:ImRlbW8tMiI'],
  ])('encodes %j as %s', (sessionId, uri) => {
    expect(encodeSessionReferenceUri(sessionId)).toBe(uri);
    expect(decodeSessionReferenceUri(uri)).toBe(sessionId);
  });

  it('uses unpadded base64url of the UTF-8 bytes of JSON.stringify(id)', () => {
    fc.assert(
      fc.property(anyUtf16String, (sessionId) => {
        const uri = encodeSessionReferenceUri(sessionId);
        expect(uri).toBe(uriOfBytes(JSON.stringify(sessionId)));
        expect(uri).toMatch(/^dsh-session:[A-Za-z0-9_-]+$/);
      }),
    );
  });

  it.each([
    ['quotes', '"quoted"'],
    ['backslashes', 'a\\b\\\\'],
    ['newlines', 'line1\nline2\r\n'],
    ['NUL', 'a\u0000b'],
    ['U+2028 and U+2029', 'a\u2028b\u2029'],
    ['a lone high surrogate', 'x\ud800'],
    ['a lone low surrogate', '\udc00y'],
    ['reversed surrogates', '\udc00\ud800'],
    ['an astral character', '😀'],
    ['a BOM', '\ufeffid'],
  ])('round-trips ids with %s', (_what, sessionId) => {
    expect(decodeSessionReferenceUri(encodeSessionReferenceUri(sessionId))).toBe(sessionId);
  });

  it('round-trips every JS string, lone surrogates included', () => {
    fc.assert(
      fc.property(anyUtf16String, (sessionId) => {
        expect(decodeSessionReferenceUri(encodeSessionReferenceUri(sessionId))).toBe(sessionId);
      }),
      { numRuns: 2000 },
    );
  });

  it('rejects a non-string id with INVALID_REFERENCE', () => {
    expect(() => encodeSessionReferenceUri(42 as unknown as string)).toThrow(
      expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' }),
    );
  });
});

describe('decodeSessionReferenceUri rejects', () => {
  it.each([
    ['an upper-case scheme', 'DSH-SESSION:InNvdXJjZSI'],
    ['a partly upper-case scheme', 'Dsh-session:InNvdXJjZSI'],
    ['another scheme', 'session:InNvdXJjZSI'],
    ['a longer scheme', 'dsh-sessions:InNvdXJjZSI'],
    ['a URL-style authority', 'dsh-session://InNvdXJjZSI'],
    ['no scheme', 'InNvdXJjZSI'],
    ['leading whitespace', ' dsh-session:InNvdXJjZSI'],
    ['the empty string', ''],
  ])('%s', (_what, uri) => expectInvalidUri(uri));

  it.each([
    ['an empty payload', 'dsh-session:'],
    ['= padding', 'dsh-session:IiI='],
    ['double = padding', 'dsh-session:InNvdXJjZSI=='],
    ['standard base64 +', 'dsh-session:Ij4+Ig'],
    ['standard base64 /', 'dsh-session:Ij8/Ig'],
    ['a space inside', 'dsh-session:InNv dXJjZSI'],
    ['a trailing newline', 'dsh-session:InNvdXJjZSI\n'],
    ['a percent escape', 'dsh-session:%22%22'],
    ['a non-ASCII letter', 'dsh-session:Ii\u00e9I'],
    ['a full-width letter', 'dsh-session:\uff29iI'],
    ['a dot', 'dsh-session:IiI.'],
  ])('a payload with %s', (_what, uri) => expectInvalidUri(uri));

  it.each([
    ['plain words', 'abc'],
    ['an unterminated string', '"abc'],
    ['trailing garbage', '"a"x'],
    ['two strings', '"a""b"'],
    ['a bare backslash escape', '"\\x"'],
  ])('bytes that are not JSON: %s', (_what, bytes) => expectInvalidUri(uriOfBytes(bytes)));

  it.each([
    ['a lone 0xFF byte', [0x22, 0xff, 0x22]],
    ['a truncated multi-byte sequence', [0x22, 0xe4, 0xbc, 0x22]],
    ['an overlong encoding of "/"', [0x22, 0xc0, 0xaf, 0x22]],
    ['a UTF-8-encoded surrogate (CESU-8)', [0x22, 0xed, 0xa0, 0x80, 0x22]],
    ['a lone continuation byte', [0x22, 0x80, 0x22]],
  ])('bytes that are not UTF-8: %s', (_what, bytes) => expectInvalidUri(uriOfBytes(bytes)));

  it.each([
    ['a number', '1'],
    ['null', 'null'],
    ['true', 'true'],
    ['an object', '{"sessionId":"a"}'],
    ['an array of a string', '["a"]'],
  ])('JSON that is not a string: %s', (_what, json) => expectInvalidUri(uriOfBytes(json)));

  it.each([
    ['non-zero trailing bits (IiJ for "")', 'dsh-session:IiJ'],
    ['non-zero trailing bits of "source"', 'dsh-session:InNvdXJjZSJ'],
    ['an impossible length', 'dsh-session:InNvd'],
    ['whitespace around the JSON', uriOfBytes(' "a" ')],
    ['a BOM before the JSON', uriOfBytes('\ufeff"a"')],
    ['a needless \\u escape', uriOfBytes('"\\u0041"')],
    ['an escaped solidus', uriOfBytes('"a\\/b"')],
    ['an upper-case \\u escape of a lone surrogate', uriOfBytes('"\\uD800"')],
    ['a raw U+2028 escaped as \\u2028', uriOfBytes('"\\u2028"')],
  ])('non-canonical encodings: %s', (_what, uri) => expectInvalidUri(uri));

  it('decodes the canonical URI of a lone surrogate (lower-case \\u escape)', () => {
    expect(decodeSessionReferenceUri(uriOfBytes('"\\ud800"'))).toBe('\ud800');
  });

  it('rejects a non-string URI with INVALID_REFERENCE', () => {
    expect(() => decodeSessionReferenceUri(undefined as unknown as string)).toThrow(
      expect.objectContaining({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_INVALID_REFERENCE' }),
    );
  });
});

describe('decodeSessionReferenceUri on arbitrary input', () => {
  /** Decode, and check the one allowed failure and the one allowed success. */
  function checkDecoderContract(uri: string): void {
    let decoded: string;
    try {
      decoded = decodeSessionReferenceUri(uri);
    } catch (error) {
      expect(error).toBeInstanceOf(SessionReferenceError);
      expect((error as SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
      expect((error as SessionReferenceError).message).toBe(`invalid session reference URI ${JSON.stringify(uri)}`);
      return;
    }
    // Accepted only if it is exactly what the encoder produces for the decoded id.
    expect(encodeSessionReferenceUri(decoded)).toBe(uri);
  }

  const payloadAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ %';

  it('only throws INVALID_REFERENCE and only accepts canonical URIs (arbitrary strings)', () => {
    fc.assert(
      fc.property(anyUtf16String, (suffix) => checkDecoderContract(SESSION_URI_PREFIX + suffix)),
      { numRuns: 1000 },
    );
    fc.assert(fc.property(anyUtf16String, checkDecoderContract), { numRuns: 500 });
  });

  it('only throws INVALID_REFERENCE and only accepts canonical URIs (base64url-looking payloads)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...payloadAlphabet), maxLength: 24 }), (payload) =>
        checkDecoderContract(SESSION_URI_PREFIX + payload),
      ),
      { numRuns: 3000 },
    );
  });

  it('only throws INVALID_REFERENCE and only accepts canonical URIs (base64url of arbitrary bytes)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 24 }),
          // Mostly-JSON-string bytes, so the canonicality check is exercised, not just the parser.
          fc.uint8Array({ maxLength: 12 }).map((inner) => Uint8Array.from([0x22, ...inner, 0x22])),
        ),
        fc.nat(63),
        (bytes, trailingBits) => {
          const uri = uriOfBytes([...bytes]);
          checkDecoderContract(uri);
          // The same payload with its unused trailing bits disturbed.
          const last = uri.at(-1)!;
          const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
          if (bytes.length > 0) checkDecoderContract(uri.slice(0, -1) + alphabet[(alphabet.indexOf(last) ^ trailingBits) & 63]);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
