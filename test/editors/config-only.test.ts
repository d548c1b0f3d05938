import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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

  it('zed-settings.json (configuration only: Zed is not packaged for Debian 12) is JSON that runs the documented command and lists the server for Markdown', () => {
    const settings = JSON.parse(readFileSync(path.join(EDITOR_DOCS_DIR, 'zed-settings.json'), 'utf8'));
    const server = settings.lsp['dsh-session-ls'];
    expect([server.binary.path, ...server.binary.arguments]).toEqual(DOCUMENTED_COMMAND);
    expect(Object.keys(server.initialization_options)).toEqual(['sessionsRoot']);
    expect(settings.languages.Markdown.language_servers).toContain('dsh-session-ls');
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
