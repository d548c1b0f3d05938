import { describe, expect, it } from 'vitest';
import { promptLabel } from './records';

/** The label rule read plainly: the whole text collapsed, then cut. */
function plainLabel(text: string, max: number): string | undefined {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  if (collapsed === '') return undefined;
  const points = [...collapsed];
  return points.length <= max ? collapsed : points.slice(0, max).join('') + '…';
}

describe('promptLabel', () => {
  it('equals the whole text collapsed and cut, on texts of spaces, line breaks, astral and lone surrogates', () => {
    const alphabet = [' ', '\n', '\t', '\r\n', 'a', 'b', 'é', '😀', '\ud800', '\u2028', '\u00a0', '\ufeff', 'xyz'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let run = 0; run < 5000; run++) {
      let text = '';
      for (let length = Math.floor(next() * 30); length > 0; length--) text += alphabet[Math.floor(next() * alphabet.length)];
      for (const max of [1, 3, 5, 100]) expect(promptLabel(text, max), JSON.stringify(text)).toBe(plainLabel(text, max));
    }
  });
});
