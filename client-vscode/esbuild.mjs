// Bundle the extension and the language server it starts into dist/, for the .vsix.
// `node esbuild.mjs` builds with source maps; `--production` (vsce's prepublish) minifies without.
import { copyFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes('--production');
const serverEntry = path.resolve(here, '..', 'server', 'src', 'main.ts');
// The index's worker thread: the server looks for it beside itself (dist/summarizeWorker.js).
const workerEntry = path.resolve(here, '..', 'server', 'src', 'store', 'summarize', 'summarizeWorker.ts');

for (const entry of [serverEntry, workerEntry]) {
  if (!existsSync(entry)) {
    console.error(`esbuild: the server entry ${entry} does not exist; the extension cannot ship without its server`);
    process.exit(1);
  }
}

/** @type {esbuild.BuildOptions} */
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  // VS Code 1.82 (the oldest engine we accept) runs extensions on Node 18.
  target: 'node18',
  sourcemap: !production,
  minify: production,
  keepNames: true,
  logLevel: 'warning',
  // Bundle the shared contract from its sources, so no build of shared/ is needed first.
  alias: { '@dsh-session-ls/shared': path.resolve(here, '..', 'shared', 'src', 'index.ts') },
};

// libzstd's wasm build, the server's zstd decoder: the bundled server looks for it beside itself
// (without it, it decodes with the slower pure-JS fzstd).
const zstdWasm = path.join(path.dirname(createRequire(serverEntry).resolve('@bokuweb/zstd-wasm')), 'zstd.wasm');

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: [path.join(here, 'src', 'extension.ts')],
    outfile: path.join(here, 'dist', 'extension.js'),
    external: ['vscode'],
  }),
  esbuild.build({
    ...common,
    entryPoints: [serverEntry],
    outfile: path.join(here, 'dist', 'server.js'),
  }),
  esbuild.build({
    ...common,
    entryPoints: [workerEntry],
    outfile: path.join(here, 'dist', 'summarizeWorker.js'),
  }),
]);
copyFileSync(zstdWasm, path.join(here, 'dist', 'zstd.wasm'));
