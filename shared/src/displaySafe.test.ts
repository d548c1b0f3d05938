import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displaySafeLabel, displaySafeText } from '@dsh-session-ls/shared';

const hex = (code: number) => 'U+' + code.toString(16).toUpperCase().padStart(4, '0');
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

// lsp-contract.md, Completion `label`.
const LINE_LIKE = [0x09, 0x0a, 0x0b, 0x0c, 0x0d];
const REMOVED_CONTROLS = [...range(0x00, 0x1f), ...range(0x7f, 0x9f)].filter((c) => !LINE_LIKE.includes(c));
const BIDI_CONTROLS = [0x061c, 0x200e, 0x200f, ...range(0x202a, 0x202e), ...range(0x2066, 0x2069)];
const REMOVED = new Set([...REMOVED_CONTROLS, ...BIDI_CONTROLS]);

describe('displaySafeText', () => {
  it.each(LINE_LIKE.map((c) => [hex(c), c]))('turns %s into a space', (_name, code) => {
    expect(displaySafeText(`a${String.fromCharCode(code)}b`)).toBe('a b');
  });

  it.each(REMOVED_CONTROLS.map((c) => [hex(c), c]))('removes the control %s', (_name, code) => {
    expect(displaySafeText(`a${String.fromCharCode(code)}b`)).toBe('ab');
  });

  it.each(BIDI_CONTROLS.map((c) => [hex(c), c]))('removes the bidi control %s', (_name, code) => {
    expect(displaySafeText(`a${String.fromCharCode(code)}b`)).toBe('ab');
  });

  it.each([0x20, 0xa0, 0xad, 0x200b, 0x200d, 0x2028, 0x2029, 0x202f, 0x2065, 0x206a, 0xfeff, 0xd800, 0xdc00])(
    'keeps %s, which the rule does not name',
    (code) => {
      const text = `a${String.fromCharCode(code)}b`;
      expect(displaySafeText(text)).toBe(text);
    },
  );

  it('makes dsh’s fixture label with BEL and RLO/PDF safe', () => {
    expect(displaySafeText('Compare\u0007 with \u202eSay hi\u202c')).toBe('Compare with Say hi');
  });

  it('keeps CRLF as two spaces and astral characters whole', () => {
    expect(displaySafeText('line1\r\nline2 😀')).toBe('line1  line2 😀');
  });

  it('changes each code unit as the rule says and keeps everything else in order', () => {
    const units = fc.array(
      fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(...LINE_LIKE, ...REMOVED_CONTROLS, ...BIDI_CONTROLS)),
      { maxLength: 40 },
    );
    fc.assert(
      fc.property(units, (codes) => {
        const expected = codes
          .filter((c) => !REMOVED.has(c))
          .map((c) => (LINE_LIKE.includes(c) ? ' ' : String.fromCharCode(c)))
          .join('');
        expect(displaySafeText(String.fromCharCode(...codes))).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('displaySafeLabel', () => {
  it('is the display-safe label when something is left', () => {
    expect(displaySafeLabel('\u202eSay hi', 'demo-1')).toBe('Say hi');
    expect(displaySafeLabel('\n', 'demo-1')).toBe(' ');
  });

  it('falls back to the session id when nothing is left', () => {
    expect(displaySafeLabel('', 'demo-1')).toBe('demo-1');
    expect(displaySafeLabel('\u0007\u202e\u2066', 'demo-1')).toBe('demo-1');
  });

  it('makes the fallback id display-safe too', () => {
    expect(displaySafeLabel('\u200e', 'id\u202e\tx')).toBe('id x');
  });
});
