/**
 * A vitest reporter that ends the run with every skipped test's reason, so a run that could not
 * check something (an editor or `zstd` missing locally) says so in the default output rather than in
 * a count alone. Under CI=true such a skip fails instead (see `findProgram`).
 */
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';

export interface SkippedTest {
  /** The test file, relative to the repository. */
  file: string;
  /** The outermost suite's name, or the test's own name at the top level: where the reason is written. */
  group: string;
  /** The note given to `ctx.skip(note)`, if any. */
  note?: string;
}

/** The lines that report skipped tests: one per file and reason, with how many tests it skipped. */
export function skipReport(skipped: readonly SkippedTest[]): string[] {
  if (skipped.length === 0) return [];
  const counts = new Map<string, number>();
  for (const test of skipped) {
    const key = `${test.file}: ${test.note ?? test.group}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const lines = [...counts].map(([key, count]) => `  ${key} (${count} ${count === 1 ? 'test' : 'tests'})`);
  return [`Skipped ${skipped.length} ${skipped.length === 1 ? 'test' : 'tests'}, and why:`, ...lines];
}

function outermostName(test: TestCase): string {
  let suite: TestSuite | undefined;
  for (let parent = test.parent; parent.type === 'suite'; parent = parent.parent) suite = parent;
  return suite?.name ?? test.name;
}

export default class SkipReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: SkippedTest[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const result = test.result();
        skipped.push({
          file: module.relativeModuleId,
          group: outermostName(test),
          ...(result.state === 'skipped' && result.note ? { note: result.note } : {}),
        });
      }
    }
    const lines = skipReport(skipped);
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}
