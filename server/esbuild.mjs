// Bundle the server, the CLI and the index worker into one file each, so a start reads a few
// files instead of some ninety modules. `npm run build` runs `node server/esbuild.mjs` after tsc.
//
// dist/bundle/ (what the committed bin loads):
//   main.js             the entry (src/main.ts): arguments, --help, --version; requires one of
//   serverProcess.js    the language server (src/serverProcess.ts) or
//   cliProcess.js       the CLI (src/cliProcess.ts), and the server's index uses
//   summarizeWorker.js  the index worker thread, which the pool looks for beside its own file.
// client-vscode/esbuild.mjs builds the extension's dist/server.js (the whole entry in one file:
// the extension only ever starts the server) and dist/summarizeWorker.js with `serverBundles`.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const source = (...parts) => path.join(here, 'src', ...parts);

/**
 * The speed devices: each is a way of doing something faster than the plain path beside it, owned
 * by one module, which reads its constant. Every build has them on; the bench's A/B
 * (`npm run bench -- --ab`, bench/src/ab/) builds one variant per device with it off
 * (`node server/esbuild.mjs --device-off NAME --outdir DIR`) and keeps only those that gain.
 * Unbundled (tsc's output, the tests) a device's constant is undefined, which means on.
 */
export const SPEED_DEVICES = {
  lineSkim: 'DSH_DEVICE_LINE_SKIM', // store/log/lineSkim.ts: dsh's line rules in WebAssembly
  zstdWasm: 'DSH_DEVICE_ZSTD_WASM', // store/log/zstdDecoder.ts: libzstd in WebAssembly
  codeCache: 'DSH_DEVICE_CODE_CACHE', // codeCache.ts: V8's code cache of each bundle
  runtimeV8Flags: 'DSH_DEVICE_RUNTIME_V8_FLAGS', // store/runtimeV8Flags.ts: V8 flags set at run time
  quickSync: 'DSH_DEVICE_QUICK_SYNC', // store/quickSync.ts: synchronous calls while they are quick
  streamingJson: 'DSH_DEVICE_STREAMING_JSON', // wiring/jsonEncoder.ts: long answers written a slice at a time
  inlineIndex: 'DSH_DEVICE_INLINE_INDEX', // store/disk/tuning.ts: a small store summarized in the main thread
};

/** esbuild's `define` with every device on but `off`. */
function deviceDefines(off = []) {
  for (const name of off) if (!(name in SPEED_DEVICES)) throw new Error(`esbuild: no speed device ${name} (${Object.keys(SPEED_DEVICES).join(', ')})`);
  return Object.fromEntries(Object.entries(SPEED_DEVICES).map(([name, constant]) => [constant, off.includes(name) ? 'false' : 'true']));
}

/** The modules main.ts requires at run time: in the split build each is its own bundle beside main.js. */
const PROCESS_MODULES = ['serverProcess', 'cliProcess'];

function common({ target, sourcemap, devicesOff = [] }) {
  return {
    define: deviceDefines(devicesOff),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target,
    sourcemap,
    // Syntax and white space only: names stay readable in logged stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    // The shared contract from its sources, so no build of shared/ is needed first.
    alias: { '@dsh-session-ls/shared': path.resolve(here, '..', 'shared', 'src', 'index.ts') },
  };
}

/** Leaves main.ts's `require('./serverProcess')` and `require('./cliProcess')` to the sibling bundles. */
const siblingProcessModules = {
  name: 'sibling-process-modules',
  setup(build) {
    const filter = new RegExp(`^\\./(${PROCESS_MODULES.join('|')})$`);
    build.onResolve({ filter }, (args) => (args.importer === source('main.ts') ? { path: `${args.path}.js`, external: true } : undefined));
  },
};

/**
 * The CLI answers no JSON-RPC, yet features/errors.ts (reached through the commands) imports
 * `ResponseError` from the language server library: in the CLI's bundle that import takes the
 * class from vscode-jsonrpc's own small messages module instead of the whole library (~420 KB
 * less to compile at every CLI start; a missing export would fail this build, not a run).
 */
const cliWithoutProtocolLibrary = {
  name: 'cli-without-protocol-library',
  setup(build) {
    const messages = path.join(path.dirname(createRequire(import.meta.url).resolve('vscode-jsonrpc')), 'messages.js');
    build.onResolve({ filter: /^vscode-languageserver\/node$/ }, () => ({ path: messages }));
  },
};

/**
 * Our modules import the CommonJS language server library from ESM sources: esbuild gives each
 * importing module its own copy of the library's ~320 exports (`__toESM`), eleven copies at every
 * start. Routed through one ESM module that re-exports it, the library is copied once and every
 * importer binds to that module.
 */
