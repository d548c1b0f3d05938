import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findProgram } from '../support/conformance';
import { EDITOR_TEST_TIMEOUT_MS, findEditorPackage, runEditorScenario } from './support/editorRun';
import { expectMentionAcceptedAndPrepared } from './support/expectations';

const vim = findProgram('vim');
// `script` (util-linux) gives Vim the terminal it needs to run without one.
const script = vim.found ? findProgram('script', ['--version']) : vim;
const ale = script.found
  ? findEditorPackage('Vim ALE (Debian vim-ale)', () => {
      execFileSync('vim', ['-N', '-u', 'NONE', '-i', 'NONE', '-n', '-es', '-c', 'packadd ale', '-c', 'if !exists(":ALEInfo") | cquit | endif', '-c', 'qa!'],
        { stdio: 'ignore', timeout: 30_000 });
      return true;
    })
  : script;

describe('Vim + ALE with docs/editors/ale.vim', () => {
  it("types @, completes through Vim's omnifunc (the config's DshSessionComplete over ALE's connection, since ALE's own omnifunc cuts an item at its first '('), accepts one mention, and prepares it with workspace/executeCommand", async (ctx) => {
    if (!ale.found) ctx.skip(ale.reason);
    const run = await runEditorScenario({
      program: 'script',
      args: ['-qec', 'vim -N -u {driver} -i NONE -n', '/dev/null'],
      driver: 'ale.vim',
      config: 'ale.vim',
    });
    expectMentionAcceptedAndPrepared(run);
    expect(run.result?.filetype).toBe('markdown');
    expect(run.result?.omnifunc).toBe('DshSessionComplete');
  }, EDITOR_TEST_TIMEOUT_MS);
});
