import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DISPLAY_LABEL_MAX_LENGTH,
  displaySafeLabel,
  displaySafeText,
  formatSessionReferenceMention,
  hasVisibleCharacter,
  parseSessionReferenceText,
} from '@dsh-session-ls/shared';

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
  });

  it('falls back to the session id when nothing is left', () => {
    expect(displaySafeLabel('', 'demo-1')).toBe('demo-1');
    expect(displaySafeLabel('\u0007\u202e\u2066', 'demo-1')).toBe('demo-1');
  });

  it('makes the fallback id display-safe too', () => {
    expect(displaySafeLabel('\u200e', 'id\u202e\tx')).toBe('id x');
  });
});

describe('hasVisibleCharacter', () => {
  it.each(['a', 'É', '7', '会', '😀', '!', '…', '<', '€', '\u0627'])('sees %j', (text) => {
    expect(hasVisibleCharacter(text)).toBe(true);
  });

  it.each([
    ['nothing', ''],
    ['spaces and line terminators', ' \u00a0\u2028\u2029\u3000'],
    ['combining marks', '\u0301\u0308\u20dd'],
    ['zero-width characters', '\u200b\u200c\u200d\u2060\ufeff'],
    ['Hangul fillers', '\u3164\u115f\uffa0'],
    ['the blank braille pattern', '\u2800'],
    ['tag characters', '\u{e0041}\u{e007f}'],
    ['private-use characters', '\ue000'],
    ['controls', '\u0007\u202e'],
  ])('sees nothing in %s', (_name, text) => {
    expect(hasVisibleCharacter(text)).toBe(false);
  });
});

