import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Unit tests run against the shared sources; the built server uses shared/dist.
    alias: { '@dsh-session-ls/shared': fileURLToPath(new URL('./shared/src/index.ts', import.meta.url)) },
  },
  test: {
    // Hashes the example and fixture stores before and after the whole run: fails if anything wrote to them.
    // Gives the run one scratch directory where the tests that need it install the packed tarball.
    globalSetup: ['test/reliability/storeGuard.globalSetup.ts', 'test/support/installedPackage.globalSetup.ts'],
    include: ['shared/src/**/*.test.ts', 'server/src/**/*.test.ts', 'client-vscode/src/**/*.test.ts', 'test/**/*.test.ts', 'bench/src/**/*.test.ts'],
    // The default reporter, then every skipped test's reason (a count alone hides what went unchecked).
    reporters: ['default', './test/support/skipReporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
