import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findProgram } from '../support/conformance';
import { EDITOR_TEST_TIMEOUT_MS, findEditorPackage, runEditorScenario } from './support/editorRun';
import { expectMentionAcceptedAndPrepared } from './support/expectations';

const emacs = findProgram('emacs');
const lspMode = emacs.found
  ? findEditorPackage('Emacs lsp-mode (Debian elpa-lsp-mode)', () => {
      execFileSync('emacs', ['--batch', '--eval', "(progn (package-activate-all) (require 'lsp-mode))"], { stdio: 'ignore', timeout: 30_000 });
      return true;
    })
  : emacs;

describe('Emacs lsp-mode with docs/editors/lsp-mode.el', () => {
  it("types @, completes through completion-at-point (lsp-mode's capf; a Corfu-like stand-in picks the first candidate and calls lsp-mode's exit function, which applies the textEdit), accepts one mention, and prepares it with workspace/executeCommand", async (ctx) => {
    if (!lspMode.found) ctx.skip(lspMode.reason);
    const run = await runEditorScenario({
      program: 'emacs',
      args: ['--batch', '-l', '{driver}'],
      driver: 'lsp-mode.el',
      config: 'lsp-mode.el',
    });
    expectMentionAcceptedAndPrepared(run);
    expect(run.result?.majorMode).toBe('markdown-mode');
  }, EDITOR_TEST_TIMEOUT_MS);
});
