import { stringifyTagSafeJson, type ContentBlock, type PreparedReferencedMessage } from '@dsh-session-ls/shared';
import { describe, expect, it, vi } from 'vitest';
import { InMemorySessionStore } from '../testing/inMemorySessionStore';
import { REFERENCED_SESSIONS_PROMPT_PREFIX, REFERENCED_SESSIONS_PROMPT_SUFFIX } from './prompt';
import { createSessionReferenceResolver } from './resolver';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { SessionReadError, type SessionStore } from './sessionStore';

const CONTENT: ContentBlock[] = [{ type: 'text', text: 'look at @alpha' }, { type: 'image', attachment: { id: 'x' } }];

const UNTOUCHED = { compacted: false, originalMessages: 2, retainedMessages: 2, omittedMessages: 0, omittedBytes: 0, truncated: false };

function conversation(...turns: Array<[string, string]>): SessionLogBuilder {
  const log = new SessionLogBuilder();
  for (const [prompt, answer] of turns) {
    log.user(prompt);
    log.assistant(answer);
  }
  return log;
}

function store(): InMemorySessionStore {
  return new InMemorySessionStore([
    { header: { id: 'alpha', cwd: '/w', createdAt: 3 }, events: conversation(['Say hi', 'Hi!']).events() },
    { header: { id: 'beta', createdAt: 2 }, events: conversation(['Read a.txt', 'alpha']).events() },
    { header: { id: 'gamma', cwd: '/g', createdAt: 1 }, events: conversation(['q', 'a']).events() },
    { header: { id: 'delta', cwd: '/d', createdAt: 0 } },
    { header: { id: 'me', cwd: '/w', createdAt: 4 } },
  ]);
}

/** The data array inside the prompt text. */
function promptData(prepared: PreparedReferencedMessage): unknown {
  const text = (prepared.additionalContext!.content[0] as { text: string }).text;
  expect(text.startsWith(REFERENCED_SESSIONS_PROMPT_PREFIX)).toBe(true);
  expect(text.endsWith(REFERENCED_SESSIONS_PROMPT_SUFFIX)).toBe(true);
  return JSON.parse(text.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, text.length - REFERENCED_SESSIONS_PROMPT_SUFFIX.length));
}

