import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { containingWorkspaceFolder, resolveTarget, type TargetDefaults } from './target';

const SESSIONS: Record<string, { cwd?: string }> = { agent: { cwd: '/agent/cwd' }, 'no-cwd-agent': {} };

function defaults(extra: Partial<TargetDefaults> = {}): TargetDefaults {
  return {
    workspaceFolders: ['/ws/one', '/ws/one/nested', '/ws/two'],
    rootPath: '/root/path',
    findSession: async (id) => SESSIONS[id],
    ...extra,
  };
}

const doc = (file: string) => pathToFileURL(file).href;

describe('resolveTarget', () => {
  it('takes the given session id and cwd', async () => {
    expect(await resolveTarget({ sessionId: 'x', cwd: '/given' }, defaults({ targetSessionId: 'setting' }))).toEqual({ sessionId: 'x', cwd: '/given' });
  });

  it('falls back to the targetSessionId setting, and null or "" mean explicitly none', async () => {
    expect((await resolveTarget(undefined, defaults({ targetSessionId: 'setting' }))).sessionId).toBe('setting');
    expect((await resolveTarget({ sessionId: null }, defaults({ targetSessionId: 'setting' }))).sessionId).toBeUndefined();
    expect((await resolveTarget({ sessionId: '' }, defaults({ targetSessionId: 'setting' }))).sessionId).toBeUndefined();
    expect(await resolveTarget({ cwd: null }, defaults())).toEqual({});
    expect(await resolveTarget({ cwd: '' }, defaults())).toEqual({});
  });

  it('uses the target session recorded cwd when it exists in the store', async () => {
    expect(await resolveTarget({ sessionId: 'agent' }, defaults({ documentUri: doc('/ws/two/a.md') }))).toEqual({ sessionId: 'agent', cwd: '/agent/cwd' });
    // A stored target without a cwd has none, as dsh's agent header does.
    expect(await resolveTarget({ sessionId: 'no-cwd-agent' }, defaults())).toEqual({ sessionId: 'no-cwd-agent' });
  });

  it('uses the longest workspace folder holding the document, else the first folder, else the root', async () => {
    expect((await resolveTarget({ sessionId: 'missing' }, defaults({ documentUri: doc('/ws/one/nested/p.md') }))).cwd).toBe('/ws/one/nested');
    expect((await resolveTarget(undefined, defaults({ documentUri: doc('/ws/two/p.md') }))).cwd).toBe('/ws/two');
    expect((await resolveTarget(undefined, defaults({ documentUri: doc('/elsewhere/p.md') }))).cwd).toBe('/ws/one');
    expect((await resolveTarget(undefined, defaults({ documentUri: 'untitled:Untitled-1' }))).cwd).toBe('/ws/one');
    expect((await resolveTarget(undefined, defaults({ workspaceFolders: [] }))).cwd).toBe('/root/path');
    expect(await resolveTarget(undefined, defaults({ workspaceFolders: [], rootPath: undefined }))).toEqual({});
  });

  it('decodes file URIs (spaces, non-ASCII) before comparing', async () => {
    expect((await resolveTarget(undefined, defaults({ workspaceFolders: ['/a', '/srv/work space/日本'], documentUri: doc('/srv/work space/日本/x.md') }))).cwd).toBe(
      '/srv/work space/日本',
    );
  });
});

describe('containingWorkspaceFolder', () => {
  it('matches whole path segments only', () => {
    expect(containingWorkspaceFolder('/ws/one-more/x', ['/ws/one'])).toBeUndefined();
    expect(containingWorkspaceFolder('/ws/one', ['/ws/one'])).toBe('/ws/one');
    expect(containingWorkspaceFolder('/x', ['/'])).toBe('/');
  });
});
