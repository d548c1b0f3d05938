/**
 * Fuzzing `prepare` and `listCandidates` over an in-memory store: arbitrary
 * references, configs, targets, contents and session logs. Only SessionReferenceErrors escape, each
 * with the code dsh's order of checks gives; every success is a well-formed, in-budget snapshot.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  stringifyTagSafeJson,
  type ContentBlock,
  type SessionReferenceConfig,
  type SessionReferenceErrorCode,
  type SessionReferenceTarget,
} from '@dsh-session-ls/shared';
import {
  REFERENCED_SESSIONS_PROMPT_PREFIX,
  REFERENCED_SESSIONS_PROMPT_SUFFIX,
  SessionReadError,
  createSessionReferenceResolver,
  type SessionSurface,
} from '../../server/src/resolver';
import { InMemorySessionStore, type InMemorySession } from '../../server/src/testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../../server/src/testing/testLogs';
import { hostileText, sessionIdArb, utf16String } from './support/arbitraries';
import { asyncOutcomeOf, outcomeOf } from './support/outcome';
import { FUZZ_RUNS, recordFigure, scaled } from './support/scale';

const RUNS = Math.max(50, Math.floor(FUZZ_RUNS / 2));
recordFigure('fuzz-prepare', 'runs per property', RUNS);

// ---- generated sessions ------------------------------------------------------------------------

/** True about once in `n` runs. */
const oneIn = (n: number): fc.Arbitrary<boolean> => fc.nat({ max: n - 1 }).map((k) => k === 0);

type LogOp =
  | { kind: 'user' | 'assistant' | 'plugin' | 'reference' | 'tool' | 'title' | 'multi'; text: string }
  | { kind: 'checkpoint'; text: string; from: number; to: number; reversed: boolean };

const messageText = fc.oneof(
  { weight: 5, arbitrary: hostileText(6) },
  { weight: 3, arbitrary: fc.tuple(hostileText(2), fc.integer({ min: 1, max: 400 })).map(([piece, times]) => piece.repeat(times)) },
  { weight: 1, arbitrary: fc.constant('') },
);

const logOp: fc.Arbitrary<LogOp> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('user', 'assistant', 'plugin', 'reference', 'tool', 'title', 'multi'), text: messageText }) as fc.Arbitrary<LogOp> },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('checkpoint' as const), text: messageText, from: fc.nat(), to: fc.nat(), reversed: oneIn(8) }) },
);

/** Writes the ops as a dsh-shaped log; checkpoint ranges point at surface seqs, sometimes in the wrong order (a corrupt log). */
function buildLog(ops: readonly LogOp[]): SessionLogBuilder {
  const log = new SessionLogBuilder();
  const surface: number[] = [];
  for (const op of ops) {
    switch (op.kind) {
      case 'user':
        surface.push(log.user(op.text));
        break;
      case 'assistant':
        surface.push(log.assistant(op.text));
        break;
      case 'multi':
        surface.push(log.assistant([{ type: 'text', text: op.text }, { type: 'reasoning', text: 'hidden' }, { type: 'text', text: op.text }]));
        break;
      case 'plugin':
        surface.push(log.user(op.text, { kind: 'plugin', plugin: 'dsh-system-prompt', form: 'snapshot' }));
        break;
      case 'reference':
        surface.push(log.user(`</referenced-sessions>${op.text}`, { kind: 'session-reference', form: 'recall', version: 1, references: [] }));
        break;
      case 'tool':
        surface.push(log.toolResult('call', op.text));
        break;
      case 'title':
        log.title(op.text);
        break;
      case 'checkpoint': {
        if (surface.length === 0) break;
        // Mostly a range in surface order; sometimes reversed, which makes the log corrupt.
        const [a, b] = [op.from % surface.length, op.to % surface.length].sort((x, y) => (op.reversed ? y - x : x - y));
        const start = surface[a]!;
        const end = surface[b]!;
        const seq = log.checkpoint(op.text, start, end);
        const i = surface.indexOf(start);
        const j = surface.indexOf(end);
        if (i <= j) surface.splice(i, j - i + 1, seq);
        break;
      }
    }
  }
  return log;
}

const sessionsArb = fc.uniqueArray(
  fc.record({
    id: sessionIdArb,
    cwd: fc.option(fc.oneof(fc.constantFrom('/w', '/home/alice/proj'), hostileText(3)), { nil: undefined }),
    createdAt: fc.integer({ min: 0, max: 2_000_000_000_000 }),
    ops: fc.array(logOp, { maxLength: 12 }),
    failRead: oneIn(16),
  }),
  { selector: (session) => session.id, minLength: 1, maxLength: 6 },
);

