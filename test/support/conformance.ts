import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository root (this file lives in test/support/). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** True when running under CI, where a missing prerequisite is a failure, never a skip. */
export const IN_CI = process.env.CI === 'true';

/** The dsh conformance store kept in the repository: both encodings and dsh's recorded answers. */
export const REPOSITORY_CONFORMANCE_STORE = path.join(REPO_ROOT, 'test', 'conformance', 'dsh-store');

const ANSWERS = path.join('expected', 'dsh-answers.jsonl');

/**
 * The dsh conformance store the tests check fidelity against: the repository's own copy, or the
 * store `$DSH_CONFORMANCE_DIR` names to check another one (a folder laid out like
 * `test/conformance/dsh-store`, or one holding it as `fixtures/dsh-store`). A variable that names
 * neither throws: a run asked to check another store must not silently check this one.
 */
export function conformanceStore(): string {
  const named = process.env.DSH_CONFORMANCE_DIR;
  if (!named) return REPOSITORY_CONFORMANCE_STORE;
  for (const candidate of [path.resolve(named), path.resolve(named, 'fixtures', 'dsh-store')]) {
    if (existsSync(path.join(candidate, ANSWERS))) return candidate;
  }
  throw new Error(`DSH_CONFORMANCE_DIR=${named} holds no ${ANSWERS} (nor fixtures/dsh-store/${ANSWERS})`);
}

/** The conformance store's sessions root in one encoding (`raw` or `zstd`). */
export function fixtureStore(encoding: 'raw' | 'zstd'): string {
  return path.join(conformanceStore(), encoding);
}

/** dsh's recorded answers for the conformance store, one JSON object a line. */
export function dshAnswersFile(): string {
  return path.join(conformanceStore(), ANSWERS);
}

/**
 * Whether an outside program is on PATH. Under CI=true a missing program throws (CI installs it);
 * locally the caller skips with the returned reason.
 */
export function findProgram(name: string, versionArgs: string[] = ['--version']): { found: boolean; reason?: string } {
  try {
    execFileSync(name, versionArgs, { stdio: 'ignore', timeout: 10_000 });
    return { found: true };
  } catch {
    const reason = `${name} is not installed (.ci/run installs it)`;
    if (IN_CI) throw new Error(`CI=true: ${reason}`);
    return { found: false, reason };
  }
}
