import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringifyTagSafeJson } from '@dsh-session-ls/shared';

/** Strings rich in `<` and closing tags, plus arbitrary UTF-16 (lone surrogates included). */
const tagHeavyString = fc.oneof(
  fc.array(fc.constantFrom('<', '>', '/', '</referenced-sessions>', '<referenced-sessions>', '\\u003c', '\\', '"', 'a', '\n', '\u2028', '\ud800'), {
    maxLength: 20,
  }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary' }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 20 }).map((units) => String.fromCharCode(...units)),
);

const anyJsonValue = fc.oneof(
  fc.jsonValue(),
  tagHeavyString,
  fc.dictionary(tagHeavyString, fc.oneof(tagHeavyString, fc.jsonValue())),
  fc.array(tagHeavyString),
);

function expectNotSerializable(value: unknown): void {
  let thrown: unknown;
  try {
    stringifyTagSafeJson(value);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(TypeError);
  expect((thrown as TypeError).message).toBe('session-reference data is not JSON-serializable');
}

describe('stringifyTagSafeJson', () => {
  it('writes every < as \\u003c', () => {
    expect(stringifyTagSafeJson('</referenced-sessions>')).toBe('"\\u003c/referenced-sessions>"');
    expect(stringifyTagSafeJson({ '<k>': ['<<', 'a<b'] })).toBe('{"\\u003ck>":["\\u003c\\u003c","a\\u003cb"]}');
  });

  it('changes nothing else', () => {
    const value = { text: '> & \' " \\ \u2028 \u0000 é 😀 \ud800', n: -1.5e-7, ok: true, none: null };
    expect(stringifyTagSafeJson(value)).toBe(JSON.stringify(value));
  });

  it('keeps key order (it is part of the prompt bytes)', () => {
    expect(stringifyTagSafeJson({ sessionId: 's', label: 'l', cwd: null, capturedThroughSeq: 3, conversation: [] })).toBe(
      '{"sessionId":"s","label":"l","cwd":null,"capturedThroughSeq":3,"conversation":[]}',
    );
  });

  it('is JSON.stringify with only < replaced, never spells a tag, and parses back to the original', () => {
    fc.assert(
      fc.property(anyJsonValue, (value) => {
        const json = JSON.stringify(value);
        const safe = stringifyTagSafeJson(value);
        expect(safe).not.toContain('<');
        expect(safe).toBe(json.split('<').join('\\u003c'));
        expect(JSON.parse(safe)).toEqual(JSON.parse(json));
      }),
      { numRuns: 2000 },
    );
  });

  it('parses back to exactly the original string, code unit for code unit', () => {
    fc.assert(
      fc.property(tagHeavyString, (text) => {
        expect(JSON.parse(stringifyTagSafeJson(text))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('x')],
    ['a BigInt', 1n],
    ['a BigInt inside an object', { size: 10n }],
  ])('rejects %s with a TypeError', (_what, value) => expectNotSerializable(value));

  it('rejects cycles with a TypeError', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expectNotSerializable(cyclic);
    const list: unknown[] = [];
    list.push({ list });
    expectNotSerializable(list);
  });

  it('keeps the JSON engine’s own error as the cause', () => {
    try {
      stringifyTagSafeJson(1n);
      expect.unreachable();
    } catch (error) {
      expect((error as TypeError).cause).toBeInstanceOf(TypeError);
    }
  });
});
