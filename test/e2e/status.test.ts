import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_STATUS_NOTIFICATION, SessionCommands, type SessionStoreStatus } from '@dsh-session-ls/shared';
import type { LspTestClient } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, WEATHER_APP, copyStore, removeTemporary, startServer, temporaryDirectory } from './helpers';

const EXAMPLE_SESSION_COUNT = Object.keys(EXAMPLE_SESSIONS).length;
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function statuses(client: LspTestClient): SessionStoreStatus[] {
  return client.messages(SESSION_STATUS_NOTIFICATION).map((message) => message.params as SessionStoreStatus);
}

/** Wait (polling, generous deadline) for a status with exactly these values. */
async function statusArrives(client: LspTestClient, expected: SessionStoreStatus): Promise<void> {
  const arrived = await client.waitForMessage(SESSION_STATUS_NOTIFICATION, (params) => JSON.stringify(params) === JSON.stringify(expected), 30_000);
  expect(arrived.params).toEqual(expected);
}

/** A one-turn dsh session log (header, user message, title). */
function sessionLog(id: string, title: string, createdAt: number): string {
  const lines = [
    { type: 'session', version: 0, id, createdAt, cwd: WEATHER_APP, delegationDepth: 0 },
    {
      type: 'user/message',
      seq: 0,
      time: createdAt + 1,
      data: { content: [{ type: 'text', text: title }], source: { kind: 'user' }, role: 'user', id: `${id}-m1` },
      surfaceOp: 'append',
    },
    { type: 'session/title', seq: 1, time: createdAt + 2, data: { title, messageSeqs: [0], source: { kind: 'fallback' } } },
  ];
  return lines.map((line) => JSON.stringify(line) + '\n').join('');
}

describe('dshSession/status over the built server', () => {
  it('reports the store root and its counts as it is indexed and as sessions appear', async () => {
    const root = copyStore();
    cleanups.push(() => removeTemporary(path.dirname(root)));
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
    cleanups.push(cleanup);

    await statusArrives(client, { root, indexed: EXAMPLE_SESSION_COUNT, indexing: false, discovered: EXAMPLE_SESSION_COUNT });
    const candidates = await client.executeCommand<unknown[]>(SessionCommands.candidates, { limit: 100 });
    expect(candidates).toHaveLength(EXAMPLE_SESSION_COUNT);
    for (const status of statuses(client)) {
      expect(status.root).toBe(root);
      expect(status.indexed).toBeLessThanOrEqual(status.discovered);
    }

    const id = '4c3b2a19-0f8e-4d7c-9b6a-5f4e3d2c1b0a';
    mkdirSync(path.join(root, '--home-sam-weather-app--', id));
    writeFileSync(path.join(root, '--home-sam-weather-app--', id, 'session.jsonl'), sessionLog(id, 'Wind speed', Date.now()));
    await statusArrives(client, { root, indexed: EXAMPLE_SESSION_COUNT + 1, indexing: false, discovered: EXAMPLE_SESSION_COUNT + 1 });
  });

  it('reports a root that does not exist yet as empty, then the new root after a settings change', async () => {
    const scratch = temporaryDirectory('status');
    cleanups.push(() => removeTemporary(scratch));
    const missing = path.join(scratch, 'not-yet', 'sessions');
    const { client, cleanup } = await startServer({}, { settings: { sessionsRoot: missing } });
    cleanups.push(cleanup);

    await statusArrives(client, { root: missing, indexed: 0, indexing: false, discovered: 0, rootProblem: 'missing' });
    client.settings = { sessionsRoot: EXAMPLE_STORE };
    await client.changeConfiguration({ dshSessions: client.settings });
    await statusArrives(client, { root: EXAMPLE_STORE, indexed: EXAMPLE_SESSION_COUNT, indexing: false, discovered: EXAMPLE_SESSION_COUNT });

    // Once the new root is reported, the old store says nothing more.
    const roots = statuses(client).map((status) => status.root);
    expect(roots.lastIndexOf(missing)).toBeLessThan(roots.indexOf(EXAMPLE_STORE));
    expect(new Set(roots)).toEqual(new Set([missing, EXAMPLE_STORE]));
  });
});
