import { encodeSessionReferenceUri, SESSION_URI_PREFIX } from '@dsh-session-ls/shared';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonPlain, isJsonSinkSource, type JsonSink } from '../resolver/jsonSink';
import { JsonByteCount, JsonBytes } from './jsonBytes';

/** Strings dense in what JSON escapes: quotes, backslashes, control characters, lone and paired surrogates, multi-byte UTF-8. */
const awkwardString = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', '"', '\\', '\u0000', '\n', '\u001f', '\u007f', ']', 'é', '日', '\u2028', '\ud800', '\udc00', '😀', '\ufeff') }),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units)),
);

function written(write: (out: JsonBytes) => void, initialBytes?: number): string {
  const out = new JsonBytes(initialBytes);
  write(out);
  return out.copy().toString('latin1');
}

const utf8Latin1 = (text: string): string => Buffer.from(text, 'utf-8').toString('latin1');

describe('JsonBytes', () => {
  it('writes text as its UTF-8 bytes, a lone surrogate as U+FFFD', () => {
    fc.assert(
      fc.property(awkwardString, (text) => {
        expect(written((out) => out.raw(text))).toBe(utf8Latin1(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("writes the base64url payload of a session URI exactly as the shared codec makes it", () => {
    fc.assert(
      fc.property(awkwardString, (sessionId) => {
        expect(written((out) => out.base64UrlOfJsonString(sessionId))).toBe(encodeSessionReferenceUri(sessionId).slice(SESSION_URI_PREFIX.length));
      }),
      { numRuns: 2000 },
    );
  });

  it('grows past its first buffer and its scratch room without losing bytes', () => {
    const long = 'x'.repeat(5000) + '日本'.repeat(3000) + '"';
    const text = written((out) => {
      out.raw(JSON.stringify(long));
      out.byte(0x2c);
      out.base64UrlOfJsonString(long);
      out.raw('}');
    }, 4);
    expect(text).toBe(utf8Latin1(`${JSON.stringify(long)},${encodeSessionReferenceUri(long).slice(SESSION_URI_PREFIX.length)}}`));
  });

  it('starts over on reset, keeping nothing of what came before', () => {
    const out = new JsonBytes(8);
    out.raw('abcdefghijklmnop');
    out.reset();
    out.raw('"q"');
    expect(out.length).toBe(3);
    expect(out.copy().toString()).toBe('"q"');
  });

  it('counts, without writing, exactly the bytes it would write for the same calls', () => {
    const call = fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }).map((value) => (out: JsonSink) => out.byte(value)),
      awkwardString.map((text) => (out: JsonSink) => out.raw(text)),
      awkwardString.map((text) => (out: JsonSink) => out.base64UrlOfJsonString(text)),
    );
    fc.assert(
      fc.property(fc.array(call, { maxLength: 12 }), (calls) => {
        const bytes = new JsonBytes(16);
        const count = new JsonByteCount();
        for (const each of calls) {
          each(bytes);
          each(count);
        }
        expect(count.length).toBe(bytes.length);
      }),
      { numRuns: 3000 },
    );
  });

  it('tells plain text from text JSON escapes', () => {
    expect(isJsonPlain('plain text, é 日本 \u2028')).toBe(true);
    for (const text of ['"', '\\', '\n', '\u0000', '\ud800', '😀']) expect(isJsonPlain(`a${text}b`)).toBe(false);
  });

  it('knows an element that writes its own JSON', () => {
    expect(isJsonSinkSource({ writeJson: () => undefined })).toBe(true);
    for (const item of [undefined, null, 1, 'writeJson', { writeJson: 1 }, { toJSON: () => 1 }]) expect(isJsonSinkSource(item)).toBe(false);
  });
});
