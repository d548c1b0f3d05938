import { describe, expect, it } from 'vitest';
import { findProgram } from '../support/conformance';
import { EDITOR_TEST_TIMEOUT_MS, runEditorScenario } from './support/editorRun';
import { expectMentionAcceptedAndPrepared } from './support/expectations';

const emacs = findProgram('emacs');

describe('Emacs eglot with docs/editors/eglot.el', () => {
  it("types @, completes through completion-at-point (eglot's capf; a Corfu-like stand-in picks the first candidate and calls eglot's exit function, which applies the textEdit), accepts one mention, and prepares it with workspace/executeCommand", async (ctx) => {
    if (!emacs.found) ctx.skip(emacs.reason);
    const run = await runEditorScenario({
      program: 'emacs',
      args: ['--batch', '-l', '{driver}'],
      driver: 'eglot.el',
      config: 'eglot.el',
    });
    expectMentionAcceptedAndPrepared(run);
    expect(run.result?.majorMode).toBe('markdown-mode');
  }, EDITOR_TEST_TIMEOUT_MS);
});
