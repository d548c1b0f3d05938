import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { REPO_ROOT } from '../support/lspClient';
import { EXAMPLE_SESSIONS, removeTemporary, temporaryDirectory } from './helpers';

describe('npm start (the demo)', () => {
  it('completes @ in the example prompt, accepts an item and prints what the model gets', () => {
    const scratch = temporaryDirectory('demo');
    try {
      const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'server', 'dist', 'demo', 'demo.js')], {
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: scratch, NO_COLOR: '1' },
        timeout: 60_000,
      });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const out = result.stdout;
      const mention = formatSessionReferenceMention({ sessionId: EXAMPLE_SESSIONS.cache, label: 'Cache OpenWeather responses' });
      // The popup: the workspace folder's sessions first.
      expect(out).toMatch(/1\. You type "@"[\s\S]*▸ Fix flaky time zone test/);
      // The accepted line holds exactly @ + the mention where the token was.
      expect(out).toContain(`│ Keep the response caching we settled on in ${mention}▌`);
      expect(out).toContain('│ Keep the response caching we settled on in @Cache OpenWeather responses\n');
      expect(out).toContain('<referenced-sessions>\n   │ [{"sessionId":"7d2a9e44-0c61-4b8f-a3d5-6e7f8091a2b3","label":"Cache OpenWeather responses"');
      expect(out).not.toContain('\u001b[');
    } finally {
      removeTemporary(scratch);
    }
  });
});
