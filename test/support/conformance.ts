import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository root (this file lives in test/support/). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** True when running under CI, where a missing prerequisite is a failure, never a skip. */
export const IN_CI = process.env.CI === 'true';

/**
 * The conformance folder (`../shared` beside the repository, or `$DSH_CONFORMANCE_DIR`), or
 * undefined with the reason. Under CI=true its absence throws instead.
 */
export function findConformanceDir(): { dir?: string; reason?: string } {
  const candidate = process.env.DSH_CONFORMANCE_DIR
    ? path.resolve(process.env.DSH_CONFORMANCE_DIR)
    : path.resolve(REPO_ROOT, '..', 'shared');
  if (existsSync(path.join(candidate, 'fixtures', 'dsh-store', 'expected', 'dsh-answers.jsonl'))) return { dir: candidate };
  const reason = `conformance data not found at ${candidate} (set DSH_CONFORMANCE_DIR)`;
  if (IN_CI) throw new Error(`CI=true: ${reason}`);
  return { reason };
}

/** The fixture store folder inside the conformance dir (`raw` or `zstd`), if present. */
export function fixtureStore(dir: string, encoding: 'raw' | 'zstd'): string {
  return path.join(dir, 'fixtures', 'dsh-store', encoding);
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
