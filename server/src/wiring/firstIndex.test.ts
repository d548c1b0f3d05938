/** Completion's bounded wait for the first index, and progress on a request's token while it waits. */
import { describe, expect, it } from 'vitest';
import type { WorkDoneProgressReporter } from 'vscode-languageserver/node';
import { InMemoryStoreService } from '../testing/inMemoryStoreService';
import { CompletionFirstIndexWaits, FirstIndexWaitProgress, WAIT_PROGRESS_TITLE, progressToken, type FirstIndex } from './firstIndex';

function indexOver(store: InMemoryStoreService): FirstIndex {
  return {
    indexed: () => !store.status().indexing,
    whenIndexed: (signal) => store.whenIndexed(signal),
    storeStatus: () => store.status(),
    onStatus: (listener) => store.onStatus(listener),
  };
}

const indexingStore = () => new InMemoryStoreService('/s', [], { indexing: true });

describe('completion waits for the first index', () => {
  it('answers at once when it is built', async () => {
    const waits = new CompletionFirstIndexWaits(indexOver(new InMemoryStoreService('/s')), 60_000);
    expect(await waits.wait('file:///a.md', new AbortController().signal)).toBe(true);
  });

  it('answers true when it is built within the bound, false when the bound passes first', async () => {
    const store = indexingStore();
    const long = new CompletionFirstIndexWaits(indexOver(store), 60_000);
    const waiting = long.wait('file:///a.md', new AbortController().signal);
    expect(await new CompletionFirstIndexWaits(indexOver(store), 1).wait('file:///b.md', new AbortController().signal)).toBe(false);
    store.setStatus({ indexing: false });
    expect(await waiting).toBe(true);
  });

  it('a newer request for the same document supersedes the waiting one (CANCELLED); other documents wait on', async () => {
    const store = indexingStore();
    const waits = new CompletionFirstIndexWaits(indexOver(store), 60_000);
    const older = waits.wait('file:///a.md', new AbortController().signal);
    const other = waits.wait('file:///b.md', new AbortController().signal);
    const newer = waits.wait('file:///a.md', new AbortController().signal);
    await expect(older).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    store.setStatus({ indexing: false });
    expect(await Promise.all([newer, other])).toEqual([true, true]);
  });

  it('a cancelled request answers CANCELLED', async () => {
    const waits = new CompletionFirstIndexWaits(indexOver(indexingStore()), 60_000);
    const controller = new AbortController();
    const waiting = waits.wait('file:///a.md', controller.signal);
    controller.abort(new Error('cancelled by the client'));
    await expect(waiting).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
  });
});

describe('progress while a request waits', () => {
  it('begins once when the request waits, reports indexing, and ends with the request', () => {
    const store = new InMemoryStoreService('/s', [], { indexing: true });
    store.setStatus({ discovered: 4 });
    const events: unknown[][] = [];
    const reporter: WorkDoneProgressReporter = {
      begin: (...args: unknown[]) => events.push(['begin', ...args]),
      report: (...args: unknown[]) => events.push(['report', ...args]),
      done: () => events.push(['done']),
    };
    const progress = new FirstIndexWaitProgress(indexOver(store), () => reporter);
    progress.begin();
    progress.begin();
    store.setStatus({ indexed: 2 });
    progress.done();
    store.setStatus({ indexed: 4, indexing: false });
    expect(events).toEqual([['begin', WAIT_PROGRESS_TITLE, 0, '0/4 sessions', false], ['report', 50, '2/4 sessions'], ['done']]);
  });

  it('attaches nothing for a request that never waits', () => {
    let attached = false;
    const progress = new FirstIndexWaitProgress(indexOver(indexingStore()), () => {
      attached = true;
      throw new Error('not expected');
    });
    progress.done();
    progress.begin();
    expect(attached).toBe(false);
  });

  it('takes a string or integer workDoneToken, nothing else', () => {
    expect([{ workDoneToken: 'a' }, { workDoneToken: 3 }, { workDoneToken: 1.5 }, { workDoneToken: {} }, {}, null].map(progressToken)).toEqual(['a', 3, undefined, undefined, undefined, undefined]);
  });
});
