// The extension in a real VS Code: the built .vsix installed into code-server (VS Code 1.139.1), its
// workbench driven in headless Chromium as a user drives it. Every step leaves a screenshot; on
// failure they are kept and their paths printed.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { displaySafeLabel, formatSessionReferenceMention, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { chromium, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/conformance';
import { CHROMIUM_LAUNCH, findCodeServer, startCodeServer, type CodeServer } from './support/codeServer';

const harness = findCodeServer();
const STEP_TIMEOUT_MS = 60_000;

/** What `dsh-session-ls candidates --json` answers for the store from the workspace folder (the server's own order). */
function cliCandidates(store: string, cwd: string): SessionReferenceMentionCandidate[] {
  const bin = path.join(REPO_ROOT, 'server', 'bin', 'dsh-session-ls.js');
  const out = execFileSync(process.execPath, [bin, 'candidates', '--root', store, '--cwd', cwd, '--limit', '50', '--json'], { encoding: 'utf8' });
  return JSON.parse(out) as SessionReferenceMentionCandidate[];
}

/** Builds the .vsix exactly as `npm run package` does. */
function packageExtension(out: string): string {
  const vsix = path.join(out, 'dsh-session-ls.vsix');
  execFileSync('npm', ['run', 'package', '--', '--out', vsix], {
    cwd: path.join(REPO_ROOT, 'client-vscode'),
    stdio: 'pipe',
    env: { ...process.env, npm_config_offline: 'true' },
  });
  return vsix;
}

/** Texts of the elements matching `selector`, in page order (the editor renders spaces as U+00A0). */
function texts(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(selector, (elements) => elements.map((element) => (element.textContent ?? '').replace(/\u00a0/g, ' ')));
}

/** Waits until an element matching `selector` shows `text` (the editor renders spaces as U+00A0). */
async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    ([where, wanted]) => [...document.querySelectorAll(where)].some((element) => element.textContent?.replace(/\u00a0/g, ' ').includes(wanted)),
    [selector, text] as const,
    { timeout: STEP_TIMEOUT_MS },
  );
}

/** Presses Enter in the open quick pick until it closes (an Enter during a list refresh is dropped). */
async function acceptUntilClosed(page: Page): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    await page.keyboard.press('Enter');
    const closed = await page
      .waitForSelector('.quick-input-widget', { state: 'hidden', timeout: 3_000 })
      .then(() => true, () => false);
    if (closed) return;
    if (Date.now() > deadline) throw new Error('the quick pick did not close on Enter');
  }
}

/** Runs a command from the command palette by its title. */
async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: STEP_TIMEOUT_MS });
  await page.keyboard.type(title);
  await page.waitForSelector(`.quick-input-widget .monaco-list-row[aria-label*="${title}"]`, { timeout: STEP_TIMEOUT_MS });
  await page.keyboard.press('Enter');
}

interface SuggestState {
  /** `data-index` of the focused suggestion, -1 when none is focused or the widget is closed. */
  focused: number;
  /** Whether the details pane beside the list is on screen. */
  detailsShown: boolean;
  docs: string;
}

function suggestState(page: Page): Promise<SuggestState> {
  return page.evaluate(() => {
    const row = document.querySelector('.editor-instance .suggest-widget.visible .monaco-list-row.focused');
    const pane = document.querySelector('.suggest-details');
    const box = pane?.getBoundingClientRect();
    return {
      focused: row ? Number(row.getAttribute('data-index')) : -1,
      detailsShown: box !== undefined && box.width > 0 && box.height > 0,
      docs: document.querySelector('.suggest-details .docs')?.textContent ?? '',
    };
  });
}

/**
 * Moves the suggest focus to `index` and shows its details pane with the resolved preview of `label`.
 * Acts on what the page shows rather than on a fixed key sequence: on a loaded machine the widget can
 * re-render between presses (a resolve landing, the pane toggling), so each press waits for its effect.
 */
