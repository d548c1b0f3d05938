// Takes images/completion.png, the README's screenshot: the packaged extension in a real VS Code
// (code-server), `@` typed in a Markdown file, the completion list of sessions with the focused
// one's preview beside it. It reuses the end-to-end test's driver (test/editors/support/codeServer.ts):
// run .ci/install-vscode.sh and install Debian's chromium first, then `node scripts/screenshot.mjs`.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionRoot = path.join(here, '..');
const repo = path.join(extensionRoot, '..');
const out = path.join(extensionRoot, 'images', 'completion.png');
const STEP_TIMEOUT_MS = 60_000;
const TARGET_SESSION = '0b6f3c1e-5a7d-4c2e-9f11-3d8e2a4b6c01';
/** The suggestion whose preview the picture shows. */
const SHOWN = 'Cache OpenWeather responses';

/** The test's driver, bundled to CommonJS (its REPO_ROOT comes from test/support/'s own folder). */
async function loadDriver(scratch) {
  const file = path.join(scratch, 'codeServer.cjs');
  await esbuild.build({
    entryPoints: [path.join(repo, 'test', 'editors', 'support', 'codeServer.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'warning',
    define: { __dirname: JSON.stringify(path.join(repo, 'test', 'support')) },
  });
  return createRequire(import.meta.url)(file);
}

const home = mkdtempSync(path.join(os.tmpdir(), 'dsh-screenshot-'));
let server;
let browser;
try {
  const { CHROMIUM_LAUNCH, findCodeServer, startCodeServer } = await loadDriver(home);
  const harness = findCodeServer();
  if (!harness.found) throw new Error(`cannot take the screenshot: ${harness.reason}`);

  const vsix = path.join(home, 'dsh-session-ls.vsix');
  execFileSync('npm', ['run', 'package', '--', '--out', vsix], { cwd: extensionRoot, stdio: 'inherit', env: { ...process.env, npm_config_offline: 'true' } });

  // The example store, and a workspace named as the project its sessions were about.
  const store = path.join(home, 'store');
  cpSync(path.join(repo, 'examples', 'store'), store, { recursive: true });
  const folder = path.join(home, 'weather-app');
  mkdirSync(folder, { recursive: true });
  const lines = ['# Next step', '', 'Add a "feels like" temperature to the hourly forecast.', 'Keep the response caching we settled on in '];
  writeFileSync(path.join(folder, 'prompt.md'), `${lines.join('\n')}\n`);

  server = await startCodeServer({
    home,
    vsix,
    folder,
    // The message is for the "Hourly forecast endpoint" session: its working directory ranks the candidates.
    settings: { 'editor.minimap.enabled': false, 'dshSessions.targetSessionId': TARGET_SESSION },
    machineSettings: { 'dshSessions.sessionsRoot': store },
  });
  browser = await chromium.launch(CHROMIUM_LAUNCH);
  const page = await browser.newPage({ viewport: { width: 1200, height: 640 } });
  await page.goto(server.url);
  await page.waitForSelector('.monaco-workbench', { timeout: STEP_TIMEOUT_MS });
  await page.click('.explorer-folders-view .monaco-list-row[aria-label^="prompt.md"]', { timeout: STEP_TIMEOUT_MS });
  await page.waitForSelector('.editor-instance .monaco-editor .view-lines', { timeout: STEP_TIMEOUT_MS });
  await page.waitForFunction(() => [...document.querySelectorAll('.statusbar-item')].some((item) => /dsh: \d+ sessions/.test(item.textContent ?? '')), undefined, {
    timeout: STEP_TIMEOUT_MS,
  });

  // `@` at the end of the last line, then the details pane with one session's preview.
  await page.click('.editor-instance .monaco-editor .view-lines');
  await page.keyboard.press('Control+End');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('End');
  await page.keyboard.type('@');
  await page.waitForSelector('.editor-instance .suggest-widget.visible .monaco-list-row.focused', { timeout: STEP_TIMEOUT_MS });
  // Acts on what the page shows (a resolve landing can re-render the widget between presses).
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const state = await page.evaluate((label) => {
      const focused = document.querySelector('.editor-instance .suggest-widget.visible .monaco-list-row.focused .label-name')?.textContent ?? '';
      const pane = document.querySelector('.suggest-details');
      const box = pane?.getBoundingClientRect();
      const shown = box !== undefined && box.width > 0 && box.height > 0;
      return { focused, shown, previewed: shown && (pane?.querySelector('.docs')?.textContent ?? '').includes(label) };
    }, SHOWN);
    if (state.focused === SHOWN && state.previewed) break;
    if (Date.now() > deadline) throw new Error(`the details pane never showed ${SHOWN}: ${JSON.stringify(state)}`);
    if (state.focused !== SHOWN) await page.keyboard.press('ArrowDown');
    else if (!state.shown) await page.keyboard.press('Control+Space');
    await page.waitForTimeout(500);
  }
  // Let the pane finish laying out before the picture.
  await page.waitForTimeout(500);
  await page.screenshot({ path: out });
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await browser?.close();
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
}
