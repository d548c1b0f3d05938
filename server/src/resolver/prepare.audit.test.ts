// Spec audit (docs/traceability.md): rules of session-reference.md §6–§7 that the main resolver tests
// did not pin on their own (a mutation of the code survived them).
import { encodeSessionReferenceUri, formatSessionReferenceMention, type ContentBlock } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { InMemorySessionStore } from '../testing/inMemorySessionStore';
import { createSessionReferenceResolver } from './resolver';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import type { SessionStore } from './sessionStore';

function store(): InMemorySessionStore {
  const log = new SessionLogBuilder();
  log.user('a prompt');
  log.assistant('an answer');
  return new InMemorySessionStore([
    { header: { id: 'alpha', cwd: '/w', createdAt: 2 }, events: log.events() },
    { header: { id: 'beta', createdAt: 1 }, events: log.events() },
  ]);
}

/**
 * A signal that turns aborted once `afterThis` has settled, without firing its `abort` event: it models
 * an abort that lands after a pending read has settled but before the resolver goes on, which only a
 * check of the signal at that point can see (a race on the `abort` event cannot).
 */
function signalAbortedAfter(): { signal: AbortSignal; settle: () => void } {
  let aborted = false;
  const { signal } = new AbortController();
  Object.defineProperty(signal, 'aborted', { get: () => aborted });
  return { signal, settle: () => (aborted = true) };
}

describe('§7.1 prepare does not parse content', () => {
  it('returns content holding mentions and bare URIs unchanged, and references only what it is given', async () => {
    const content: ContentBlock[] = [
      { type: 'text', text: `see ${formatSessionReferenceMention({ sessionId: 'alpha' })} and ${encodeSessionReferenceUri('beta')}` },
      { type: 'text', text: 'broken @[x](dsh-session:IiJ)' },
    ];
    const resolver = createSessionReferenceResolver(store());
    const none = await resolver.prepare(undefined, content, []);
    expect(none).toEqual({ content });
    const one = await resolver.prepare(undefined, content, [{ sessionId: 'beta' }]);
    expect(one.content).toEqual(content);
    expect(one.additionalContext!.source.references.map((reference) => reference.sessionId)).toEqual(['beta']);
  });
});

describe('§3/§7.4 CANCELLED right after the reads', () => {
  it('rejects with CANCELLED when the signal is aborted once every read has settled', async () => {
    const inner = store();
    const { signal, settle } = signalAbortedAfter();
    const sessions: SessionStore = {
      listSessions: (listSignal) => inner.listSessions(listSignal),
      async readSurface(sessionId, readSignal) {
        const surface = await inner.readSurface(sessionId, readSignal);
        // Settle first, then abort: the resolver's race on the read has already been won by the read.
        queueMicrotask(settle);
        return surface;
      },
    };
    await expect(createSessionReferenceResolver(sessions).prepare(undefined, [], [{ sessionId: 'alpha' }], signal)).rejects.toMatchObject({
      name: 'SessionReferenceError',
      code: 'SESSION_REFERENCE_CANCELLED',
      message: 'session reference preparation was cancelled',
    });
  });
});

describe('§6.7 CANCELLED right after the listing', () => {
  it('rejects with CANCELLED when the signal is aborted once the listing has settled', async () => {
    const inner = store();
    const { signal, settle } = signalAbortedAfter();
    const sessions: SessionStore = {
      async listSessions(listSignal) {
        const listing = await inner.listSessions(listSignal);
        queueMicrotask(settle);
        return listing;
      },
      readSurface: (sessionId, readSignal) => inner.readSurface(sessionId, readSignal),
    };
    await expect(createSessionReferenceResolver(sessions).listCandidates(undefined, '', 5, signal)).rejects.toMatchObject({
      name: 'SessionReferenceError',
      code: 'SESSION_REFERENCE_CANCELLED',
    });
  });
});
