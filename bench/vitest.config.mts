import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The bench's own unit tests (the root config does not include bench/ yet).
export default defineConfig({
  resolve: {
    alias: { '@dsh-session-ls/shared': fileURLToPath(new URL('../shared/src/index.ts', import.meta.url)) },
  },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['bench/src/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