const LANGUAGE_SERVER = 'vscode-languageserver/node';
const oneLanguageServerCopy = {
  name: 'one-language-server-copy',
  setup(build) {
    build.onResolve({ filter: /^vscode-languageserver\/node$/ }, (args) =>
      args.namespace === 'one-language-server-copy' ? undefined : { path: LANGUAGE_SERVER, namespace: 'one-language-server-copy' },
    );
    build.onLoad({ filter: /.*/, namespace: 'one-language-server-copy' }, () => ({ contents: `export * from '${LANGUAGE_SERVER}';`, resolveDir: here }));
  },
};

/**
 * The language server library's `files.js` requires `child_process` at load, for helpers that look
 * up npm's and yarn's global folders, which this server never calls. Loading the module (with
 * `net` and `dgram` behind it) cost ~6 ms of each start. Here the library gets a stand-in that
 * requires `child_process` on first use.
 */
const lazyChildProcessForLibrary = {
  name: 'lazy-child-process-for-library',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]vscode-languageserver[\\/]lib[\\/]node[\\/]files\.js$/.test(args.importer) ? { path: 'child_process', namespace: 'lazy-child-process' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: `let loaded;\nmodule.exports = new Proxy({}, { get: (_target, key) => (loaded ??= require('node:child_process'))[key] });\n`,
      loader: 'js',
    }));
  },
};

/**
 * esbuild options for the server's bundles in `outdir`.
 * split: main.js + serverProcess.js + cliProcess.js (the bin: `--version` and the CLI load only what they run);
 * otherwise one `serverFile` holding the whole entry (the extension).
 * Both ways with summarizeWorker.js, the name pool.ts looks for beside the server's own file. `devicesOff`: speed devices built without (the bench's A/B).
 */
export function serverBundles({ outdir, split = true, serverFile = 'main.js', target = 'node20', sourcemap = true, devicesOff = [] }) {
  const workers = { summarizeWorker: source('store', 'summarize', 'summarizeWorker.ts') };
  const entries = [source('main.ts'), ...Object.values(workers), ...PROCESS_MODULES.map((name) => source(`${name}.ts`))];
  for (const entry of entries) {
    if (!existsSync(entry)) throw new Error(`esbuild: the server entry ${entry} does not exist`);
  }
  const options = common({ target, sourcemap, devicesOff });
  const workerBundles = Object.entries(workers).map(([name, entry]) => ({ ...options, entryPoints: [entry], outfile: path.join(outdir, `${name}.js`) }));
  if (!split) return [{ ...options, entryPoints: [source('main.ts')], outfile: path.join(outdir, serverFile), plugins: [oneLanguageServerCopy, lazyChildProcessForLibrary] }, ...workerBundles];
  return [
    { ...options, entryPoints: [source('main.ts')], outfile: path.join(outdir, 'main.js'), plugins: [siblingProcessModules] },
    { ...options, entryPoints: [source('serverProcess.ts')], outfile: path.join(outdir, 'serverProcess.js'), plugins: [oneLanguageServerCopy, lazyChildProcessForLibrary] },
    { ...options, entryPoints: [source('cliProcess.ts')], outfile: path.join(outdir, 'cliProcess.js'), plugins: [cliWithoutProtocolLibrary] },
    ...workerBundles,
  ];
}

/**
 * Copies libzstd's wasm build (the zstd decoder, @bokuweb/zstd-wasm) into `outdir`: the bundled
 * server looks for `zstd.wasm` beside itself (without it, it decodes with the slower fzstd).
 */
export function copyZstdWasm(outdir) {
  const wasm = path.join(path.dirname(createRequire(import.meta.url).resolve('@bokuweb/zstd-wasm')), 'zstd.wasm');
  mkdirSync(outdir, { recursive: true });
  copyFileSync(wasm, path.join(outdir, 'zstd.wasm'));
}

/**
 * esbuild options for `dsh-session-ls/client` (src/client/index.ts, vscode-jsonrpc inside) in one CommonJS
 * file, not minified: Node prints the source line where an uncaught error was thrown, and a script's
 * failed start must show one short line of it, not a minified bundle's whole line.
 */
export function clientBundle({ outfile, target = 'node20', sourcemap = false }) {
  const entry = source('client', 'index.ts');
  if (!existsSync(entry)) throw new Error(`esbuild: the client entry ${entry} does not exist`);
  return { ...common({ target, sourcemap }), minifyWhitespace: false, minifySyntax: false, entryPoints: [entry], outfile };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    // `--device-off NAME --outdir DIR` (the bench's A/B): a variant bundle in DIR (a folder named `bundle`, as codeCache.ts expects).
    const flag = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
    const devicesOff = process.argv.flatMap((arg, i) => (process.argv[i - 1] === '--device-off' ? [arg] : []));
    const outdir = flag('--outdir') ?? path.join(here, 'dist', 'bundle');
    await Promise.all(serverBundles({ outdir, devicesOff }).map((options) => esbuild.build(options)));
    copyZstdWasm(outdir);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
