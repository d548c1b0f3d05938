import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Base64 } from './surfaceFold';

describe('sha256Base64 (the tool-result rewrite key)', () => {
  it('is the SHA-256 of the text as UTF-8, in base64, as a Hash object gives it', () => {
    const texts = ['', '{"a":1}', 'x'.repeat(100_000), 'Área 日本 😀', 'lone \ud800 surrogate \udc00', '\u0000\u007f\u0080'];
    for (const text of texts) expect(sha256Base64(text)).toBe(createHash('sha256').update(text).digest('base64'));
    expect(sha256Base64('abc')).toBe('ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=');
  });
});
