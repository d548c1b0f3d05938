import { describe, expect, it } from 'vitest';
import { SETTING_KEYS } from '../settings/settings';
import { DshSessionClient, DshSessionStartError, positionAt, type DshSessionSettings } from './index';

describe('positionAt', () => {
  it('counts lines broken by \\n, \\r\\n and \\r, and characters in UTF-16 code units', () => {
    expect(positionAt('see @')).toEqual({ line: 0, character: 5 });
    expect(positionAt('a\nb\r\nc\rdé😀@')).toEqual({ line: 3, character: 5 });
    expect(positionAt('a\r\nb', 2)).toEqual({ line: 0, character: 1 });
    expect(positionAt('a\r\nb', 3)).toEqual({ line: 1, character: 0 });
    expect(positionAt('ab', 99)).toEqual({ line: 0, character: 2 });
    expect(positionAt('')).toEqual({ line: 0, character: 0 });
  });
});

describe('DshSessionClient.start', () => {
  it('rejects with the reason and the command when the server cannot be started', async () => {
    const start = DshSessionClient.start({ server: 'dsh-session-ls-no-such-program-here' });
    await expect(start).rejects.toThrow(DshSessionStartError);
    await expect(start).rejects.toThrow(/^cannot start dsh-session-ls \(`dsh-session-ls-no-such-program-here --stdio`\): spawn dsh-session-ls-no-such-program-here ENOENT/);
  });
});

describe('DshSessionSettings', () => {
  it('has every setting the server reads, and nothing else', () => {
    // Every key of the type, in a strict literal: a key the type lacks, or one it adds, fails the type check.
    const every: Required<DshSessionSettings> = {
      sessionsRoot: '~/.dsh/sessions',
      targetSessionId: 'a-session',
      maxReferences: 3,
      candidateLimit: 50,
      maxReferenceBytes: 65_536,
      agents: ['dsh', 'claude-code', 'codex', 'qwen-code', 'gemini', 'opencode'],
      claudeCodeHome: '~/.claude',
      codexHome: '~/.codex',
      qwenCodeHome: '~/.qwen',
      geminiHome: '~/.gemini',
      opencodeHome: '~/.local/share/opencode',
      fileMentions: 'after',
      redactSecrets: false,
    };
    const serverKeys: ReadonlyArray<keyof DshSessionSettings> = SETTING_KEYS;
    expect(Object.keys(every).sort()).toEqual([...serverKeys].sort());
  });
});
