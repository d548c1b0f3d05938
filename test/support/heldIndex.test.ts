/** The test double that holds a store's first index open while a file exists. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryStoreService } from '../../server/src/testing/inMemoryStoreService';
import { holdFirstIndex } from './heldIndex';
import type { StoreStatus } from '../../server/src/store/service';
import { DshLog as SessionLogBuilder } from '../../server/src/testing/testLogs';
import type { InMemorySession } from '../../server/src/testing/inMemorySessionStore';

function session(id: string): InMemorySession {
  const log = new SessionLogBuilder();
  log.user(`prompt of ${id}`);
  return { header: { id, cwd: '/w', createdAt: 1 }, events: log.events() };
}

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function holdFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dsh-session-ls-hold-'));
  dirs.push(dir);
  const file = path.join(dir, 'hold');
  writeFileSync(file, '');
  return file;
}

describe('holdFirstIndex', () => {
  it('reports indexing and lists nothing while the file exists, and is the store once it is gone', async () => {
    const inner = new InMemoryStoreService('/s', [session('s1')]);
    const file = holdFile();
    const store = holdFirstIndex(inner, file);
    const statuses: StoreStatus[] = [];
    store.onStatus((status) => statuses.push(status));
    expect(store.status()).toMatchObject({ indexing: true, indexed: 0 });
    expect(await store.listSessions()).toEqual([]);
    let indexed = false;
    const whenIndexed = store.whenIndexed().then(() => (indexed = true));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(indexed).toBe(false);
    rmSync(file);
    await whenIndexed;
    expect(store.status()).toMatchObject({ indexing: false, indexed: 1 });
    expect((await store.listSessions()).map((summary) => summary.id)).toEqual(['s1']);
    expect(statuses.at(-1)).toMatchObject({ indexing: false });
    store.dispose();
    expect(inner.disposed).toBe(true);
  });

  it('a cancelled wait rejects with the reason', async () => {
    const store = holdFirstIndex(new InMemoryStoreService('/s'), holdFile());
    const controller = new AbortController();
    const waiting = store.whenIndexed(controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    store.dispose();
  });
});
