/** The workspace's listing during the first index (lsp-contract.md, First answers), over in-memory stores the test drives. */
import { describe, expect, it } from 'vitest';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { InMemoryStoreService } from '../testing/inMemoryStoreService';
import { SessionWorkspace } from './sessionWorkspace';

function session(id: string, createdAt: number): InMemorySession {
  const log = new SessionLogBuilder();
  log.user(`prompt of ${id}`);
  return { header: { id, cwd: '/w', createdAt }, events: log.events() };
}

const SESSIONS = [session('s1', 2), session('s2', 1)];

function workspace(): { workspace: SessionWorkspace; stores: InMemoryStoreService[] } {
  const stores: InMemoryStoreService[] = [];
  const workspace = new SessionWorkspace({
    openStore: (root) => {
      const store = new InMemoryStoreService(root, SESSIONS, { indexing: true });
      stores.push(store);
      return store;
    },
    defaultSessionsRoot: () => '/first',
    env: {},
  });
  return { workspace, stores };
}

/** Whether a promise has settled, after the pending jobs ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

const ids = (sessions: readonly { id: string }[]) => sessions.map((summary) => summary.id);

describe('the listing during the first index', () => {
  it('waits for a store to open and for its first index, telling onWait', async () => {
    const { workspace: space, stores } = workspace();
    let waits = 0;
    const listing = space.view({ onWait: () => waits++ }).sessions.listSessions();
    expect(await settled(listing)).toBe(false);
    space.openStoreForSettings();
    expect(await settled(listing)).toBe(false);
    expect(space.indexed()).toBe(false);
    stores[0]!.setStatus({ indexing: false });
    expect(ids(await listing)).toEqual(['s1', 's2']);
    expect(space.indexed()).toBe(true);
    expect(waits).toBe(1);
    // After the first index: no wait.
    await space.view({ onWait: () => waits++ }).sessions.listSessions();
    expect(waits).toBe(1);
  });

  it('follows a root change made while it waits to the new store', async () => {
    const { workspace: space, stores } = workspace();
    space.openStoreForSettings();
    const listing = space.sessions.listSessions();
    space.setSection({ sessionsRoot: '/second' });
    space.openStoreForSettings();
    // The first store is closed, never indexed: the answer comes from the second.
    expect(await settled(listing)).toBe(false);
    stores[1]!.setStatus({ indexing: false });
    expect(ids(await listing)).toEqual(['s1', 's2']);
    expect(stores.map((store) => store.root)).toEqual(['/first', '/second']);
  });

  it('answers CANCELLED when the request is cancelled while it waits', async () => {
    const { workspace: space } = workspace();
    space.openStoreForSettings();
    const controller = new AbortController();
    const listing = space.sessions.listSessions(controller.signal);
    controller.abort(new Error('client cancelled'));
    await expect(listing).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
  });

  it('the partial view answers what is indexed so far, and nothing before a store is open', async () => {
    const { workspace: space } = workspace();
    const partial = space.view({ partial: true });
    expect(await partial.sessions.listSessions()).toEqual([]);
    space.openStoreForSettings();
    expect(ids(await partial.sessions.listSessions())).toEqual(['s1', 's2']);
  });
});
