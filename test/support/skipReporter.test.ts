import { describe, expect, it } from 'vitest';
import { skipReport } from './skipReporter';

describe('skipReport', () => {
  it('says nothing when nothing was skipped', () => {
    expect(skipReport([])).toEqual([]);
  });

  it('names each file and reason once, with its count, preferring a skip note to the suite name', () => {
    expect(
      skipReport([
        { file: 'test/editors/neovim.test.ts', group: 'Neovim (nvim is not installed)' },
        { file: 'test/editors/neovim.test.ts', group: 'Neovim (nvim is not installed)' },
        { file: 'server/x.test.ts', group: 'decoders', note: 'zstd is not installed' },
      ]),
    ).toEqual([
      'Skipped 3 tests, and why:',
      '  test/editors/neovim.test.ts: Neovim (nvim is not installed) (2 tests)',
      '  server/x.test.ts: zstd is not installed (1 test)',
    ]);
  });
});
