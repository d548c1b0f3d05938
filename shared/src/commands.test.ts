import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DIAGNOSTIC_SOURCE,
  SESSIONS_ROOT_PROBLEMS,
  SESSION_STATUS_NOTIFICATION,
  SETTINGS_SECTION,
  SessionCommands,
  describeSessionsRootProblem,
  sessionCommandParams,
  type ParsedSessionReferenceText,
  type PreparedReferencedMessage,
  type SessionCommandArgument,
  type SessionCommandName,
  type SessionCommandResult,
  type SessionReferenceMentionCandidate,
} from '@dsh-session-ls/shared';

describe('command names and identifiers of lsp-contract.md', () => {
  it('names the six workspace/executeCommand commands', () => {
    expect(SessionCommands).toEqual({
      candidates: 'dshSession.candidates',
      prepare: 'dshSession.prepare',
      parse: 'dshSession.parse',
      formatMention: 'dshSession.formatMention',
      transcript: 'dshSession.transcript',
      preview: 'dshSession.preview',
    });
  });

  it('uses the dshSessions settings section and the dsh-session diagnostic source', () => {
    expect(SETTINGS_SECTION).toBe('dshSessions');
    expect(DIAGNOSTIC_SOURCE).toBe('dsh-session');
  });

  it('names the status notification outside the command namespace', () => {
    expect(SESSION_STATUS_NOTIFICATION).toBe('dshSession/status');
    expect(Object.values(SessionCommands)).not.toContain(SESSION_STATUS_NOTIFICATION);
  });
});

describe('the command map', () => {
  // The expectTypeOf and @ts-expect-error lines are checked by tsc in `npm run lint`, not at run time.
  it('types one argument object and the result of every command, and builds its params', () => {
    const calls = [
      sessionCommandParams(SessionCommands.candidates, { query: 'a', limit: 5, textDocument: { uri: 'file:///a.md' } }),
      sessionCommandParams(SessionCommands.prepare, { content: [{ type: 'text', text: 'x' }], references: [{ sessionId: 's' }] }),
      sessionCommandParams(SessionCommands.prepare, { text: 'x', target: { sessionId: null }, config: { maxReferenceBytes: 10 } }),
      sessionCommandParams(SessionCommands.prepare, { textDocument: { uri: 'file:///a.md' } }),
      sessionCommandParams(SessionCommands.parse, { text: 'x' }),
      sessionCommandParams(SessionCommands.formatMention, { sessionId: 's', label: 'L' }),
      sessionCommandParams(SessionCommands.transcript, { sessionId: 's' }),
      sessionCommandParams(SessionCommands.preview, { text: 'x' }),
    ];
    expect(calls.map((call) => [call.command, call.arguments.length])).toEqual([
      ['dshSession.candidates', 1],
      ['dshSession.prepare', 1],
      ['dshSession.prepare', 1],
      ['dshSession.prepare', 1],
      ['dshSession.parse', 1],
      ['dshSession.formatMention', 1],
      ['dshSession.transcript', 1],
      ['dshSession.preview', 1],
    ]);
    expect(calls[5]).toEqual({ command: 'dshSession.formatMention', arguments: [{ sessionId: 's', label: 'L' }] });

    expectTypeOf<SessionCommandName>().toEqualTypeOf<(typeof SessionCommands)[keyof typeof SessionCommands]>();
    expectTypeOf<SessionCommandResult<typeof SessionCommands.candidates>>().toEqualTypeOf<SessionReferenceMentionCandidate[]>();
    expectTypeOf<SessionCommandResult<typeof SessionCommands.prepare>>().toEqualTypeOf<PreparedReferencedMessage>();
    expectTypeOf<SessionCommandResult<typeof SessionCommands.parse>>().toEqualTypeOf<ParsedSessionReferenceText>();
    expectTypeOf<SessionCommandResult<typeof SessionCommands.formatMention>>().toEqualTypeOf<string>();
    expectTypeOf<SessionCommandResult<typeof SessionCommands.transcript>>().toEqualTypeOf<string>();
    expectTypeOf<SessionCommandResult<typeof SessionCommands.preview>>().toEqualTypeOf<string>();
    // prepare takes exactly one of its three forms; preview only text or textDocument.
    type Prepare = SessionCommandArgument<typeof SessionCommands.prepare>;
    type Preview = SessionCommandArgument<typeof SessionCommands.preview>;
    expectTypeOf({ text: 'x', references: [{ sessionId: 's' }] }).not.toExtend<Prepare>();
    expectTypeOf({ text: 'x', textDocument: { uri: 'file:///a.md' } }).not.toExtend<Prepare>();
    expectTypeOf({ content: [], references: [] }).not.toExtend<Preview>();
    // @ts-expect-error a transcript takes a sessionId, not a text
    sessionCommandParams(SessionCommands.transcript, { text: 'x' });
  });
});

describe('describeSessionsRootProblem', () => {
  it('says what is wrong with the root, in one display-safe sentence', () => {
    expect(describeSessionsRootProblem('/r', 'not-a-directory')).toBe('The dsh sessions root /r is not a directory, so no sessions can be listed; it is picked up once it is one.');
    expect(describeSessionsRootProblem('/r', 'missing')).toBe('The dsh sessions root /r does not exist yet; sessions appear once it does.');
    expect(describeSessionsRootProblem('/r', 'inaccessible')).toContain('cannot be read');
    expect(describeSessionsRootProblem('/a\u202e\nb', 'missing')).toContain('/a b ');
    expect(SESSIONS_ROOT_PROBLEMS).toEqual(['missing', 'not-a-directory', 'inaccessible']);
  });
});
