/**
 * The server as a user installs it: `npm run pack` writes dsh-session-ls-<version>.tgz at the repository
 * root, and `npm install -g --offline --prefix <scratch>/prefix <tgz>` installs it into a scratch prefix
 * outside the repository (no repository around it, nothing fetched), as one installs a tool; and
 * `npm install --offline <tgz>` into a scratch project, as one installs a library. Done once per test
 * run, by whichever test asks first (a lock directory in the run's scratch; the others wait for it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { REPO_ROOT } from './conformance';

/** The installed package. */
export interface InstalledServer {
  /** The tarball `npm run pack` wrote. */
  tarball: string;
  /** The npm prefix it was installed into. */
  prefix: string;
  /** `<prefix>/bin`, where `dsh-session-ls` is. */
  binDir: string;
  /** The installed package directory (`<prefix>/lib/node_modules/dsh-session-ls`). */
  packageDir: string;
  /** A user's project (a package.json, nothing else) where `npm install <tgz>` installed it locally. */
  projectDir: string;
}

/** How long a waiting test gives the one that packs and installs. */
const INSTALL_DEADLINE_MS = 300_000;

/** The version the tarball is named after (the server package's). */
export function serverVersion(): string {
  return (JSON.parse(readFileSync(path.join(REPO_ROOT, 'server', 'package.json'), 'utf8')) as { version: string }).version;
}

/** This process's environment without npm's run-script variables (a test may run under `npm test`). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (/^npm_/i.test(key)) delete env[key];
  return env;
}

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout: INSTALL_DEADLINE_MS });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${result.error?.message ?? `exit ${result.status}`}\n${result.stdout}\n${result.stderr}`);
  }
}

function packAndInstall(scratch: string): InstalledServer {
  run('npm', ['run', 'pack'], REPO_ROOT);
  const tarball = path.join(REPO_ROOT, `dsh-session-ls-${serverVersion()}.tgz`);
  if (!existsSync(tarball)) throw new Error(`npm run pack did not write ${tarball}`);
  const prefix = path.join(scratch, 'prefix');
  // From directories outside the repository, with a private npm cache: nothing of the clone is used.
  const cache = path.join(scratch, 'npm-cache');
  const work = path.join(scratch, 'work');
  mkdirSync(work, { recursive: true });
  run('npm', ['install', '-g', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, '--cache', cache, tarball], work);
  const projectDir = path.join(scratch, 'project');
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(path.join(projectDir, 'package.json'), JSON.stringify({ name: 'a-user-project', version: '1.0.0', private: true }, null, 2) + '\n');
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--cache', cache, tarball], projectDir);
  const installed: InstalledServer = {
    tarball,
    prefix,
    binDir: path.join(prefix, 'bin'),
    packageDir: path.join(prefix, 'lib', 'node_modules', 'dsh-session-ls'),
    projectDir,
  };
  if (!existsSync(path.join(installed.binDir, 'dsh-session-ls'))) throw new Error(`the install put no dsh-session-ls in ${installed.binDir}`);
  if (!existsSync(path.join(projectDir, 'node_modules', 'dsh-session-ls', 'package.json'))) throw new Error(`the local install put no dsh-session-ls in ${projectDir}`);
  return installed;
}

let memo: Promise<InstalledServer> | undefined;

/** The package packed and installed for this run (once per run, whichever test asks first). */
export function installedServer(): Promise<InstalledServer> {
  memo ??= install();
  return memo;
}

async function install(): Promise<InstalledServer> {
  let scratch: string | undefined;
  try {
    scratch = inject('dshInstallScratch');
  } catch {
    scratch = undefined;
  }
  scratch ??= mkdtempSync(path.join(os.tmpdir(), 'dsh-session-ls-install-'));
  const done = path.join(scratch, 'installed.json');
  const failed = path.join(scratch, 'failed.txt');
  try {
    mkdirSync(path.join(scratch, 'lock'));
  } catch {
    // Another test file is installing it: wait for its answer.
    const deadline = Date.now() + INSTALL_DEADLINE_MS;
    while (Date.now() < deadline) {
      if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as InstalledServer;
      if (existsSync(failed)) throw new Error(readFileSync(failed, 'utf8'));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`timed out waiting for another test to pack and install dsh-session-ls in ${scratch}`);
  }
  try {
    const installed = packAndInstall(scratch);
    writeFileSync(done + '.tmp', JSON.stringify(installed));
    // Renamed into place so a waiting test never reads half a file.
    renameSync(done + '.tmp', done);
    return installed;
  } catch (error) {
    writeFileSync(failed, error instanceof Error ? error.message : String(error));
    throw error;
  }
}

/**
 * An environment in which `dsh-session-ls` is the installed one and no other: its bin directory first on
 * PATH, then this Node's (the bin's `#!/usr/bin/env node`), then the rest of PATH without any directory
 * holding another `dsh-session-ls` (under `npx vitest`/`npm test` the clone's node_modules/.bin is on
 * PATH); no NODE_PATH, and no override of the editor configs' default command.
 */
export function installedServerEnv(installed: InstalledServer, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = noServerOnPathEnv(base);
  env.PATH = [installed.binDir, path.dirname(process.execPath), env.PATH].filter((dir) => dir !== '').join(path.delimiter);
  return env;
}

/**
 * An environment in which no `dsh-session-ls` is on PATH (every directory holding one is left out), no
 * NODE_PATH and no override of the editor configs' default command: what a locally installed library
 * finds, it finds in its own package.
 */
export function noServerOnPathEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const rest = (base.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '' && !existsSync(path.join(dir, 'dsh-session-ls')));
  const env: NodeJS.ProcessEnv = { ...base, PATH: rest.join(path.delimiter) };
  delete env.DSH_SESSION_LS_CMD;
  delete env.NODE_PATH;
  return env;
}
