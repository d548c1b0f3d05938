import { describe, expect, it } from 'vitest';
import { findProgram } from '../support/conformance';
import { EDITOR_TEST_TIMEOUT_MS, runEditorScenario } from './support/editorRun';
import { expectMentionAcceptedAndPrepared } from './support/expectations';

const nvim = findProgram('nvim');

describe('Neovim 0.7 built-in LSP client with docs/editors/nvim-0.7.lua', () => {
  it('types @, completes through the omnifunc (<C-x><C-o>), accepts one mention, and prepares it with workspace/executeCommand', async (ctx) => {
    if (!nvim.found) ctx.skip(nvim.reason);
    const run = await runEditorScenario({
      program: 'nvim',
      args: ['--headless', '--clean', '-u', '{driver}'],
      driver: 'nvim-0.7.lua',
      config: 'nvim-0.7.lua',
    });
    expectMentionAcceptedAndPrepared(run);
    expect(run.result?.omnifunc).toBe('v:lua.vim.lsp.omnifunc');
    expect(run.result?.filetype).toBe('markdown');
  }, EDITOR_TEST_TIMEOUT_MS);
});
