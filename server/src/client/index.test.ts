import { describe, expect, it } from 'vitest';
import { DshSessionClient, positionAt } from './index';

describe('positionAt', () => {
  it('counts lines broken by \\n, \\r\\n and \\r, and characters in UTF-16 code units', () => {
    expect(positionAt('see @')).toEqual({ line: 0, character: 5 });
    expect(positionAt('a\nb\r\nc\rdé😀@')).toEqual({ line: 3, character: 5 });
    expect(positionAt('a\r\nb', 2)).toEqual({ line: 0, character: 1 });
    expect(positionAt('a\r\nb', 3)).toEqual({ line: 1, character: 0 });
    expect(positionAt('ab', 99)).toEqual({ line: 0, character: 2 });
    expect(positionAt('')).toEqual({ line: 0, character: 0 });
  });
});

describe('DshSessionClient.start', () => {
  it('rejects with the reason when the server cannot be started', async () => {
    await expect(DshSessionClient.start({ server: 'dsh-session-ls-no-such-program-here' })).rejects.toThrow(/cannot start dsh-session-ls-no-such-program-here: .*ENOENT/);
  });
});
