import { describe, expect, it } from 'vitest';
import { SessionCommands, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { executeSessionCommand } from './commands';
import { UnknownCommandError } from './errors';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

function session(id: string, cwd: string | undefined, createdAt: number, text: string, title?: string): InMemorySession {
  const log = new SessionLogBuilder();
  log.user(text);
  log.assistant(`answer in ${id}`);
  if (title !== undefined) log.title(title);
  return { header: { id, createdAt, ...(cwd === undefined ? {} : { cwd }) }, events: log.events() };
}

const SESSIONS = [
  session('alpha', '/a', 300, 'first question', 'Alpha'),
  session('beta', '/b', 200, 'second question'),
  session('gamma', undefined, 100, 'third question'),
];

const DOCUMENT = openDocument('file:///b/prompt.md', `look at ${formatSessionReferenceMention({ sessionId: 'alpha', label: 'A' })} please`);

function run(command: string, ...args: unknown[]) {
  const { workspace } = testWorkspace(SESSIONS, { folders: ['/a', '/b'], documents: [DOCUMENT] });
  return executeSessionCommand(command, args, workspace);
}

async function errorOf(promise: Promise<unknown>): Promise<{ code?: string; name?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a failure');
}

describe('dshSession.candidates', () => {
  it('returns mention candidates ranked for the target cwd, labels unchanged', async () => {
    const result = await run(SessionCommands.candidates, { target: { cwd: '/b' } });
    expect(result).toEqual([
      { sessionId: 'beta', label: 'beta', cwd: '/b', createdAt: 200, mention: formatSessionReferenceMention({ sessionId: 'beta' }) },
      { sessionId: 'gamma', label: 'gamma', createdAt: 100, mention: formatSessionReferenceMention({ sessionId: 'gamma' }) },
      { sessionId: 'alpha', label: 'Alpha', cwd: '/a', createdAt: 300, mention: formatSessionReferenceMention({ sessionId: 'alpha', label: 'Alpha' }) },
    ]);
  });

  it('takes query, limit and the target session, and accepts one JSON string argument', async () => {
    const result = (await run(SessionCommands.candidates, JSON.stringify({ query: 'a', limit: 2, target: { sessionId: 'alpha', cwd: null } }))) as Array<{ sessionId: string }>;
    // No target cwd: dsh still ranks sessions without a cwd first; the target itself is never offered.
    expect(result.map((candidate) => candidate.sessionId)).toEqual(['gamma', 'beta']);
  });

  it('ranks for the workspace folder of the given document', async () => {
    const result = (await run(SessionCommands.candidates, { textDocument: { uri: DOCUMENT.uri } })) as Array<{ sessionId: string }>;
    expect(result.map((candidate) => candidate.sessionId)).toEqual(['beta', 'gamma', 'alpha']);
  });

  it('refuses a bad limit (INVALID_REFERENCE) and a bad per-call config (INVALID_CONFIG)', async () => {
    expect(await errorOf(run(SessionCommands.candidates, { limit: 0 }))).toMatchObject({
      code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      message: 'candidate limit must be a positive safe integer',
    });
    expect(await errorOf(run(SessionCommands.candidates, { config: { candidateLimit: 1.5 } }))).toMatchObject({
      code: 'SESSION_REFERENCE_INVALID_CONFIG',
      message: 'session-reference: candidateLimit must be a positive safe integer',
    });
  });

  it('uses a per-call candidateLimit when no limit is given', async () => {
    expect(await run(SessionCommands.candidates, { config: { candidateLimit: 2 } })).toHaveLength(2);
  });
});

describe('dshSession.prepare', () => {
  it('prepares content with references as given', async () => {
    const result = (await run(SessionCommands.prepare, {
      content: [{ type: 'text', text: 'hi' }, { type: 'image', attachment: { x: 1 } }],
      references: [{ sessionId: 'beta', label: 'B' }],
    })) as { content: unknown; additionalContext: { id: string; role: string; source: { references: Array<{ label: string }> }; content: Array<{ text: string }> } };
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }, { type: 'image', attachment: { x: 1 } }]);
    expect(result.additionalContext.role).toBe('user');
    expect(result.additionalContext.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.additionalContext.source.references[0]!.label).toBe('B');
    expect(result.additionalContext.content[0]!.text).toContain('"conversation":[{"role":"user","text":"second question"}');
  });

  it('parses the text form as dsh parses a direct message', async () => {
    const text = `see ${formatSessionReferenceMention({ sessionId: 'gamma', label: 'G]' })} now`;
    const result = (await run(SessionCommands.prepare, { text })) as { content: unknown; additionalContext: { source: { references: Array<{ sessionId: string; label: string }> } } };
    expect(result.content).toEqual([{ type: 'text', text: 'see @G] now' }]);
    expect(result.additionalContext.source.references.map(({ sessionId, label }) => ({ sessionId, label }))).toEqual([{ sessionId: 'gamma', label: 'G]' }]);
  });

  it('reads an open document in the textDocument form', async () => {
    const result = (await run(SessionCommands.prepare, { textDocument: { uri: DOCUMENT.uri } })) as { content: unknown };
    expect(result.content).toEqual([{ type: 'text', text: 'look at @A please' }]);
  });

  it('answers text without mentions with no additionalContext', async () => {
    expect(await run(SessionCommands.prepare, { text: 'nothing here' })).toEqual({ content: [{ type: 'text', text: 'nothing here' }] });
  });

  it('takes exactly one form; a closed document or a mix is INVALID_REFERENCE', async () => {
    for (const argument of [
      {},
      { text: 'a', textDocument: { uri: DOCUMENT.uri } },
      { content: [], references: [], text: 'a' },
      { content: [] },
      { content: 'x', references: [] },
      { text: 'a', references: [] },
      { text: 42 },
      { textDocument: { uri: 'file:///not/open.md' } },
      { textDocument: 'file:///b/prompt.md' },
    ]) {
      expect(await errorOf(run(SessionCommands.prepare, argument))).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
    }
  });

  it('raises the resolver errors: self reference, too many, read failure, budget, bad URI, bad config', async () => {
    expect(await errorOf(run(SessionCommands.prepare, { target: { sessionId: 'beta' }, content: [], references: [{ sessionId: 'beta' }] }))).toMatchObject({
      code: 'SESSION_REFERENCE_SELF_REFERENCE',
      message: 'session "beta" cannot reference itself',
    });
    expect(
      await errorOf(run(SessionCommands.prepare, { content: [], references: [{ sessionId: 'alpha' }, { sessionId: 'beta' }], config: { maxReferences: 1 } })),
    ).toMatchObject({ code: 'SESSION_REFERENCE_TOO_MANY', message: 'a message may reference at most 1 sessions' });
    expect(await errorOf(run(SessionCommands.prepare, { content: [], references: [{ sessionId: 'nope' }] }))).toMatchObject({
      code: 'SESSION_REFERENCE_READ_FAILED',
      message: 'failed to read referenced session: session "nope" not found',
    });
    expect(await errorOf(run(SessionCommands.prepare, { content: [], references: [{ sessionId: 'alpha' }], config: { maxReferenceBytes: 10 } }))).toMatchObject({
      code: 'SESSION_REFERENCE_BUDGET_EXCEEDED',
    });
    expect(await errorOf(run(SessionCommands.prepare, { text: 'x @[a](dsh-session:IiJ)' }))).toMatchObject({
      code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      message: 'invalid session reference URI "dsh-session:IiJ"',
    });
    expect(await errorOf(run(SessionCommands.prepare, { text: 'x', config: { maxReferences: 4 } }))).toMatchObject({
      code: 'SESSION_REFERENCE_INVALID_CONFIG',
      message: 'session-reference: maxReferences must not exceed 3',
    });
    expect(await errorOf(run(SessionCommands.prepare, { text: 'x', config: 'big' }))).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_CONFIG' });
  });
});

