// Spec audit (docs/traceability.md): lsp-contract.md "The target" — each field on its own.
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveTarget, type TargetDefaults } from './target';

const STORED: Record<string, { cwd?: string }> = { agent: { cwd: '/agent/cwd' } };

function defaults(extra: Partial<TargetDefaults> = {}): TargetDefaults {
  return {
    workspaceFolders: ['/ws/one', '/ws/two'],
    rootPath: '/root/path',
    documentUri: pathToFileURL('/ws/two/prompt.md').href,
    findSession: async (id) => STORED[id],
    ...extra,
  };
}

describe('the target, each field on its own', () => {
  it('keeps the targetSessionId setting when only a cwd is given', async () => {
    expect(await resolveTarget({ cwd: '/given' }, defaults({ targetSessionId: 'agent' }))).toEqual({ sessionId: 'agent', cwd: '/given' });
  });

  it('takes the recorded cwd of a target that comes from the setting', async () => {
    expect(await resolveTarget(undefined, defaults({ targetSessionId: 'agent' }))).toEqual({ sessionId: 'agent', cwd: '/agent/cwd' });
    expect(await resolveTarget({ cwd: null }, defaults({ targetSessionId: 'agent' }))).toEqual({ sessionId: 'agent' });
  });

  it('keeps the document folder default when the session id is explicitly none', async () => {
    for (const sessionId of [null, '']) {
      expect(await resolveTarget({ sessionId }, defaults({ targetSessionId: 'agent' }))).toEqual({ cwd: '/ws/two' });
    }
  });

  it('falls back to the document folder for a target session that is not in the store', async () => {
    expect(await resolveTarget({ sessionId: 'not-stored' }, defaults())).toEqual({ sessionId: 'not-stored', cwd: '/ws/two' });
  });
});
