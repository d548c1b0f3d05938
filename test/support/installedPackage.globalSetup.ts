/**
 * A vitest global setup that gives the run one scratch directory for the installed package
 * (test/support/installedPackage.ts): the first test that needs `dsh-session-ls` as a user has it packs
 * the tarball and installs it there, once for the whole run; the directory is removed at the end.
 * Nothing is packed unless a test asks for it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    dshInstallScratch: string;
  }
}

export default function setup(project: TestProject): () => void {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'dsh-session-ls-install-'));
  project.provide('dshInstallScratch', scratch);
  return () => rmSync(scratch, { recursive: true, force: true });
}
