// Bundle the extension and the language server it starts into dist/, for the .vsix.
// `node esbuild.mjs` builds with source maps; `--production` (vsce's prepublish) minifies without.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { copyZstdWasm, serverBundles } from '../server/esbuild.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes('--production');

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

// The server as the bin's build makes it (server/esbuild.mjs), but whole in one dist/server.js (the
// extension only ever starts the server), with its worker beside it: dist/summarizeWorker.js (the
// index).
let server;
try {
  server = serverBundles({ outdir: path.join(here, 'dist'), split: false, serverFile: 'server.js', target: 'node18', sourcemap: !production });
} catch (error) {
  console.error(`${error.message}; the extension cannot ship without its server`);
  process.exit(1);
}

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: [path.join(here, 'src', 'extension.ts')],
    outfile: path.join(here, 'dist', 'extension.js'),
    external: ['vscode'],
  }),
  ...server.map((options) => esbuild.build(production ? { ...options, minify: true, keepNames: true } : options)),
]);
// libzstd's wasm build, the server's zstd decoder, beside the bundled server.
copyZstdWasm(path.join(here, 'dist'));