interface World {
  store: InMemorySessionStore;
  ids: string[];
}

/** One generated session. */
interface GeneratedSession {
  id: string;
  cwd?: string;
  createdAt: number;
  ops: LogOp[];
  failRead: boolean;
}

function world(sessions: readonly GeneratedSession[]): World {
  const store = new InMemorySessionStore(
    sessions.map(
      (session): InMemorySession => ({
        header: { id: session.id, ...(session.cwd === undefined ? {} : { cwd: session.cwd }), createdAt: session.createdAt },
        events: buildLog(session.ops).events(),
      }),
    ),
  );
  for (const session of sessions) if (session.failRead) store.failRead(session.id, new SessionReadError('corrupt', 'injected corruption'));
  return { store, ids: sessions.map((session) => session.id) };
}

// ---- generated requests -------------------------------------------------------------------------

const configField = fc.oneof(
  { weight: 20, arbitrary: fc.constant(undefined) },
  { weight: 10, arbitrary: fc.integer({ min: 1, max: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 4, 1.5, NaN, '2', null) },
);
const configArb = fc.record(
  {
    maxReferences: configField,
    candidateLimit: fc.oneof(configField, fc.integer({ min: 1, max: 100 })),
    maxReferenceBytes: fc.oneof(
      { weight: 5, arbitrary: fc.constant(undefined) },
      { weight: 20, arbitrary: fc.integer({ min: 150, max: 1500 }) },
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 150 }) },
      { weight: 1, arbitrary: fc.constantFrom(0, -5, 2.5, Number.MAX_SAFE_INTEGER + 2) },
    ),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<Partial<SessionReferenceConfig>>;

const referencesArb = (ids: string[]) => {
  const knownId = ids.length > 0 ? fc.constantFrom(...ids) : sessionIdArb;
  const entry = fc.oneof(
    { weight: 8, arbitrary: fc.record({ sessionId: fc.oneof({ weight: 9, arbitrary: knownId }, { weight: 1, arbitrary: sessionIdArb }), label: hostileText(3) }, { requiredKeys: ['sessionId'] }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 1, 'id', [], {}, { sessionId: 1 }, { sessionId: 'x', label: 2 }, { label: 'x' }, { sessionId: null }) },
  );
  return fc.oneof({ weight: 12, arbitrary: fc.array(entry, { maxLength: 5 }) }, { weight: 1, arbitrary: fc.anything() });
};

const targetArb = (ids: string[]) =>
  fc.option(
    fc.record(
      { sessionId: ids.length > 0 ? fc.oneof(fc.constantFrom(...ids), sessionIdArb) : sessionIdArb, cwd: fc.constantFrom('/w', '/home/alice/proj', '/else') },
      { requiredKeys: [] },
    ),
    { nil: undefined },
  ) as fc.Arbitrary<SessionReferenceTarget | undefined>;

const contentArb = fc.oneof(
  fc.array(fc.record({ type: fc.constant('text'), text: hostileText(4) })),
  fc.array(fc.jsonValue()),
) as fc.Arbitrary<ContentBlock[]>;

// ---- the oracle (session-reference.md §3, §7–§9) -----------------------------------------------

/** A message as §8 projects it, with whether it is a checkpoint. */
function projectForOracle(surface: SessionSurface): Array<{ role: 'user' | 'assistant'; text: string; checkpoint: boolean }> {
  const out: Array<{ role: 'user' | 'assistant'; text: string; checkpoint: boolean }> = [];
  const textOf = (content: unknown): string =>
    Array.isArray(content) ? content.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('\n') : '';
  for (const event of surface.events) {
    if (event.type === 'user/message') {
      const kind = event.data?.source?.kind;
      const checkpoint = kind === 'plugin' && event.data?.source?.plugin === 'compact';
      if (kind !== 'user' && !checkpoint) continue;
      const text = textOf(event.data.content);
      if (text !== '') out.push({ role: 'user', text, checkpoint });
    } else if (event.type === 'assistant/message') {
      const text = textOf(event.data?.message?.content);
      if (text !== '') out.push({ role: 'assistant', text, checkpoint: false });
    }
  }
  return out;
}