describe('displaySafeLabel: one line, bounded, visible', () => {
  const MAX = DISPLAY_LABEL_MAX_LENGTH;

  it('collapses every white-space run, line terminators included, and trims', () => {
    expect(displaySafeLabel('  Fix\r\n\r\n the\u2028parser\u2029\u0085now\t\t', 'id')).toBe('Fix the parser now');
    expect(displaySafeLabel('a \u0007 b', 'id')).toBe('a b');
  });

  it('gives the id for a title of newlines, spaces, marks or zero-width characters', () => {
    for (const title of ['\n'.repeat(10_000), ' \u3000 ', '\u0301'.repeat(50), '\u200b\u200d\u2060'.repeat(20), '\u3164']) {
      expect(displaySafeLabel(title, 'demo-1')).toBe('demo-1');
    }
  });

  it('keeps a label of exactly the limit whole', () => {
    const title = 'x'.repeat(MAX);
    expect(displaySafeLabel(title, 'id')).toBe(title);
  });

  it('cuts a longer label to the limit with an ellipsis', () => {
    const label = displaySafeLabel('x'.repeat(1 << 20), 'id');
    expect(label).toBe('x'.repeat(MAX - 1) + '…');
  });

  it('cuts on a grapheme boundary: no half emoji, flag or family, no mark torn from its letter', () => {
    const family = '👩‍👩‍👧';
    const label = displaySafeLabel('a' + family.repeat(100), 'id');
    expect(label.length).toBeLessThanOrEqual(MAX);
    expect(label).toBe('a' + family.repeat(Math.floor((MAX - 2) / family.length)) + '…');
    const flags = displaySafeLabel('🇫🇷'.repeat(100), 'id');
    expect(flags).toBe('🇫🇷'.repeat(49) + '…');
    const accents = displaySafeLabel('e\u0301'.repeat(150), 'id');
    expect(accents).toBe('e\u0301'.repeat(99) + '…');
  });

  it('drops the space before the ellipsis', () => {
    expect(displaySafeLabel('x'.repeat(MAX - 2) + ' tail', 'id')).toBe('x'.repeat(MAX - 2) + '…');
  });

  it('cuts one grapheme longer than the limit between code points', () => {
    const label = displaySafeLabel('a' + '\u0301'.repeat(1000), 'id');
    expect(label).toBe('a' + '\u0301'.repeat(MAX - 2) + '…');
  });

  it('never splits a surrogate pair, even inside one long grapheme', () => {
    const label = displaySafeLabel('a' + '\u{1f3fb}'.repeat(300), 'id');
    expect(label.length).toBeLessThanOrEqual(MAX);
    expect(label.isWellFormed()).toBe(true);
  });

  it('bounds the id it falls back to, and escapes an id that shows nothing', () => {
    expect(displaySafeLabel('', 'i'.repeat(500))).toBe('i'.repeat(MAX - 1) + '…');
    expect(displaySafeLabel('\u200b', '\u200b\u0301')).toBe('\\u200b\\u0301');
    expect(displaySafeLabel('', '\u{e0041}')).toBe('\\u{e0041}');
  });

  /** The rule written again, independently: what the user should see of `text`, if anything. */
  function expectedShown(text: string): string | undefined {
    const oneLine = [...text]
      .map((ch) => (/[\s\u0085]/.test(ch) ? ' ' : REMOVED.has(ch.charCodeAt(0)) && ch.length === 1 ? '' : ch))
      .join('')
      .replace(/ +/g, ' ')
      .trim();
    let shown = oneLine;
    let kept = oneLine;
    if (oneLine.length > MAX) {
      kept = '';
      for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(oneLine)) {
        if (kept.length + segment.length > MAX - 1) break;
        kept += segment;
      }
      if (kept === '') return undefined; // a first grapheme longer than the limit: checked on its own above
      kept = kept.trimEnd();
      shown = kept + '…';
    }
    return hasVisibleCharacter(kept) ? shown : undefined;
  }

  const PIECES = ['a', 'Zürich ', ' ', '\n', '\r\n', '\t', '\u0085', '\u2028', '\u2029', '\u00a0', '\u0301', '\u200b', '\u200d', '\ufeff', '\u3164',
    '\u0007', '\u202e', '\u2066', '😀', '👩‍👩‍👧', '🇫🇷', '会', ']', '\\', '<', '\ud800', '…'];
  const titleArb = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.string({ unit: 'grapheme', maxLength: 250 }),
    fc.array(fc.constantFrom(...PIECES), { maxLength: 400 }).map((pieces) => pieces.join('')),
    // Around the limit, where the cut happens.
    fc.array(fc.constantFrom(...PIECES), { minLength: 120, maxLength: 260 }).map((pieces) => pieces.join('')),
  );
  const idArb = fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }), fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 8 }).map((p) => p.join('')));

  it('for any title: bounded, one line, no control or bidi, visible or the id, and a mention of it parses back to the id', () => {
    const LINE_TERMINATORS = /[\n\r\u0085\u2028\u2029]/;
    fc.assert(
      fc.property(titleArb, idArb, (title, sessionId) => {
        const label = displaySafeLabel(title, sessionId);
        expect(label.length).toBeLessThanOrEqual(MAX);
        expect([...label].some((ch) => ch.length === 1 && REMOVED.has(ch.charCodeAt(0)))).toBe(false);
        expect(label).not.toMatch(LINE_TERMINATORS);
        expect(label).not.toMatch(/^\s|\s$|\s\s/);
        const shown = expectedShown(title);
        if (shown !== undefined && !/^.\u0301{199}/su.test(shown)) expect(label).toBe(shown);
        if (shown === undefined) {
          // Nothing visible: the id, made safe the same way (or escaped when it shows nothing either).
          const id = expectedShown(sessionId);
          if (id !== undefined) expect(label).toBe(id);
          else expect(hasVisibleCharacter(label)).toBe(true);
        }
        const { references } = parseSessionReferenceText(formatSessionReferenceMention({ sessionId, label }));
        expect(references).toEqual([{ sessionId, label }]);
      }),
      { numRuns: 1000 },
    );
  });
});