async function showSuggestionDetails(page: Page, index: number, label: string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const state = await suggestState(page);
    if (state.focused === index && state.docs.includes(label)) return;
    if (Date.now() > deadline) throw new Error(`suggestion ${index} never showed the details of ${JSON.stringify(label)}; last seen ${JSON.stringify(state)}`);
    let key: string | undefined;
    if (state.focused >= 0 && state.focused < index) key = 'ArrowDown';
    else if (state.focused > index) key = 'ArrowUp';
    else if (state.focused === index && !state.detailsShown) key = 'Control+Space';
    if (key !== undefined) await page.keyboard.press(key);
    // Wait for the page to change (or a resolve to arrive) before deciding again.
    await page
      .waitForFunction(
        ([before]) => {
          const row = document.querySelector('.editor-instance .suggest-widget.visible .monaco-list-row.focused');
          const docs = document.querySelector('.suggest-details .docs')?.textContent ?? '';
          return (row ? Number(row.getAttribute('data-index')) : -1) !== before.focused || docs !== before.docs;
        },
        [state] as const,
        { timeout: 3_000 },
      )
      .catch(() => undefined);
  }
}

describe('the .vsix in a real VS Code (code-server 4.139.1, VS Code 1.139.1, Chromium)', () => {
  it('completes @ in the server order, writes the mention, hovers, reports Problems, inserts by picker, previews and counts', async (ctx) => {
    if (!harness.found) ctx.skip(harness.reason);
    const home = mkdtempSync(path.join(os.tmpdir(), 'dsh-vscode-'));
    const shotsDir = mkdtempSync(path.join(os.tmpdir(), 'dsh-vscode-shots-'));
    const shots: string[] = [];
    const store = path.join(home, 'store');
    cpSync(path.join(REPO_ROOT, 'examples', 'store'), store, { recursive: true });
    const folder = path.join(home, 'workspace');
    const promptFile = path.join(folder, 'prompt.md');
    mkdirSync(folder, { recursive: true });
    writeFileSync(promptFile, '\n');
    const expected = cliCandidates(store, folder);
    expect(expected.length).toBeGreaterThan(1);

    let server: CodeServer | undefined;
    const browser = await chromium.launch(CHROMIUM_LAUNCH);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const shot = async (name: string): Promise<void> => {
      const file = path.join(shotsDir, `${String(shots.length + 1).padStart(2, '0')}-${name}.png`);
      await page.screenshot({ path: file });
      shots.push(file);
    };
    let passed = false;
    try {
      server = await startCodeServer({
        home,
        vsix: packageExtension(home),
        folder,
        // The client's trace lands in the kept profile's logs when a step fails.
        settings: { 'dshSessions.trace.server': 'verbose' },
        // Where a remote window (code-server's are) reads the machine-overridable root; see the README's settings table.
        machineSettings: { 'dshSessions.sessionsRoot': store },
      });
      await page.goto(server.url);
      await page.waitForSelector('.monaco-workbench', { timeout: STEP_TIMEOUT_MS });
      await page.click('.explorer-folders-view .monaco-list-row[aria-label^="prompt.md"]', { timeout: STEP_TIMEOUT_MS });
      await page.waitForSelector('.editor-instance .monaco-editor .view-lines', { timeout: STEP_TIMEOUT_MS });

      // The status bar counts the store's sessions once the server has indexed it.
      await waitForText(page, '.statusbar-item', `dsh: ${expected.length} sessions`);
      await shot('opened');

      // `@` opens the suggest widget with the server's sessions in the server's order.
      await page.click('.editor-instance .monaco-editor .view-lines');
      await page.keyboard.press('Control+Home');
      await page.keyboard.type('see @');
      await page.waitForSelector('.editor-instance .suggest-widget.visible .monaco-list-row', { timeout: STEP_TIMEOUT_MS });
      await page.waitForFunction((n) => document.querySelectorAll('.editor-instance .suggest-widget.visible .monaco-list-row').length >= n, Math.min(expected.length, 8));
      await shot('suggest');
      const labels = await texts(page, '.editor-instance .suggest-widget.visible .monaco-list-row .label-name');
      expect(labels).toEqual(expected.slice(0, labels.length).map((candidate) => displaySafeLabel(candidate.label, candidate.sessionId)));
      // Each item's detail (the cwd) and resolved preview, in the details pane as the selection walks down.
      const details: string[] = [];
      for (let i = 0; i < labels.length; i++) {
        await showSuggestionDetails(page, i, labels[i]);
        details.push((await texts(page, '.suggest-details .header .type'))[0] ?? '');
      }
      await shot('details');
      expect(details).toEqual(expected.slice(0, labels.length).map((candidate) => candidate.cwd ?? '(no cwd)'));
      await showSuggestionDetails(page, 0, labels[0]);

      // Accepting writes exactly the mention, and saving puts it on disk.
      const [first, second] = expected;
      const firstMention = formatSessionReferenceMention({ sessionId: first.sessionId, label: displaySafeLabel(first.label, first.sessionId) });
      await page.keyboard.press('Enter');
      await page.keyboard.press('Control+S');
      await expect.poll(() => readFileSync(promptFile, 'utf8'), { timeout: STEP_TIMEOUT_MS }).toBe(`see ${firstMention}\n`);
      await shot('accepted');

      // Hovering the mention shows its session's preview.
      await page.keyboard.press('Home');
      for (let i = 0; i < 'see @['.length; i++) await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      await waitForText(page, '.monaco-hover', first.label);
      await shot('hover');
      await page.keyboard.press('Escape');

      // *Insert session reference…* picks the second session and inserts its mention on a new line.
      await page.keyboard.press('Control+End');
      await runCommand(page, 'dsh: Insert session reference');
      await page.waitForSelector(`.quick-input-widget .monaco-list-row[aria-label*="${second.label}"]`, { timeout: STEP_TIMEOUT_MS });
      await shot('picker');
      await page.keyboard.type(second.label);
      await page.waitForFunction(
        (label) => document.querySelector('.quick-input-widget .monaco-list-row.focused')?.getAttribute('aria-label')?.includes(label) === true,
        second.label,
        { timeout: STEP_TIMEOUT_MS },
      );
      // The picker asks the server again as the query changes; on a loaded machine an Enter can land
      // while the list is being replaced and be dropped, so accept until the picker closes.
      await acceptUntilClosed(page);
      await page.keyboard.press('Control+S');
      const secondMention = formatSessionReferenceMention({ sessionId: second.sessionId, label: displaySafeLabel(second.label, second.sessionId) });
      await expect.poll(() => readFileSync(promptFile, 'utf8'), { timeout: STEP_TIMEOUT_MS }).toBe(`see ${firstMention}\n${secondMention}`);
      await shot('inserted');

      // *Preview what the model will see* opens the prepared message for this file.
      await runCommand(page, 'dsh: Preview what the model will see');
      await waitForText(page, '.editor-instance .view-lines', 'What the model will see');
      await shot('preview');
      const previewText = (await texts(page, '.editor-instance .view-lines')).join('\n');
      expect(previewText).toContain('Referenced sessions');
      expect(previewText).toContain(first.label);
      await page.keyboard.press('Control+W');

      // A broken mention (an empty payload, which dsh refuses) appears in the Problems panel with its code.
      await page.click('.editor-instance .monaco-editor .view-lines');
      await page.keyboard.press('Control+End');
      await page.keyboard.press('Enter');
      await page.keyboard.type('and @[gone](dsh-session:) ');
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+Shift+M');
      await waitForText(page, '.markers-panel .monaco-list-row', 'SESSION_REFERENCE_INVALID_REFERENCE');
      await shot('problems');
      passed = true;
    } finally {
      if (!passed) {
        await shot('failure').catch(() => undefined);
        console.error(`vscode.test screenshots kept:\n${shots.join('\n')}\nprofile and logs kept in ${home}\ncode-server said:\n${server?.output() ?? '(not started)'}`);
      }
      await browser.close();
      await server?.stop();
      if (passed) {
        rmSync(home, { recursive: true, force: true });
        rmSync(shotsDir, { recursive: true, force: true });
      }
    }
  }, 300_000);
});
