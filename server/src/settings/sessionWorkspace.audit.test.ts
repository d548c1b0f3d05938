// Spec audit (docs/traceability.md): lsp-contract.md "Settings" and session-reference.md §6.8 — a per-call
// `config` applies to that call only; `dshSession.candidates` without a limit uses the candidateLimit
// setting; a relative sessionsRoot is resolved against the FIRST workspace folder.
import { SessionCommands, type PreparedReferencedMessage } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { executeSessionCommand } from '../features/commands';
import { testWorkspace } from '../testing/testWorkspace';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { InMemoryStoreService } from '../testing/inMemoryStoreService';
import { SessionWorkspace } from './sessionWorkspace';

function session(id: string, createdAt: number): InMemorySession {
  const log = new SessionLogBuilder();
  log.user(`a long enough question for ${id} `.repeat(10));
  log.assistant(`a long enough answer from ${id} `.repeat(10));
  return { header: { id, cwd: '/w', createdAt }, events: log.events() };
}

const SESSIONS = [session('s1', 4), session('s2', 3), session('s3', 2), session('s4', 1)];

describe('per-call config', () => {
  it('overrides the settings for that call only', async () => {
    const { workspace } = testWorkspace(SESSIONS, { folders: ['/w'] });
    const run = (argument: object) => executeSessionCommand(SessionCommands.candidates, [argument], workspace) as Promise<unknown[]>;
    expect(await run({ config: { candidateLimit: 1 } })).toHaveLength(1);
    expect(await run({})).toHaveLength(4);

    const prepare = (argument: object) =>
      executeSessionCommand(SessionCommands.prepare, [{ content: [], references: [{ sessionId: 's1' }], ...argument }], workspace) as Promise<PreparedReferencedMessage>;
    expect((await prepare({ config: { maxReferenceBytes: 300 } })).additionalContext!.source.references[0]!.truncated).toBe(true);
    expect((await prepare({})).additionalContext!.source.references[0]!.truncated).toBe(false);
    expect(workspace.settings().config).toEqual({ maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 });
  });

  it('keeps the settings for the fields it does not name', async () => {
    const { workspace } = testWorkspace(SESSIONS, { folders: ['/w'], section: { candidateLimit: 2, maxReferenceBytes: 300 } });
    const prepared = (await executeSessionCommand(
      SessionCommands.prepare,
      [{ content: [], references: [{ sessionId: 's1' }], config: { maxReferences: 1 } }],
      workspace,
    )) as PreparedReferencedMessage;
    expect(prepared.additionalContext!.source.references[0]!.truncated).toBe(true);
  });
});

describe('dshSession.candidates without a limit', () => {
  it('uses the candidateLimit setting', async () => {
    const { workspace } = testWorkspace(SESSIONS, { folders: ['/w'], section: { candidateLimit: 3 } });
    expect(await executeSessionCommand(SessionCommands.candidates, [{}], workspace)).toHaveLength(3);
    expect(await executeSessionCommand(SessionCommands.candidates, [{ limit: 4 }], workspace)).toHaveLength(4);
  });
});

describe('a relative sessionsRoot', () => {
  it('is resolved against the first of several workspace folders, and moves with it', () => {
    const opened: string[] = [];
    const workspace = new SessionWorkspace({
      openStore: (root) => {
        opened.push(root);
        return new InMemoryStoreService(root);
      },
      defaultSessionsRoot: () => '/default/sessions',
      env: {},
    });
    workspace.setWorkspace(['file:///first', 'file:///second']);
    workspace.setSection({ sessionsRoot: 'store' });
    expect(workspace.settings().sessionsRoot).toBe('/first/store');
    workspace.openStoreForSettings();
    workspace.setWorkspace(['file:///other', 'file:///first']);
    expect(workspace.settings().sessionsRoot).toBe('/other/store');
    workspace.openStoreForSettings();
    expect(opened).toEqual(['/first/store', '/other/store']);
    workspace.dispose();
  });
});
