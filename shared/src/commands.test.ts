import { describe, expect, it } from 'vitest';
import {
  DIAGNOSTIC_SOURCE,
  SESSIONS_ROOT_PROBLEMS,
  SESSION_COMMAND_NAMES,
  SESSION_STATUS_NOTIFICATION,
  SETTINGS_SECTION,
  SessionCommands,
  describeSessionsRootProblem,
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
    expect([...SESSION_COMMAND_NAMES].sort()).toEqual(Object.values(SessionCommands).sort());
    expect(new Set(SESSION_COMMAND_NAMES).size).toBe(SESSION_COMMAND_NAMES.length);
  });

  it('uses the dshSessions settings section and the dsh-session diagnostic source', () => {
    expect(SETTINGS_SECTION).toBe('dshSessions');
    expect(DIAGNOSTIC_SOURCE).toBe('dsh-session');
  });

  it('names the status notification outside the command namespace', () => {
    expect(SESSION_STATUS_NOTIFICATION).toBe('dshSession/status');
    expect(SESSION_COMMAND_NAMES).not.toContain(SESSION_STATUS_NOTIFICATION);
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
