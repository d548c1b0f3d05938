import { describe, expect, it } from 'vitest';
import { DIAGNOSTIC_SOURCE, SESSION_COMMAND_NAMES, SESSION_STATUS_NOTIFICATION, SETTINGS_SECTION, SessionCommands } from '@dsh-session-ls/shared';

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