function tally(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

type Expected = { code: SessionReferenceErrorCode } | { empty: true } | { sources: Array<{ id: string; label: string }> };

/** What dsh's order of checks gives, before any read: a code, nothing referenced, or the sources to read. */
function expectedBeforeReads(references: unknown, target: SessionReferenceTarget | undefined, maxReferences: number): Expected {
  if (!Array.isArray(references)) return { code: 'SESSION_REFERENCE_INVALID_REFERENCE' };
  const sources: Array<{ id: string; label: string }> = [];
  for (const entry of references) {
    if (typeof entry !== 'object' || entry === null) return { code: 'SESSION_REFERENCE_INVALID_REFERENCE' };
    const { sessionId, label } = entry as { sessionId?: unknown; label?: unknown };
    if (typeof sessionId !== 'string' || (label !== undefined && typeof label !== 'string')) {
      return { code: 'SESSION_REFERENCE_INVALID_REFERENCE' };
    }
    if (sessionId === target?.sessionId) return { code: 'SESSION_REFERENCE_SELF_REFERENCE' };
    if (!sources.some((source) => source.id === sessionId)) sources.push({ id: sessionId, label: label ?? sessionId });
  }
  if (sources.length > maxReferences) return { code: 'SESSION_REFERENCE_TOO_MANY' };
  return sources.length === 0 ? { empty: true } : { sources };
}

/** The smallest a source can get (§9): only checkpoints and the last message kept, every text emptied. */
function minimalBytes(surface: SessionSurface, label: string): number {
  const projected = projectForOracle(surface);
  const kept = projected.filter((message, i) => message.checkpoint || i === projected.length - 1);
  return utf8Bytes(
    stringifyTagSafeJson({
      sessionId: surface.header.id,
      label,
      cwd: surface.header.cwd ?? null,
      capturedThroughSeq: surface.capturedThroughSeq,
      conversation: kept.map((message) => ({ role: message.role, text: '' })),
    }),
  );
}

async function surfaceOrError(store: InMemorySessionStore, id: string): Promise<SessionSurface | Error> {
  try {
    return await store.readSurface(id);
  } catch (error) {
    return error as Error;
  }
}

const DATA_KEYS = ['sessionId', 'label', 'cwd', 'capturedThroughSeq', 'conversation'];
const RECORD_KEYS = ['sessionId', 'label', 'capturedThroughSeq', 'compacted', 'originalMessages', 'retainedMessages', 'omittedMessages', 'omittedBytes', 'truncated', 'inputIndex'];

describe('prepare under fuzzing', () => {
  it('raises exactly the code dsh’s order of checks gives, and every success is an in-budget snapshot', { timeout: scaled(60_000, 600_000) }, async () => {
    const outcomes = new Map<string, number>();
    const scenario = sessionsArb.chain((sessions) => {
      const ids = sessions.map((s) => s.id);
      return fc.record({
        sessions: fc.constant(sessions),
        config: configArb,
        target: targetArb(ids),
        references: referencesArb(ids),
        content: contentArb,
        cancelled: oneIn(12),
      });
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ sessions, config, target, references, content, cancelled }) => {
        const { store } = world(sessions);
        const created = outcomeOf(() => createSessionReferenceResolver(store, config));
        if (!created.ok) {
          tally(outcomes, created.error.code);
          expect(created.error.code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
          return;
        }
        const resolver = created.value;
        const signal = cancelled ? AbortSignal.abort(new Error('user cancelled')) : undefined;
        const result = await asyncOutcomeOf(() => resolver.prepare(target, content, references, signal));
        const before = expectedBeforeReads(references, target, resolver.config.maxReferences);
        tally(outcomes, result.ok ? (result.value.additionalContext === undefined ? 'nothing referenced' : 'snapshot') : result.error.code);
        if (result.ok && result.value.additionalContext?.source.references.some((record) => record.truncated)) tally(outcomes, 'snapshot truncated to budget');

        if ('code' in before) {
          expect(result.ok ? 'success' : result.error.code).toBe(before.code);
          return;
        }
        if ('empty' in before) {
          if (!result.ok) throw result.error;
          expect(result.value).toEqual({ content });
          expect('additionalContext' in result.value).toBe(false);
          return;
        }
        if (cancelled) {
          expect(result.ok ? 'success' : result.error.code).toBe('SESSION_REFERENCE_CANCELLED');
          return;
        }
        const surfaces = await Promise.all(before.sources.map((source) => surfaceOrError(store, source.id)));
        const failed = surfaces.find((surface): surface is Error => surface instanceof Error);
        if (failed !== undefined) {
          expect(result.ok ? 'success' : result.error.code).toBe('SESSION_REFERENCE_READ_FAILED');
          if (!result.ok) expect(result.error.message.startsWith('failed to read referenced session: ')).toBe(true);
          return;
        }
        const budget = resolver.config.maxReferenceBytes;
        const fits = before.sources.every((source, i) => minimalBytes(surfaces[i] as SessionSurface, source.label) <= budget);
        if (!fits) {
          expect(result.ok ? 'success' : result.error.code).toBe('SESSION_REFERENCE_BUDGET_EXCEEDED');
          return;
        }
        if (!result.ok) throw result.error;

        // A well-formed snapshot.
        const prepared = result.value;
        expect(prepared.content).toEqual(content);
        expect(prepared.content).not.toBe(content);
        const context = prepared.additionalContext!;
        expect(context.role).toBe('user');
        expect(context.content).toHaveLength(1);
        const text = (context.content[0] as { text: string }).text;
        expect(text.startsWith(REFERENCED_SESSIONS_PROMPT_PREFIX)).toBe(true);
        expect(text.endsWith(REFERENCED_SESSIONS_PROMPT_SUFFIX)).toBe(true);
        // The closing tag appears once, at the very end: session data can never spell it.
        expect(text.indexOf('</referenced-sessions>')).toBe(text.length - '</referenced-sessions>'.length);
        const json = text.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, text.length - REFERENCED_SESSIONS_PROMPT_SUFFIX.length);
        expect(json).not.toContain('<');
        const data = JSON.parse(json) as Array<Record<string, unknown>>;
        expect(data).toHaveLength(before.sources.length);
        const records = context.source.references;
        data.forEach((element, i) => {
          const surface = surfaces[i] as SessionSurface;
          const source = before.sources[i]!;
          expect(Object.keys(element)).toEqual(DATA_KEYS);
          expect(element.sessionId).toBe(source.id);
          expect(element.label).toBe(source.label);
          expect(element.cwd).toBe(surface.header.cwd ?? null);
          expect(element.capturedThroughSeq).toBe(surface.capturedThroughSeq);
          expect(utf8Bytes(stringifyTagSafeJson(element))).toBeLessThanOrEqual(budget);
          const record = records[i]!;
          expect(Object.keys(record)).toEqual(RECORD_KEYS);
          expect(record.inputIndex).toBe(i);
          const projected = projectForOracle(surface);
          const conversation = element.conversation as Array<{ role: string; text: string }>;
          expect(record.originalMessages).toBe(projected.length);
          expect(record.retainedMessages).toBe(conversation.length);
          expect(record.omittedMessages).toBe(projected.length - conversation.length);
          expect(record.compacted).toBe(projected.some((message) => message.checkpoint));
          expect(record.truncated).toBe(record.omittedMessages > 0 || record.omittedBytes > 0);
          if (!record.truncated) expect(conversation).toEqual(projected.map(({ role, text }) => ({ role, text })));
          // Checkpoints and the last message are never dropped.
          const mustKeep = projected.filter((message, k) => message.checkpoint || k === projected.length - 1).length;
          expect(conversation.length).toBeGreaterThanOrEqual(mustKeep);
        });
      }),
      { numRuns: RUNS },
    );
    recordFigure('fuzz-prepare', 'outcomes', JSON.stringify(Object.fromEntries(outcomes)));
  });

  it('candidate listing: any query, limit and target either lists valid rows or is INVALID_REFERENCE', { timeout: scaled(60_000, 600_000) }, async () => {
    const scenario = sessionsArb.chain((sessions) =>
      fc.record({
        sessions: fc.constant(sessions),
        target: targetArb(sessions.map((s) => s.id)),
        query: fc.oneof(hostileText(3), utf16String(6), fc.constant('')),
        limit: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 10 }), fc.constantFrom(0, -1, 1.5, NaN, '3', null)),
      }),
    );
    await fc.assert(
      fc.asyncProperty(scenario, async ({ sessions, target, query, limit }) => {
        const { store } = world(sessions);
        const resolver = createSessionReferenceResolver(store);
        const result = await asyncOutcomeOf(() => resolver.listMentionCandidates(target, query, limit as number));
        const validLimit = limit === undefined || (typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0);
        if (!validLimit) {
          expect(result.ok ? 'success' : result.error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
          return;
        }
        if (!result.ok) throw result.error;
        const rows = result.value;
        expect(rows.length).toBeLessThanOrEqual(limit ?? resolver.config.candidateLimit);
        expect(new Set(rows.map((row) => row.sessionId)).size).toBe(rows.length);
        for (const row of rows) {
          expect(row.sessionId).not.toBe(target?.sessionId);
          const session = sessions.find((s) => s.id === row.sessionId)!;
          expect(session).toBeDefined();
          expect(Object.keys(row)).toEqual(['sessionId', 'label', ...(session.cwd === undefined ? [] : ['cwd']), 'createdAt', 'mention']);
          const haystack = [row.sessionId, row.cwd ?? '', row.label].map((s) => s.toLocaleLowerCase());
          if (query !== '') expect(haystack.some((s) => s.includes(query.toLocaleLowerCase()))).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
