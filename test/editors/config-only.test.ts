import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTS } from '@dsh-session-ls/shared';
import { SettingsState, parseAgents } from '../../server/src/settings/settings';
import { findProgram } from '../support/conformance';
import { DOCUMENTED_COMMAND, EDITOR_DOCS_DIR, EDITOR_TEST_TIMEOUT_MS, describeRun, runEditorScenario } from './support/editorRun';

const nvim = findProgram('nvim');

describe('configuration-only snippets in docs/editors/', () => {
  it('nvim-0.11.lua (configuration only: Neovim >= 0.11 is not installable on Debian 12) declares and enables the server for Markdown, and its cmd and init_options start the real server with `@` as trigger', async (ctx) => {
    if (!nvim.found) ctx.skip(nvim.reason);
    const run = await runEditorScenario({
      program: 'nvim',
      args: ['--headless', '--clean', '-u', '{driver}'],
      driver: 'nvim-0.11-config.lua',
      config: 'nvim-0.11.lua',
    });
    const result = run.result;
    expect(result?.error, describeRun(run)).toBeUndefined();
    expect(result?.enabled).toEqual(['dsh_session_ls']);
    const declared = (result?.declared as Record<string, Record<string, unknown>>)?.dsh_session_ls;
    expect(declared?.cmd).toEqual(DOCUMENTED_COMMAND);
    expect(declared?.filetypes).toEqual(expect.arrayContaining(['markdown', 'text']));
    expect(declared?.init_options).toEqual({ sessionsRoot: run.storeRoot });
    expect(declared?.hasOnAttach).toBe(true);
    expect(result?.filetypesAdded).toEqual([{ extension: { prompt: 'markdown' } }]);
    expect(result?.userCommand).toBe(true);
    expect(result?.triggerCharacters).toContain('@');
  }, EDITOR_TEST_TIMEOUT_MS);

  it('zed-settings.json (configuration only: Zed is not packaged for Debian 12) is JSON with line comments (as Zed reads it) that runs the documented command and lists the server for Markdown; its commented settings, uncommented, are valid', () => {
    const text = readFileSync(path.join(EDITOR_DOCS_DIR, 'zed-settings.json'), 'utf8');
    const settings = JSON.parse(withoutLineComments(text));
    const server = settings.lsp['dsh-session-ls'];
    expect([server.binary.path, ...server.binary.arguments]).toEqual(DOCUMENTED_COMMAND);
    expect(Object.keys(server.initialization_options)).toEqual(['sessionsRoot']);
    expect(settings.languages.Markdown.language_servers).toContain('dsh-session-ls');
    // Uncommenting the example settings gives JSON the server takes without a problem.
    const uncommented = JSON.parse(withoutLineComments(text.replace(/^(\s*)\/\/ (".*)$/gm, '$1$2'))).lsp['dsh-session-ls'].initialization_options;
    expect(Object.keys(uncommented).sort()).toEqual(['agents', 'fileMentions', 'sessionsRoot']);
    expect(settingProblems(uncommented)).toEqual([]);
  });

  it('helix-languages.toml (configuration only: Helix is not packaged for Debian 12) runs the documented command and adds the server to Markdown', () => {
    const toml = readFileSync(path.join(EDITOR_DOCS_DIR, 'helix-languages.toml'), 'utf8');
    // A line-level read of the few keys that matter; the file is flat TOML with one-line values.
    const table = toml.split(/^\[+([^\]]+)\]+\s*$/m);
    const section = (name: string): string => table[table.indexOf(name) + 1] ?? '';
    const value = (body: string, key: string): unknown => {
      const line = new RegExp(`^${key}\\s*=\\s*(.+)$`, 'm').exec(body);
      return line ? JSON.parse(line[1].replace(/^\{\s*(\w+)\s*=\s*(".*")\s*\}$/, '{"$1":$2}')) : undefined;
    };
    const server = section('language-server.dsh-session-ls');
    expect([value(server, 'command'), ...(value(server, 'args') as string[])]).toEqual(DOCUMENTED_COMMAND);
    expect(Object.keys(value(server, 'config') as object)).toEqual(['sessionsRoot']);
    const markdown = section('language');
    expect(value(markdown, 'name')).toBe('markdown');
    expect(value(markdown, 'language-servers')).toContain('dsh-session-ls');
  });
});

/** Whole-line `//` comments removed (Zed's settings are JSON with comments). */
function withoutLineComments(text: string): string {
  return text.replace(/^\s*\/\/.*$/gm, '');
}

/** The problems the server reports for `options` as initializationOptions. */
function settingProblems(options: unknown): string[] {
  return new SettingsState()
    .update({ initializationOptions: options, env: {}, defaultSessionsRoot: () => '/sessions' })
    .map((problem) => problem.error.message);
}

describe('every editor snippet in docs/editors/ shows the settings a user changes most', () => {
  const SNIPPETS = ['nvim-0.11.lua', 'nvim-0.7.lua', 'eglot.el', 'lsp-mode.el', 'ale.vim', 'helix-languages.toml', 'zed-settings.json'];

  const QUOTED_WORD = /\\?["']([a-z-]+)\\?["']/;

  /** Where the first line matching `pattern` matches, to the end of that line. */
  function shownAt(text: string, pattern: RegExp): string | undefined {
    const line = text.split('\n').find((candidate) => pattern.test(candidate));
    return line?.slice(pattern.exec(line)!.index);
  }

  /** The quoted words of the first list (`[…]` or `{…}`) after `pattern`. */
  function shownList(text: string, pattern: RegExp): string[] | undefined {
    const list = /[[{]([^\]}]*)[\]}]/.exec(shownAt(text, pattern) ?? '');
    return list === null ? undefined : [...list[1]!.matchAll(new RegExp(QUOTED_WORD, 'g'))].map((match) => match[1]!);
  }

  it.each(SNIPPETS)('%s: how to turn the other agents on, and where `@` lists files, with values the server takes', (file) => {
    const text = readFileSync(path.join(EDITOR_DOCS_DIR, file), 'utf8');
    const agents = shownList(text, /\bagents"?\s*[=:]|[-_]agents\b.*[[{]/);
    expect(agents, 'an agents example').toEqual([...AGENTS]);
    expect(parseAgents(agents)).toEqual(['dsh', 'claude-code', 'codex', 'qwen-code', 'gemini', 'opencode']);
    const fileMentions = QUOTED_WORD.exec(shownAt(text, /fileMentions"?\s*[=:]|file[-_]mentions\b.*["']/) ?? '')?.[1];
    expect(fileMentions, 'a fileMentions example').toBe('before');
    expect(settingProblems({ agents, fileMentions })).toEqual([]);
  });
});
