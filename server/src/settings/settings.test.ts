import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SettingsState, absoluteSessionsRoot, describeSettingProblem, type SettingsSources } from './settings';

const DEFAULT_ROOT = '/default/sessions';

function sources(extra: Partial<SettingsSources> = {}): SettingsSources {
  return { env: {}, defaultSessionsRoot: () => DEFAULT_ROOT, ...extra };
}

describe('SettingsState precedence', () => {
  it('uses the defaults when nothing is set', () => {
    const state = new SettingsState();
    expect(state.update(sources())).toEqual([]);
    expect(state.settings).toEqual({
      sessionsRoot: DEFAULT_ROOT,
      config: { maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 },
      agents: ['dsh'],
      claudeCodeHome: path.join(os.homedir(), '.claude'),
      codexHome: path.join(os.homedir(), '.codex'),
      qwenCodeHome: path.join(os.homedir(), '.qwen'),
      geminiHome: path.join(os.homedir(), '.gemini'),
      opencodeHome: path.join(os.homedir(), '.local', 'share', 'opencode'),
      fileMentions: 'after',
      redactSecrets: false,
    });
  });

  it('takes redactSecrets from the section, initializationOptions or the command line; only a boolean', () => {
    const state = new SettingsState();
    state.update(sources({ commandLine: { redactSecrets: true } }));
    expect(state.settings.redactSecrets).toBe(true);
    state.update(sources({ section: { redactSecrets: false }, initializationOptions: { redactSecrets: true } }));
    expect(state.settings.redactSecrets).toBe(false);
    const problems = state.update(sources({ section: { redactSecrets: 'yes' } }));
    expect(problems.map((problem) => [problem.origin, problem.error.code, problem.error.message])).toEqual([
      ['dshSessions.redactSecrets', 'SESSION_REFERENCE_INVALID_CONFIG', 'redactSecrets must be true or false, not "yes"'],
    ]);
    expect(state.settings.redactSecrets).toBe(false);
  });

  it('takes fileMentions from the section first, then initializationOptions; a bad value is INVALID_CONFIG naming the three', () => {
    const state = new SettingsState();
    state.update(sources({ section: { fileMentions: 'off' }, initializationOptions: { fileMentions: 'before' } }));
    expect(state.settings.fileMentions).toBe('off');
    state.update(sources({ initializationOptions: { fileMentions: 'before' } }));
    expect(state.settings.fileMentions).toBe('before');
    const problems = state.update(sources({ section: { fileMentions: 'first' } }));
    expect(problems.map((problem) => [problem.origin, problem.error.code, problem.error.message])).toEqual([
      ['dshSessions.fileMentions', 'SESSION_REFERENCE_INVALID_CONFIG', 'fileMentions must be "after", "before" or "off", not "first"'],
    ]);
    expect(describeSettingProblem(problems[0]!)).toBe(
      'SESSION_REFERENCE_INVALID_CONFIG: invalid setting dshSessions.fileMentions: fileMentions must be "after", "before" or "off", not "first"; keeping "before"',
    );
    expect(state.settings.fileMentions).toBe('before');
    expect(state.update(sources({ section: { fileMentions: true } })).map((problem) => problem.error.message)).toEqual([
      'fileMentions must be "after", "before" or "off", not true',
    ]);
    // Unset (null, or "" as editors show an unset string) is the default.
    state.update(sources({ section: { fileMentions: '' } }));
    expect(state.settings.fileMentions).toBe('after');
  });

  it("takes opencode's home from XDG_DATA_HOME, which names the parent of its data folder", () => {
    const state = new SettingsState();
    state.update({ ...sources(), env: { XDG_DATA_HOME: '/data', CODEX_HOME: '/cx' } });
    expect(state.settings).toMatchObject({ opencodeHome: '/data/opencode', codexHome: '/cx' });
  });

  it('takes agents and the agent homes from initializationOptions first, env defaults for the homes', () => {
    const state = new SettingsState();
    state.update({ ...sources({ initializationOptions: { agents: ['codex', 'dsh', 'codex'] }, section: { agents: ['claude-code'], codexHome: 'rel' } }), env: { CLAUDE_CONFIG_DIR: '/cc', CODEX_HOME: '/cx', GEMINI_CLI_HOME: '/gh' }, baseDir: '/ws' });
    // GEMINI_CLI_HOME moves the user's home folder for Gemini CLI: its home is the .gemini folder in it.
    expect(state.settings).toMatchObject({ agents: ['codex', 'dsh'], claudeCodeHome: '/cc', codexHome: '/ws/rel', geminiHome: '/gh/.gemini' });
    const problems = state.update({ ...sources({ section: { agents: ['dsh', 'aider'] } }), env: {} });
    expect(problems.map((p) => p.error.message)).toEqual(['agents must be a non-empty array of "dsh", "claude-code", "codex", "qwen-code", "gemini" and "opencode"']);
    expect(state.settings.agents).toEqual(['codex', 'dsh']);
    state.update({ ...sources({ section: { agents: [] } }), env: {} });
    expect(state.settings.agents).toEqual(['codex', 'dsh']);
  });

  it('takes qwen-code and its home: the setting, then --qwen-code-home, then $QWEN_HOME, then ~/.qwen', () => {
    const state = new SettingsState();
    state.update({ ...sources({ section: { agents: ['dsh', 'qwen-code'], qwenCodeHome: '/from/section' }, commandLine: { qwenCodeHome: '/from/flag' } }), env: { QWEN_HOME: '/from/env' } });
    expect(state.settings).toMatchObject({ agents: ['dsh', 'qwen-code'], qwenCodeHome: '/from/section' });
    state.update({ ...sources({ commandLine: { qwenCodeHome: '/from/flag', agents: 'dsh,qwen-code' } }), env: { QWEN_HOME: '/from/env' } });
    expect(state.settings).toMatchObject({ agents: ['dsh', 'qwen-code'], qwenCodeHome: '/from/flag' });
    state.update({ ...sources(), env: { QWEN_HOME: '/from/env' } });
    expect(state.settings.qwenCodeHome).toBe('/from/env');
    state.update({ ...sources(), env: {} });
    expect(state.settings.qwenCodeHome).toBe(path.join(os.homedir(), '.qwen'));
  });

  it('reads --agents as a comma-separated list', () => {
    const state = new SettingsState();
    state.update({ ...sources(), commandLine: { agents: 'dsh, claude-code,codex' } });
    expect(state.settings.agents).toEqual(['dsh', 'claude-code', 'codex']);
  });

  it('lets the dshSessions section win over initializationOptions, per key', () => {
    const state = new SettingsState();
    state.update(
      sources({
        section: { candidateLimit: 7, targetSessionId: null },
        initializationOptions: { candidateLimit: 9, maxReferenceBytes: 1000, targetSessionId: 'from-init' },
      }),
    );
    expect(state.settings.config).toEqual({ maxReferences: 3, candidateLimit: 7, maxReferenceBytes: 1000 });
    // null means unset: the next source answers.
    expect(state.settings.targetSessionId).toBe('from-init');
  });

  it('takes the root from initializationOptions, then the section, then the command line, then the environment default', () => {
    const state = new SettingsState();
    state.update(sources({ section: { sessionsRoot: '/from/section' }, initializationOptions: { sessionsRoot: '/from/init' }, commandLine: { sessionsRoot: '/from/flag' } }));
    expect(state.settings.sessionsRoot).toBe('/from/init');
    state.update(sources({ section: { sessionsRoot: '/from/section' }, commandLine: { sessionsRoot: '/from/flag' } }));
    expect(state.settings.sessionsRoot).toBe('/from/section');
    state.update(sources({ section: { sessionsRoot: null }, commandLine: { sessionsRoot: '/from/flag' } }));
    expect(state.settings.sessionsRoot).toBe('/from/flag');
    state.update(sources({ env: { DSH_HOME: '/home/x/.dsh' }, defaultSessionsRoot: (env) => `${env.DSH_HOME}/sessions` }));
    expect(state.settings.sessionsRoot).toBe('/home/x/.dsh/sessions');
  });

  it('treats a blank string as unset (editors show unset string settings as "")', () => {
    const state = new SettingsState();
    state.update(sources({ section: { sessionsRoot: '  ', targetSessionId: '' }, initializationOptions: { targetSessionId: 'abc' } }));
    expect(state.settings.sessionsRoot).toBe(DEFAULT_ROOT);
    expect(state.settings.targetSessionId).toBe('abc');
  });

  it('expands ~ and resolves a relative root against the first workspace folder', () => {
    const state = new SettingsState();
    state.update(sources({ section: { sessionsRoot: '~/dsh/sessions' } }));
    expect(state.settings.sessionsRoot).toBe(path.join(os.homedir(), 'dsh/sessions'));
    state.update(sources({ section: { sessionsRoot: 'store' }, baseDir: '/work/project' }));
    expect(state.settings.sessionsRoot).toBe('/work/project/store');
  });
});

