import { beforeAll, describe, expect, it } from 'vitest';
import { initZstdSupport } from './index';
import { defaultZstdDecoder, nativeZstdIsSafe } from './zstdDecoder';

describe('the zstd decoder the store uses', () => {
  beforeAll(() => initZstdSupport());

  it('trusts node:zlib only from Node 24 (Node 22 leaks native memory on frames without a content size)', () => {
    expect(nativeZstdIsSafe('20.20.2')).toBe(false);
    expect(nativeZstdIsSafe('22.23.5')).toBe(false);
    expect(nativeZstdIsSafe('24.0.0')).toBe(true);
    expect(nativeZstdIsSafe('26.1.0')).toBe(true);
  });

  it('is fzstd on this runtime unless it is Node ≥ 24 with node:zlib zstd', async () => {
    const zlib = (await import('node:zlib')) as { zstdDecompressSync?: unknown };
    const expected = nativeZstdIsSafe() && typeof zlib.zstdDecompressSync === 'function' ? 'node:zlib' : 'fzstd';
    expect(defaultZstdDecoder().name).toBe(expected);
  });
});
