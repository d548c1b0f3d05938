import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeEmptyStores, looksLikeAgentHome, looksLikeDshRoot, searchedStore, shellWord, type StoreLocations } from './storeHints';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'dsh-session-ls-hints-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function file(...parts: string[]): string {
  const full = path.join(scratch, ...parts);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, '{}\n');
  return full;
}

function folder(...parts: string[]): string {
  const full = path.join(scratch, ...parts);
  mkdirSync(full, { recursive: true });
  return full;
}

// A user's home folder holding each agent's home where the agent keeps it.
file('user', '.claude', 'projects', '-home-u-proj', '0b6f3c1e-5a7d-4c2e-9f11-3d8e2a4b6c01.jsonl');
file('user', '.codex', 'sessions', '2026', '01', '02', 'rollout-2026-01-02T10-00-00-01a23b79-3e7d-7300-91e8-4b425fbbb44a.jsonl');
file('user', '.dsh', 'sessions', '--home-u-proj--', '0b6f3c1e-5a7d-4c2e-9f11-3d8e2a4b6c01', 'session.jsonl.zstd');
file('user', '.qwen', 'projects', '-home-u-proj', 'chats', '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01.jsonl');
file('index-only', 'session_index.jsonl');
const USER = path.join(scratch, 'user');

describe('what a folder looks like', () => {
  it("tells each agent's home and a dsh root by where their session files are", () => {
    expect(looksLikeAgentHome('claude-code', path.join(USER, '.claude'))).toBe(true);
    expect(looksLikeAgentHome('codex', path.join(USER, '.codex'))).toBe(true);
    expect(looksLikeAgentHome('codex', path.join(scratch, 'index-only'))).toBe(true);
    expect(looksLikeDshRoot(path.join(USER, '.dsh', 'sessions'))).toBe(true);
    expect(looksLikeAgentHome('claude-code', path.join(USER, '.codex'))).toBe(false);
    expect(looksLikeAgentHome('codex', path.join(USER, '.claude'))).toBe(false);
    expect(looksLikeAgentHome('claude-code', USER)).toBe(false);
    expect(looksLikeDshRoot(path.join(USER, '.dsh'))).toBe(false);
    expect(looksLikeDshRoot(path.join(USER, '.codex'))).toBe(false);
    expect(looksLikeAgentHome('claude-code', path.join(scratch, 'nowhere'))).toBe(false);
    // Claude Code and Qwen Code both keep `projects/`: one level apart, they are told apart.
    expect(looksLikeAgentHome('qwen-code', path.join(USER, '.qwen'))).toBe(true);
    expect(looksLikeAgentHome('claude-code', path.join(USER, '.qwen'))).toBe(false);
    expect(looksLikeAgentHome('qwen-code', path.join(USER, '.claude'))).toBe(false);
  });
});

describe('describeEmptyStores', () => {
  const locations = (overrides: Partial<StoreLocations>): StoreLocations => ({
    agents: ['dsh'],
    sessionsRoot: folder('empty-root'),
    claudeCodeHome: path.join(USER, '.claude'),
    codexHome: path.join(USER, '.codex'),
    qwenCodeHome: path.join(USER, '.qwen'),
    geminiHome: path.join(USER, '.gemini'),
    opencodeHome: path.join(USER, '.local', 'share', 'opencode'),
    ...overrides,
  });
  const none = new Map();

  it("says a dsh root is another agent's home, with the --agents flags that read it", () => {
    const claude = path.join(USER, '.claude');
    expect(describeEmptyStores(locations({ sessionsRoot: claude }), none)).toEqual([
      {
        agent: 'dsh',
        folder: claude,
        note: "it looks like Claude Code's home",
        hint: `${claude} looks like Claude Code's home, not a dsh sessions root: to read its sessions, pass --agents claude-code --claude-code-home ${claude} (or --agents dsh,claude-code to read them beside dsh's)`,
      },
    ]);
    const codex = path.join(USER, '.codex');
    expect(describeEmptyStores(locations({ sessionsRoot: codex }), none)[0]!.hint).toBe(
      `${codex} looks like Codex's home, not a dsh sessions root: to read its sessions, pass --agents codex --codex-home ${codex} (or --agents dsh,codex to read them beside dsh's)`,
    );
  });

  it('says a dsh root one level too high is a dsh home, naming its sessions folder', () => {
    const home = path.join(USER, '.dsh');
    expect(describeEmptyStores(locations({ sessionsRoot: home }), none)[0]!.hint).toBe(
      `${home} looks like a dsh home: did you mean --root ${path.join(home, 'sessions')}?`,
    );
  });

  it("names the right home for another agent's home one level too high or too low, never the dsh root", () => {
    const root = path.join(scratch, 'some-dsh-root');
    for (const wrong of [USER, path.join(USER, '.claude', 'projects')]) {
      const [empty, ...others] = describeEmptyStores(locations({ agents: ['claude-code'], sessionsRoot: root, claudeCodeHome: wrong }), none);
      expect(others).toEqual([]);
      expect(empty!.hint).toBe(`${wrong} is not Claude Code's home but ${path.join(USER, '.claude')} is: did you mean --claude-code-home ${path.join(USER, '.claude')}?`);
      expect(JSON.stringify(empty)).not.toContain(root);
    }
    const [codex] = describeEmptyStores(locations({ agents: ['codex'], codexHome: USER }), none);
    expect(codex).toMatchObject({ note: 'it has no sessions folder', hint: expect.stringContaining(`did you mean --codex-home ${path.join(USER, '.codex')}?`) });
    expect(describeEmptyStores(locations({ agents: ['claude-code'], claudeCodeHome: path.join(scratch, 'nowhere') }), none)).toEqual([
      { agent: 'claude-code', folder: path.join(scratch, 'nowhere'), note: 'it does not exist' },
    ]);
  });

  it('says nothing of a store that listed sessions, nor of an empty folder that looks like nothing', () => {
    const counts = new Map([['dsh', 3]] as const);
    expect(describeEmptyStores(locations({ sessionsRoot: path.join(USER, '.claude') }), counts)).toEqual([]);
    expect(describeEmptyStores(locations({}), none)).toEqual([{ agent: 'dsh', folder: path.join(scratch, 'empty-root') }]);
  });
});

describe('searchedStore', () => {
  const locations: StoreLocations = { agents: ['dsh', 'codex'], sessionsRoot: '/r', claudeCodeHome: '/c', codexHome: '/x', qwenCodeHome: '/q', geminiHome: '/g', opencodeHome: '/o' };

  it("names the folder an agent's session is looked for in, or the --agents value that turns the agent on", () => {
    expect(searchedStore('dsh', locations)).toBe('searched the dsh sessions root /r');
    expect(searchedStore('codex', locations)).toBe('searched the Codex home /x');
    expect(searchedStore('claude-code', locations)).toBe('claude-code is not among --agents dsh,codex: add it, as in --agents dsh,codex,claude-code');
  });
});

describe('shellWord', () => {
  it('quotes a path a shell would split or expand', () => {
    expect(shellWord('/home/u/.claude')).toBe('/home/u/.claude');
    expect(shellWord('/srv/work space/it\'s')).toBe(`'/srv/work space/it'\\''s'`);
    expect(shellWord('$HOME')).toBe(`'$HOME'`);
  });
});