describe('SettingsState invalid values', () => {
  it('reports an invalid value with INVALID_CONFIG and keeps the key at its last valid value; the other keys apply', () => {
    const state = new SettingsState();
    state.update(sources({ section: { maxReferences: 2 } }));
    const problems = state.update(sources({ section: { maxReferences: 5, candidateLimit: 10 } }));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.error.code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
    expect(problems[0]!.error.message).toBe('session-reference: maxReferences must not exceed 3');
    expect(problems[0]!.origin).toBe('dshSessions.maxReferences');
    expect(state.settings.config).toEqual({ maxReferences: 2, candidateLimit: 10, maxReferenceBytes: 65536 });
    expect(describeSettingProblem(problems[0]!)).toMatch(/^SESSION_REFERENCE_INVALID_CONFIG: .*dshSessions\.maxReferences.*keeping 2$/);
  });

  it('at the first resolution, an invalid value leaves the key to the lower sources', () => {
    const state = new SettingsState();
    const problems = state.update(sources({ section: { candidateLimit: -1 }, initializationOptions: { candidateLimit: 4 } }));
    expect(problems.map((problem) => problem.error.message)).toEqual(['session-reference: candidateLimit must be a positive safe integer']);
    expect(state.settings.config.candidateLimit).toBe(4);
  });

  it('reports the same invalid value once, and again once it changed', () => {
    const state = new SettingsState();
    expect(state.update(sources({ section: { maxReferenceBytes: 'big' } }))).toHaveLength(1);
    expect(state.update(sources({ section: { maxReferenceBytes: 'big' } }))).toHaveLength(0);
    expect(state.update(sources({ section: { maxReferenceBytes: 0 } }))).toHaveLength(1);
    expect(state.update(sources({ section: { maxReferenceBytes: 100 } }))).toHaveLength(0);
    expect(state.update(sources({ section: { maxReferenceBytes: 0 } }))).toHaveLength(1);
    expect(state.settings.config.maxReferenceBytes).toBe(100);
  });

  it('rejects a non-string root or target and a section that is not an object', () => {
    const state = new SettingsState();
    const problems = state.update(sources({ section: { sessionsRoot: 42, targetSessionId: {} } }));
    expect(problems.map((problem) => problem.origin)).toEqual(['dshSessions.sessionsRoot', 'dshSessions.targetSessionId']);
    expect(state.settings.sessionsRoot).toBe(DEFAULT_ROOT);
    expect(state.update(sources({ section: 'oops' })).map((problem) => problem.error.message)).toEqual(['dshSessions must be an object']);
  });
});

describe('root paths', () => {
  it('makes a root absolute against the given folder', () => {
    expect(absoluteSessionsRoot('s', '/base')).toBe('/base/s');
    expect(absoluteSessionsRoot('/abs', '/base')).toBe('/abs');
  });
});
