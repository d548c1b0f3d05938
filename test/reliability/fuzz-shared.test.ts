/**
 * Fuzzing the shared contract: the URI codec, the mention grammar, tag-safe JSON and
 * the config. Only SessionReferenceErrors with the right code may escape; every round trip holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SESSION_URI_PREFIX,
  decodeSessionReferenceUri,
  encodeSessionReferenceUri,
  escapeMentionLabel,
  formatSessionReferenceMention,
  parseSessionReferenceText,
  resolveSessionReferenceConfig,
  scanSessionMentions,
  stringifyTagSafeJson,
  SESSION_REFERENCE_CONFIG_KEYS,
} from '@dsh-session-ls/shared';
import { grammarText, hostileText, sessionIdArb, utf16String } from './support/arbitraries';
import { outcomeOf } from './support/outcome';
import { FUZZ_RUNS, recordFigure } from './support/scale';

const runs = { numRuns: FUZZ_RUNS };
recordFigure('fuzz-shared', 'runs per property', FUZZ_RUNS);

const CANONICAL_URI = /^dsh-session:[A-Za-z0-9_-]+$/;

describe('URI codec', () => {
  it('every JS string round-trips through its canonical URI', () => {
    fc.assert(
      fc.property(fc.oneof(utf16String(64), sessionIdArb, fc.string({ unit: 'binary' })), (id) => {
        const uri = encodeSessionReferenceUri(id);
        expect(uri).toMatch(CANONICAL_URI);
        expect(decodeSessionReferenceUri(uri)).toBe(id);
      }),
      runs,
    );
  });

  it('any string either decodes to an id whose canonical URI it is, or is INVALID_REFERENCE naming the URI', () => {
    const uriLike = fc.oneof(
      utf16String(40),
      fc.string({ unit: 'binary-ascii' }).map((payload) => SESSION_URI_PREFIX + payload),
      fc.stringMatching(/^[A-Za-z0-9_=+/-]{0,24}$/).map((payload) => SESSION_URI_PREFIX + payload),
      // Mutations of canonical URIs: one character replaced, inserted or removed.
      fc.tuple(sessionIdArb, fc.nat(), fc.constantFrom('', 'A', '_', '-', '=', 'z', '0', '+', '/', ' ')).map(([id, at, ch]) => {
        const uri = encodeSessionReferenceUri(id);
        const i = SESSION_URI_PREFIX.length + (at % (uri.length - SESSION_URI_PREFIX.length + 1));
        return at % 2 === 0 ? uri.slice(0, i) + ch + uri.slice(i + 1) : uri.slice(0, i) + ch + uri.slice(i);
      }),
    );
    fc.assert(
      fc.property(uriLike, (uri) => {
        const result = outcomeOf(() => decodeSessionReferenceUri(uri));
        if (result.ok) {
          expect(encodeSessionReferenceUri(result.value)).toBe(uri);
        } else {
          expect(result.error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
          expect(result.error.message).toBe(`invalid session reference URI ${JSON.stringify(uri)}`);
        }
      }),
      runs,
    );
  });

  it('non-string inputs are INVALID_REFERENCE, never a TypeError', () => {
    const notString = fc.anything().filter((value) => typeof value !== 'string');
    fc.assert(
      fc.property(notString, (value) => {
        for (const call of [() => decodeSessionReferenceUri(value as string), () => encodeSessionReferenceUri(value as string)]) {
          const result = outcomeOf(call);
          expect(result.ok).toBe(false);
          if (!result.ok) expect(result.error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
        }
      }),
      runs,
    );
  });
});

describe('mention grammar', () => {
  it('a formatted mention parses back to its id and label, and reads as @ + label', () => {
    fc.assert(
      fc.property(sessionIdArb, fc.option(fc.oneof(hostileText(6), utf16String(16)), { nil: undefined }), (sessionId, label) => {
        const mention = formatSessionReferenceMention(label === undefined ? { sessionId } : { sessionId, label });
        expect(mention).toBe(`@[${escapeMentionLabel(label ?? sessionId)}](${encodeSessionReferenceUri(sessionId)})`);
        const parsed = parseSessionReferenceText(mention);
        expect(parsed.references).toEqual([{ sessionId, label: label ?? sessionId }]);
        expect(parsed.text).toBe('@' + (label ?? sessionId));
      }),
      runs,
    );
  });

  it('mentions embedded in plain prose are found in order, duplicates kept, and nothing else changes', () => {
    // Prose that cannot itself open a mention or a bare URI (no `@`, `[`, `]`, `\`, `:`).
    const prose = utf16String(12).map((text) => text.replace(/[@[\]\\:]/g, ''));
    const reference = fc.record({ sessionId: sessionIdArb, label: hostileText(4) }, { requiredKeys: ['sessionId'] });
    fc.assert(
      fc.property(prose, fc.array(fc.tuple(reference, prose), { maxLength: 5 }), (head, parts) => {
        const text = head + parts.map(([ref, after]) => formatSessionReferenceMention(ref) + after).join('');
        const parsed = parseSessionReferenceText(text);
        expect(parsed.references).toEqual(parts.map(([ref]) => ({ sessionId: ref.sessionId, label: ref.label ?? ref.sessionId })));
        expect(parsed.text).toBe(head + parts.map(([ref, after]) => '@' + (ref.label ?? ref.sessionId) + after).join(''));
      }),
      runs,
    );
  });

  it('any text either parses or fails whole with INVALID_REFERENCE; tokens are ordered, disjoint and well formed', () => {
    fc.assert(
      fc.property(fc.oneof(grammarText(), utf16String(60)), (text) => {
        const tokens = [...scanSessionMentions(text)];
        let last = 0;
        for (const token of tokens) {
          expect(token.start).toBeGreaterThanOrEqual(last);
          expect(token.end).toBeGreaterThan(token.start);
          expect(token.end).toBeLessThanOrEqual(text.length);
          expect(text.slice(token.uriStart, token.uriStart + token.uri.length)).toBe(token.uri);
          expect(token.uri.startsWith(SESSION_URI_PREFIX)).toBe(true);
          if (token.kind === 'explicit') {
            expect(text.startsWith('@[', token.start)).toBe(true);
            expect(text[token.end - 1]).toBe(')');
          } else {
            expect(token.uriStart).toBe(token.start);
            expect(token.end).toBe(token.start + token.uri.length);
          }
          last = token.end;
        }
        const result = outcomeOf(() => parseSessionReferenceText(text));
        const decodable = tokens.every((token) => outcomeOf(() => decodeSessionReferenceUri(token.uri)).ok);
        if (result.ok) {
          expect(decodable).toBe(true);
          expect(result.value.references).toHaveLength(tokens.length);
          result.value.references.forEach((ref, i) => {
            expect(encodeSessionReferenceUri(ref.sessionId)).toBe(tokens[i]!.uri);
            expect(ref.label).toBe(tokens[i]!.label ?? ref.sessionId);
            // Re-formatting a parsed reference gives a mention that parses to the same reference.
            expect(parseSessionReferenceText(formatSessionReferenceMention(ref)).references).toEqual([ref]);
          });
        } else {
          expect(decodable).toBe(false);
          expect(result.error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
        }
      }),
      runs,
    );
  });

  it('non-string text and malformed references are INVALID_REFERENCE', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        if (typeof value !== 'string') {
          const parsed = outcomeOf(() => parseSessionReferenceText(value as string));
          expect(parsed.ok ? undefined : parsed.error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
        }
        const formatted = outcomeOf(() => formatSessionReferenceMention(value as { sessionId: string }));
        const wellFormed =
          typeof value === 'object' &&
          value !== null &&
          typeof (value as { sessionId?: unknown }).sessionId === 'string' &&
          ['undefined', 'string'].includes(typeof (value as { label?: unknown }).label);
        expect(formatted.ok).toBe(wellFormed);
        if (!formatted.ok) expect(formatted.error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
      }),
      runs,
    );
  });
});

describe('tag-safe JSON', () => {
  const withTags = fc.oneof(fc.jsonValue(), fc.array(hostileText(8)), fc.dictionary(hostileText(3), hostileText(6)), utf16String(30));

  it('never contains `<`, parses back to the same value, and only `<` is rewritten', () => {
    fc.assert(
      fc.property(withTags, (value) => {
        const safe = stringifyTagSafeJson(value);
        const plain = JSON.stringify(value);
        expect(safe).not.toContain('<');
        expect(safe).not.toContain('</referenced-sessions>');
        expect(JSON.parse(safe)).toEqual(JSON.parse(plain));
        const lessThan = plain.split('<').length - 1;
        expect(safe.length).toBe(plain.length + 5 * lessThan);
      }),
      runs,
    );
  });

  it('a value JSON cannot serialise is a TypeError with dsh’s message, anything else serialises', () => {
    const unserialisable = fc.oneof(
      fc.bigInt().map((n) => ({ n })),
      fc.constantFrom(undefined, () => 1, Symbol('s')),
      fc.anything().map((value) => {
        const cyclic: Record<string, unknown> = { value };
        cyclic.self = cyclic;
        return cyclic;
      }),
    );
    fc.assert(
      fc.property(fc.oneof(unserialisable, fc.anything()), (value) => {
        let plain: string | undefined;
        let plainFails = false;
        try {
          plain = JSON.stringify(value);
        } catch {
          plainFails = true;
        }
        if (plainFails || plain === undefined) {
          expect(() => stringifyTagSafeJson(value)).toThrow(new TypeError('session-reference data is not JSON-serializable'));
        } else {
          expect(JSON.parse(stringifyTagSafeJson(value))).toEqual(JSON.parse(plain));
        }
      }),
      runs,
    );
  });
});

describe('config', () => {
  it('any config either resolves to positive safe integers within the ceiling or is INVALID_CONFIG', () => {
    const field = fc.oneof(
      fc.integer({ min: -5, max: 100_000 }),
      fc.constantFrom(0, -0, 1.5, NaN, Infinity, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, null, '3', true, undefined),
      fc.anything(),
    );
    const config = fc.oneof(
      fc.record({ maxReferences: field, candidateLimit: field, maxReferenceBytes: field }, { requiredKeys: [] }),
      fc.anything(),
    );
    fc.assert(
      fc.property(config, (value) => {
        const result = outcomeOf(() => resolveSessionReferenceConfig(value as object));
        if (!result.ok) {
          expect(result.error.code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
          return;
        }
        for (const key of SESSION_REFERENCE_CONFIG_KEYS) {
          expect(Number.isSafeInteger(result.value[key]) && result.value[key] > 0).toBe(true);
        }
        expect(result.value.maxReferences).toBeLessThanOrEqual(3);
      }),
      runs,
    );
  });
});
