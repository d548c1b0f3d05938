/**
 * Loads a bundle beside main.js (serverProcess.js, cliProcess.js) with V8's code cache, so a start
 * does not parse and compile half a megabyte of JavaScript again: the bytecode V8 made in an
 * earlier run of the same bundle on the same Node is read back instead.
 *
 * The cache is a build artefact of the installed package, like a compiled `.pyc`: one file per
 * bundle, Node version and architecture, named after the bundle's size and mtime (a rebuilt or
 * reinstalled bundle gets a new name), in `code-cache/` beside the bundle or, where the package
 * directory is read-only, in the user's cache directory. It holds no user data. A cache V8 rejects
 * (another V8, other flags) or one that is missing is made again, with every function the run
 * has compiled by then, so the next start compiles none of them: the CLI after a successful run,
 * the server once its first index is built (or when it stops). V8 accepts a cache only under the
 * flags it was made with, and the server changes flags after it loads (as does a worker's start),
 * so the server makes it with its flags set back to their start-up values (`withStartupV8Flags`).
 * Without a `makeLater`, the cache is made as soon as the bundle's top level has run. Nothing here
 * ever stops a start: on any error the bundle loads as a plain `require` would.
 */
import { closeSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Script } from 'node:vm';
import { openRegularFileSync } from './store/regularFile';

/** Turns the cache off (any value but empty or `0`): the bundle is required as usual. */
export const NO_CODE_CACHE_ENV = 'DSH_SESSION_LS_NO_CODE_CACHE';

/** Where the code cache of `bundleFile` may live, in the order they are read; the first is written first. */
export function codeCacheDirectories(bundleFile: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const userBase = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return [path.join(path.dirname(bundleFile), 'code-cache'), path.join(userBase, 'dsh-session-ls', 'code-cache')];
}

/** The cache file's name: bundle, runtime and the bundle's identity on disk. */
export function codeCacheName(bundleFile: string, size: number, mtimeMs: number): string {
  const identity = `${size.toString(36)}-${Math.trunc(mtimeMs).toString(36)}`;
  return `${path.basename(bundleFile, '.js')}-${process.version}-${process.arch}-${identity}.v8`;
}

/** What happened to the cache on one load (for tests). */
export type CodeCacheUse = 'accepted' | 'rejected' | 'missing' | 'off';

/** The loaded module's exports, and how the cache served. */
export interface CodeCacheLoad {
  exports: unknown;
  cache: CodeCacheUse;
}

function readFirst(files: readonly string[]): Buffer | undefined {
  for (const file of files) {
    try {
      // Not a regular file (a FIFO would hold the start forever): as if there were none.
      const fd = openRegularFileSync(file);
      try {
        return readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      // not there (or unreadable): the next place
    }
  }
  return undefined;
}

/** Writes `data` under the first directory that takes it, whole or not at all (temp file, then rename). */
function writeFirst(directories: readonly string[], name: string, data: Buffer): void {
  for (const directory of directories) {
    const target = path.join(directory, name);
    const temp = `${target}.${process.pid}.tmp`;
    try {
      mkdirSync(directory, { recursive: true });
      writeFileSync(temp, data);
      renameSync(temp, target);
      removeOutdated(directory, name);
      return;
    } catch {
      try {
        rmSync(temp, { force: true });
      } catch {
        // the directory itself is unusable: nothing was written there
      }
    }
  }
}

/**
 * Removes the caches of earlier builds of the same bundle on the same Node from `directory` (a
 * rebuilt or reinstalled bundle gets a new name; the old file would never be read again). Other
 * Nodes' caches stay: more than one Node may run the same install.
 */
function removeOutdated(directory: string, name: string): void {
  const prefix = name.slice(0, name.lastIndexOf(`-${process.arch}-`) + process.arch.length + 2);
  try {
    for (const entry of readdirSync(directory)) {
      if (entry !== name && entry.startsWith(prefix) && entry.endsWith('.v8')) rmSync(path.join(directory, entry), { force: true });
    }
  } catch {
    // tidying is best effort
  }
}

/** How {@link requireWithCodeCache} reads and makes the cache. */
export interface CodeCacheOptions {
  env?: NodeJS.ProcessEnv;
  /**
   * Given, a missing or rejected cache is made when this calls the function it is handed (e.g.
   * at exit), not once the bundle's top level has run. Only for a process that sets no V8 flags.
   */
  makeLater?: (make: () => void) => void;
}

/** Off only in the bench's variant build without the code cache (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_CODE_CACHE: boolean | undefined;
const CODE_CACHE_ON = typeof DSH_DEVICE_CODE_CACHE === 'undefined' || DSH_DEVICE_CODE_CACHE;

/** Requires `bundleFile` (a CommonJS bundle) through V8's code cache. */
export function requireWithCodeCache(bundleFile: string, options: CodeCacheOptions = {}): CodeCacheLoad {
  const env = options.env ?? process.env;
  const off = env[NO_CODE_CACHE_ENV];
  if (!CODE_CACHE_ON || (off !== undefined && off !== '' && off !== '0')) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle chosen at run time
    return { exports: require(bundleFile), cache: 'off' };
  }
  let script: Script;
  let cache: CodeCacheUse;
  let name: string;
  const directories = codeCacheDirectories(bundleFile, env);
  try {
    const stats = statSync(bundleFile);
    const source = readFileSync(bundleFile, 'utf8');
    name = codeCacheName(bundleFile, stats.size, stats.mtimeMs);
    const cachedData = readFirst(directories.map((directory) => path.join(directory, name)));
    script = new Script(Module.wrap(source), { filename: bundleFile, cachedData });
    cache = cachedData === undefined ? 'missing' : script.cachedDataRejected === true ? 'rejected' : 'accepted';
  } catch {
    // The cache's own machinery failed before any of the bundle ran: load it as usual.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle chosen at run time
    return { exports: require(bundleFile), cache: 'off' };
  }

  const loaded = new Module(bundleFile, module);
  loaded.filename = bundleFile;
  loaded.paths = (Module as unknown as { _nodeModulePaths(directory: string): string[] })._nodeModulePaths(path.dirname(bundleFile));
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
  wrapper.call(loaded.exports, loaded.exports, createRequire(bundleFile), loaded, bundleFile, path.dirname(bundleFile));
  loaded.loaded = true;

  if (cache !== 'accepted') {
    const make = () => {
      try {
        writeFirst(directories, name, script.createCachedData());
      } catch {
        // a cache is an optimisation: never an error
      }
    };
    if (options.makeLater) options.makeLater(make);
    else make();
  }
  return { exports: loaded.exports, cache };
}

/**
 * The sibling bundle `<name>.js` beside this file, loaded through the code cache; undefined when
 * there is none (the extension's single-file build holds every module in one file, and the
 * unbundled build's modules are required as usual).
 */
export function loadSiblingBundle(name: string, directory: string = __dirname, options: CodeCacheOptions = {}): unknown {
  const file = path.join(directory, `${name}.js`);
  if (path.basename(directory) !== 'bundle' || !existsSync(file)) return undefined;
  return requireWithCodeCache(file, options).exports;
}
