/**
 * A vitest global setup that proves the whole test run never wrote to the stores it reads in place:
 * the bundled example store and the conformance fixture stores are hashed before any test file runs
 * and again after the last one; any difference fails the run. (Temporary stores are checked by the
 * tests that make them.)
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { treeHash } from './support/stores';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The stores tests read in place: examples/store, and the conformance fixtures when present. */
function guardedStores(): string[] {
  const conformance = process.env.DSH_CONFORMANCE_DIR ? path.resolve(process.env.DSH_CONFORMANCE_DIR) : path.resolve(REPO_ROOT, '..', 'shared');
  return [
    path.join(REPO_ROOT, 'examples', 'store'),
    // Issue 17: the real Claude Code and Codex stores are read in place too.
    path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures'),
    path.join(conformance, 'fixtures', 'dsh-store', 'raw'),
    path.join(conformance, 'fixtures', 'dsh-store', 'zstd'),
  ].filter((dir) => existsSync(dir));
}

/** Hash the stores now; the returned teardown fails the run if any of them changed. */
export default function setup(): () => void {
  const before = new Map(guardedStores().map((dir) => [dir, treeHash(dir)]));
  return () => {
    const changed = [...before].filter(([dir, hash]) => !existsSync(dir) || treeHash(dir) !== hash).map(([dir]) => dir);
    if (changed.length === 0) return;
    // vitest only logs an error thrown here; the exit code is what CI sees.
    process.exitCode = 1;
    throw new Error(`the test run wrote to stores it must only read: ${changed.join(', ')}`);
  };
}