describe('prepare', () => {
  it('returns a deep copy of the content and no additionalContext when nothing is referenced', async () => {
    const content = structuredClone(CONTENT);
    const prepared = await createSessionReferenceResolver(store()).prepare(undefined, content, []);
    expect(prepared).toEqual({ content: CONTENT });
    expect(prepared).not.toHaveProperty('additionalContext');
    expect(prepared.content).not.toBe(content);
    (content[0] as { text: string }).text = 'changed';
    expect(prepared.content).toEqual(CONTENT);
  });

  it('emits ONE context message: fresh id, role user, the prompt as its single text block, and the source record', async () => {
    const prepared = await createSessionReferenceResolver(store()).prepare({ sessionId: 'me', cwd: '/w' }, CONTENT, [
      { sessionId: 'alpha', label: 'Say hi' },
      { sessionId: 'beta' },
    ]);
    const context = prepared.additionalContext!;
    expect(Object.keys(context)).toEqual(['id', 'role', 'content', 'source']);
    expect(context.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(context.role).toBe('user');
    expect(context.content).toHaveLength(1);
    expect(Object.keys(context.source)).toEqual(['kind', 'form', 'version', 'references']);
    expect(context.source).toEqual({
      kind: 'session-reference',
      form: 'recall',
      version: 1,
      references: [
        { sessionId: 'alpha', label: 'Say hi', capturedThroughSeq: 1, ...UNTOUCHED, inputIndex: 0 },
        { sessionId: 'beta', label: 'beta', capturedThroughSeq: 1, ...UNTOUCHED, inputIndex: 1 },
      ],
    });
    expect(Object.keys(context.source.references[0]!)).toEqual([
      'sessionId',
      'label',
      'capturedThroughSeq',
      'compacted',
      'originalMessages',
      'retainedMessages',
      'omittedMessages',
      'omittedBytes',
      'truncated',
      'inputIndex',
    ]);
    expect((context.content[0] as { text: string }).text).toBe(
      REFERENCED_SESSIONS_PROMPT_PREFIX +
        '[{"sessionId":"alpha","label":"Say hi","cwd":"/w","capturedThroughSeq":1,' +
        '"conversation":[{"role":"user","text":"Say hi"},{"role":"assistant","text":"Hi!"}]},' +
        '{"sessionId":"beta","label":"beta","cwd":null,"capturedThroughSeq":1,' +
        '"conversation":[{"role":"user","text":"Read a.txt"},{"role":"assistant","text":"alpha"}]}]' +
        REFERENCED_SESSIONS_PROMPT_SUFFIX,
    );
    expect(prepared.content).toEqual(CONTENT);
    const again = await createSessionReferenceResolver(store()).prepare(undefined, CONTENT, [{ sessionId: 'alpha' }]);
    expect(again.additionalContext!.id).not.toBe(context.id);
  });

  it('skips duplicates by id (first label wins), numbering inputIndex in the de-duplicated order', async () => {
    const prepared = await createSessionReferenceResolver(store()).prepare(undefined, CONTENT, [
      { sessionId: 'beta', label: 'first' },
      { sessionId: 'alpha' },
      { sessionId: 'beta', label: 'second' },
      { sessionId: 'alpha', label: 'late label' },
    ]);
    expect(prepared.additionalContext!.source.references.map(({ sessionId, label, inputIndex }) => ({ sessionId, label, inputIndex }))).toEqual([
      { sessionId: 'beta', label: 'first', inputIndex: 0 },
      { sessionId: 'alpha', label: 'alpha', inputIndex: 1 },
    ]);
  });

  describe('normalisation', () => {
    const resolver = createSessionReferenceResolver(store(), { maxReferences: 2 });
    const target = { sessionId: 'me' };

    it.each([
      ['null', [null], 'session reference must be an object'],
      ['a string', ['alpha'], 'session reference must be an object'],
      ['a number', [7], 'session reference must be an object'],
      ['no sessionId', [{ label: 'x' }], 'session reference must contain a string sessionId and optional string label'],
      ['a numeric sessionId', [{ sessionId: 1 }], 'session reference must contain a string sessionId and optional string label'],
      ['a numeric label', [{ sessionId: 'alpha', label: 2 }], 'session reference must contain a string sessionId and optional string label'],
      ['a null label', [{ sessionId: 'alpha', label: null }], 'session reference must contain a string sessionId and optional string label'],
    ])('rejects an entry that is %s with INVALID_REFERENCE', async (_, references, message) => {
      await expect(resolver.prepare(target, CONTENT, references)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
        message: message,
      });
    });

    it('rejects references that are not an array with INVALID_REFERENCE', async () => {
      await expect(resolver.prepare(target, CONTENT, { sessionId: 'alpha' })).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      });
    });

    it('checks entries in order: the first bad entry decides', async () => {
      await expect(resolver.prepare(target, CONTENT, [{ sessionId: 'me' }, null])).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_SELF_REFERENCE',
      });
      await expect(resolver.prepare(target, CONTENT, [null, { sessionId: 'me' }])).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      });
    });

    it('raises SELF_REFERENCE for the target, even as a duplicate, with dsh message', async () => {
      const references = [{ sessionId: 'alpha' }, { sessionId: 'alpha' }, { sessionId: 'me', label: 'x' }];
      await expect(resolver.prepare(target, CONTENT, references)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_SELF_REFERENCE',
        message: 'session "me" cannot reference itself',
      });
      await expect(createSessionReferenceResolver(store()).prepare({ sessionId: 'a "b"' }, CONTENT, [{ sessionId: 'a "b"' }])).rejects.toMatchObject({
        name: 'SessionReferenceError',
        message: 'session "a \\"b\\"" cannot reference itself',
      });
    });

    it('raises SELF_REFERENCE rather than TOO_MANY: self is checked per entry, the count after the whole list', async () => {
      const references = [{ sessionId: 'alpha' }, { sessionId: 'beta' }, { sessionId: 'gamma' }, { sessionId: 'me' }];
      await expect(resolver.prepare(target, CONTENT, references)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_SELF_REFERENCE',
      });
    });

    it('raises TOO_MANY only after the whole list passes, counting distinct ids, before any read', async () => {
      const counted = store();
      const limited = createSessionReferenceResolver(counted, { maxReferences: 2 });
      const invalidLater = [{ sessionId: 'alpha' }, { sessionId: 'beta' }, { sessionId: 'gamma' }, 42];
      await expect(limited.prepare(undefined, CONTENT, invalidLater)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      });
      const three = [{ sessionId: 'alpha' }, { sessionId: 'beta' }, { sessionId: 'gamma' }];
      await expect(limited.prepare(undefined, CONTENT, three)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_TOO_MANY',
        message: 'a message may reference at most 2 sessions',
      });
      expect(counted.readLog).toEqual([]);
      const duplicates = [{ sessionId: 'alpha' }, { sessionId: 'beta' }, { sessionId: 'alpha' }, { sessionId: 'beta' }];
      expect((await limited.prepare(undefined, CONTENT, duplicates)).additionalContext!.source.references).toHaveLength(2);
    });

    it('allows a target session id to be referenced when the target has no session id', async () => {
      const prepared = await createSessionReferenceResolver(store()).prepare({ cwd: '/w' }, CONTENT, [{ sessionId: 'me' }]);
      expect(prepared.additionalContext!.source.references[0]!.sessionId).toBe('me');
    });
  });

  describe('reads', () => {
    it('reads each distinct source exactly once, all in parallel', async () => {
      const sessions = store();
      const release = sessions.gateReads();
      const pending = createSessionReferenceResolver(sessions).prepare(undefined, CONTENT, [
        { sessionId: 'alpha' },
        { sessionId: 'beta' },
        { sessionId: 'alpha' },
        { sessionId: 'gamma' },
      ]);
      // All three reads are in flight before any of them may finish.
      await vi.waitFor(() => expect(sessions.readLog).toHaveLength(3), { timeout: 10_000, interval: 5 });
      release();
      await pending;
      expect(sessions.readLog).toEqual(['alpha', 'beta', 'gamma']);
      expect(sessions.readSignals.some((signal) => signal?.aborted)).toBe(false);
    });

    it('fails the whole call with READ_FAILED on a missing source, in dsh words, returning nothing', async () => {
      const references = [{ sessionId: 'alpha' }, { sessionId: 'no-such-session' }];
      await expect(createSessionReferenceResolver(store()).prepare(undefined, CONTENT, references)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_READ_FAILED',
        message: 'failed to read referenced session: session "no-such-session" not found',
        cause: expect.any(SessionReadError),
      });
    });

    it('words other read failures as "failed to read referenced session: <store message>"', async () => {
      const sessions = store().failRead('beta', new SessionReadError('corrupt', 'corrupt session log: bad checksum'));
      await expect(createSessionReferenceResolver(sessions).prepare(undefined, CONTENT, [{ sessionId: 'beta' }])).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_READ_FAILED',
        message: 'failed to read referenced session: corrupt session log: bad checksum',
      });
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a store rejecting with a non-Error is the case
      const odd: SessionStore = { listSessions: async () => [], readSurface: () => Promise.reject('plain string') };
      await expect(createSessionReferenceResolver(odd).prepare(undefined, CONTENT, [{ sessionId: 'x' }])).rejects.toMatchObject({
        name: 'SessionReferenceError',
        message: 'failed to read referenced session: plain string',
      });
    });

    it('tells the store to stop the other reads once one failed', async () => {
      const sessions = store().failRead('alpha', new Error('boom'));
      const release = sessions.gateReads();
      const pending = createSessionReferenceResolver(sessions).prepare(undefined, CONTENT, [{ sessionId: 'beta' }, { sessionId: 'alpha' }]);
      await vi.waitFor(() => expect(sessions.readLog).toHaveLength(2), { timeout: 10_000, interval: 5 });
      release();
      await expect(pending).rejects.toMatchObject({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_READ_FAILED' });
      expect(sessions.readSignals.every((signal) => signal?.aborted === true)).toBe(true);
    });

    it('returns a snapshot: later changes to a source do not change it', async () => {
      const sessions = store();
      const resolver = createSessionReferenceResolver(sessions);
      const before = await resolver.prepare(undefined, CONTENT, [{ sessionId: 'alpha' }]);
      const frozen = structuredClone(before);
      const later = new SessionLogBuilder();
      later.user('earlier prompt');
      later.assistant('earlier answer');
      later.user('new prompt');
      sessions.append('alpha', later.events()[2]!);
      expect(before).toEqual(frozen);
      const after = await resolver.prepare(undefined, CONTENT, [{ sessionId: 'alpha' }]);
      expect(JSON.stringify(promptData(after))).toContain('new prompt');
      expect(JSON.stringify(promptData(before))).not.toContain('new prompt');
    });
  });

  describe('budget', () => {
    it('budgets each source on its own', async () => {
      const long = (word: string): SessionLogBuilder => conversation([`${word} `.repeat(20), `${word}!`.repeat(20)]);
      const sessions = new InMemorySessionStore([
        { header: { id: 'one', createdAt: 1 }, events: long('one').events() },
        { header: { id: 'two', createdAt: 1 }, events: long('two').events() },
      ]);
      const full = await createSessionReferenceResolver(sessions).prepare(undefined, CONTENT, [{ sessionId: 'one' }, { sessionId: 'two' }]);
      const [one, two] = promptData(full) as unknown[];
      const sizes = [one, two].map((data) => Buffer.byteLength(stringifyTagSafeJson(data)));
      // Each source fits on its own although together they are twice the budget.
      const budget = Math.max(...sizes);
      const both = [{ sessionId: 'one' }, { sessionId: 'two' }];
      const prepared = await createSessionReferenceResolver(sessions, { maxReferenceBytes: budget }).prepare(undefined, CONTENT, both);
      expect(prepared.additionalContext!.source.references.map((reference) => reference.truncated)).toEqual([false, false]);
      const tight = await createSessionReferenceResolver(sessions, { maxReferenceBytes: budget - 1 }).prepare(undefined, CONTENT, both);
      for (const [index, data] of (promptData(tight) as unknown[]).entries()) {
        expect(Buffer.byteLength(stringifyTagSafeJson(data))).toBeLessThanOrEqual(budget - 1);
        expect(tight.additionalContext!.source.references[index]!.truncated).toBe(true);
      }
    });

    it('fails the whole call with BUDGET_EXCEEDED when one source cannot fit', async () => {
      const sessions = store();
      const resolver = createSessionReferenceResolver(sessions, { maxReferenceBytes: 80 });
      await expect(resolver.prepare(undefined, CONTENT, [{ sessionId: 'delta' }, { sessionId: 'alpha' }])).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_BUDGET_EXCEEDED',
        message: 'referenced session snapshot cannot fit the configured byte budget',
      });
    });

    it('reports READ_FAILED before BUDGET_EXCEEDED', async () => {
      const resolver = createSessionReferenceResolver(store(), { maxReferenceBytes: 1 });
      await expect(resolver.prepare(undefined, CONTENT, [{ sessionId: 'alpha' }, { sessionId: 'missing' }])).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_READ_FAILED',
      });
    });
  });

  describe('cancellation', () => {
    it('rejects an already aborted signal with CANCELLED (cause = reason) and reads nothing', async () => {
      const sessions = store();
      const reason = new Error('turn aborted');
      const resolver = createSessionReferenceResolver(sessions);
      await expect(resolver.prepare(undefined, CONTENT, [{ sessionId: 'alpha' }], AbortSignal.abort(reason))).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_CANCELLED',
        message: 'session reference preparation was cancelled',
        cause: reason,
      });
      expect(sessions.readLog).toEqual([]);
    });

    it('reports invalid references before looking at the signal, as dsh does', async () => {
      await expect(createSessionReferenceResolver(store()).prepare(undefined, CONTENT, [null], AbortSignal.abort())).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      });
    });

    it('rejects promptly with CANCELLED when aborted while the store never settles', async () => {
      const sessions = store().stall('read');
      const controller = new AbortController();
      const references = [{ sessionId: 'alpha' }, { sessionId: 'beta' }];
      const pending = createSessionReferenceResolver(sessions).prepare(undefined, CONTENT, references, controller.signal);
      await vi.waitFor(() => expect(sessions.readLog).toHaveLength(2), { timeout: 10_000, interval: 5 });
      controller.abort('stop');
      await expect(pending).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_CANCELLED',
        cause: 'stop',
      });
      expect(sessions.readSignals.every((signal) => signal?.aborted === true)).toBe(true);
    });

    it('gives CANCELLED, not READ_FAILED, when a read fails because of the abort', async () => {
      const sessions = store();
      sessions.gateReads();
      const controller = new AbortController();
      const pending = createSessionReferenceResolver(sessions).prepare(undefined, CONTENT, [{ sessionId: 'alpha' }], controller.signal);
      await vi.waitFor(() => expect(sessions.readLog).toHaveLength(1), { timeout: 10_000, interval: 5 });
      controller.abort(new Error('why'));
      await expect(pending).rejects.toMatchObject({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_CANCELLED' });
    });

    it('checks the signal again right after the reads', async () => {
      const controller = new AbortController();
      const inner = store();
      const aborting: SessionStore = {
        listSessions: (signal) => inner.listSessions(signal),
        async readSurface(sessionId, signal) {
          const surface = await inner.readSurface(sessionId, signal);
          controller.abort('late');
          return surface;
        },
      };
      const resolver = createSessionReferenceResolver(aborting);
      await expect(resolver.prepare(undefined, CONTENT, [{ sessionId: 'alpha' }], controller.signal)).rejects.toMatchObject({
        name: 'SessionReferenceError',
        code: 'SESSION_REFERENCE_CANCELLED',
        cause: 'late',
      });
    });
  });
});
