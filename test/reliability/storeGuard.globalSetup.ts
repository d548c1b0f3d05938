/**
 * A vitest global setup that proves the whole test run never wrote to the stores it reads in place:
 * the bundled example store and the conformance fixture stores are hashed before any test file runs
 * and again after the last one; any difference fails the run. (Temporary stores are checked by the
 * tests that make them.)
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, fixtureStore } from '../support/conformance';
import { treeHash } from './support/stores';

/** The stores tests read in place: examples/store, the other agents' stores and the dsh conformance store. */
function guardedStores(): string[] {
  return [
    path.join(REPO_ROOT, 'examples', 'store'),
    path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures'),
    fixtureStore('raw'),
    fixtureStore('zstd'),
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