describe('dshSession.parse and dshSession.formatMention', () => {
  it('parses text into readable text and references', async () => {
    expect(await run(SessionCommands.parse, { text: 'a dsh-session:ImJldGEi b' })).toEqual({ text: 'a @beta b', references: [{ sessionId: 'beta', label: 'beta' }] });
  });

  it('formats a mention, the label defaulting to the id', async () => {
    expect(await run(SessionCommands.formatMention, { sessionId: 'beta', label: 'x]y' })).toBe(formatSessionReferenceMention({ sessionId: 'beta', label: 'x]y' }));
    expect(await run(SessionCommands.formatMention, JSON.stringify({ sessionId: 'beta' }))).toBe('@[beta](dsh-session:ImJldGEi)');
    expect(await errorOf(run(SessionCommands.formatMention, { sessionId: 1 }))).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
  });
});

describe('command arguments', () => {
  it('must be exactly one object or one JSON string of an object', async () => {
    const { workspace } = testWorkspace(SESSIONS);
    for (const args of [undefined, [], [{}, {}], [42], [null], [[{ text: 'a' }]], ['not json'], ['[1]'], ['"text"']]) {
      expect(await errorOf(executeSessionCommand(SessionCommands.parse, args, workspace))).toMatchObject({
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      });
    }
  });

  it('raises an unknown command as UnknownCommandError (the wiring answers MethodNotFound)', async () => {
    const error = await errorOf(run('dshSession.nope', {}));
    expect(error).toBeInstanceOf(UnknownCommandError);
    expect((error as unknown as UnknownCommandError).command).toBe('dshSession.nope');
  });
});
