import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { REPO_ROOT } from '../support/lspClient';
import { EXAMPLE_SESSIONS, removeTemporary, temporaryDirectory } from './helpers';

/** Run the demo as `npm start` does, without colours; its output. */
function runDemo(): string {
  const scratch = temporaryDirectory('demo');
  try {
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'server', 'dist', 'demo', 'demo.js')], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: scratch, NO_COLOR: '1' },
      timeout: 60_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return result.stdout;
  } finally {
    removeTemporary(scratch);
  }
}

describe('npm start (the demo)', () => {
  it('completes @ in the example prompt, accepts an item and prints what the model gets', () => {
    const out = runDemo();
    const mention = formatSessionReferenceMention({ sessionId: EXAMPLE_SESSIONS.cache, label: 'Cache OpenWeather responses' });
    // The popup: the workspace folder's sessions first.
    expect(out).toMatch(/1\. You type "@"[\s\S]*▸ Fix flaky time zone test/);
    // The accepted line holds exactly @ + the mention where the token was.
    expect(out).toContain(`│ Keep the response caching we settled on in ${mention}▌`);
    expect(out).toContain('│ Keep the response caching we settled on in @Cache OpenWeather responses\n');
    expect(out).toContain('<referenced-sessions>\n   │ [{"sessionId":"7d2a9e44-0c61-4b8f-a3d5-6e7f8091a2b3","label":"Cache OpenWeather responses"');
    expect(out).not.toContain('\u001b[');
  });

  it('prints the excerpt the README shows, line for line and in order', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const excerpt = /<!-- demo excerpt -->\n```text\n([\s\S]*?)```\n/.exec(readme)?.[1];
    expect(excerpt).toBeDefined();
    // Ages ("7 days ago") follow the clock, so any age stands for any other.
    const withoutAges = (line: string) => line.replace(/\b\d+ (?:year|month|day|hour|minute)s? ago\b|\bjust now\b/g, '<age>');
    const out = runDemo().split('\n').map(withoutAges);
    // A line of only `…` stands for lines left out; a line ending in `…` for the start of a longer line.
    const shown = excerpt!
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.trim() !== '…')
      .map(withoutAges);
    expect(shown.length).toBeGreaterThan(10);
    let at = 0;
    for (const line of shown) {
      const matches = (printed: string) => (line.endsWith('…') ? printed.startsWith(line.slice(0, -1)) : printed === line);
      const found = out.findIndex((printed, index) => index >= at && matches(printed));
      expect(found, `README excerpt line not printed (after line ${at}): ${line}`).toBeGreaterThanOrEqual(0);
      at = found + 1;
    }
  });
});
