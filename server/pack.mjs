// `npm run pack`: the installable server, dsh-session-ls-<version>.tgz at the repository root.
//
// The package is self-contained: the server, the CLI, the index worker and `dsh-session-ls/client`
// are bundles with every library inside, so its package.json has no dependencies and
// `npm install -g --offline ./dsh-session-ls-<version>.tgz` fetches nothing and runs no script.
// server/package.json stays the workspace's (private, with its dependencies); the published shape is
// generated here in a staging directory:
//   bin/dsh-session-ls.js          the committed bin (loads dist/bundle/main.js)
//   dist/bundle/*.js               server/esbuild.mjs's split bundles
//   dist/bundle/zstd.wasm          libzstd's wasm build, the zstd decoder the bundles load
//   dist/client.js                 dsh-session-ls/client (also the package's main)
//   dist/types/client/*.d.ts       its declarations (index.d.ts and the modules it names), and those
//                                  of the contract they name (dist/types/shared/)
//   editors/                       the editor configurations of docs/editors/, as the package README names them
//   README.md                      server/README.md: the user's README (the repository's README is a clone's)
//   package.json LICENSE
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { clientBundle, copyZstdWasm, serverBundles } from './esbuild.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed with exit code ${result.status}`);
  return result.stdout;
}

/** The package.json of the published package, from the workspace's. */
function publishedManifest() {
  const workspace = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8'));
  const client = { types: './dist/types/client/index.d.ts', default: './dist/client.js' };
  return {
    name: workspace.name,
    version: workspace.version,
    description: workspace.description,
    license: workspace.license,
    keywords: ['dsh', 'language-server', 'lsp', 'sessions'],
    engines: workspace.engines,
    bin: workspace.bin,
    // The package's one library is the client: `dsh-session-ls/client`, also the package itself.
    main: './dist/client.js',
    types: './dist/types/client/index.d.ts',
    exports: {
      '.': client,
      './client': client,
      // The bin, for hosts that start the server themselves: require.resolve('dsh-session-ls/bin/dsh-session-ls.js').
      './bin/*': './bin/*',
      './package.json': './package.json',
    },
    // For TypeScript's older `moduleResolution: node`, which does not read `exports`.
    typesVersions: { '*': { client: ['dist/types/client/index.d.ts'] } },
  };
}

/** The editor configurations in docs/editors/ (its README speaks of the repository, so it stays there). */
function editorConfigurations() {
  return readdirSync(path.join(repo, 'docs', 'editors'), { withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.md'))
    .map((entry) => entry.name);
}

/**
 * The client's declarations: index.d.ts and the client modules it names, and they name, in turn. Each
 * may name only these and the contract's: the package's declarations need nothing else installed.
 */
function clientDeclarations(dir) {
  const files = new Set(['index.d.ts']);
  for (const file of files) {
    for (const [, from, imported] of readFileSync(path.join(dir, file), 'utf8').matchAll(/\bfrom '([^']+)'|\bimport\(["']([^"']+)["']\)/g)) {
      const specifier = from ?? imported;
      if (/^\.\/\w+$/.test(specifier)) files.add(`${specifier.slice(2)}.d.ts`);
      // Only `from '@dsh-session-ls/shared'` is rewritten to the shipped contract below.
      else if (specifier !== '@dsh-session-ls/shared' || imported !== undefined) {
        throw new Error(`the client's declarations name ${specifier} (in ${file}): only the client's modules and, in an import, the contract`);
      }
    }
  }
  return [...files];
}

async function pack() {
  // Declarations of the client and of the contract (incremental: nothing to do after `npm run build`).
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  run(process.execPath, [tsc, '-b', path.join(here, 'tsconfig.json')], { stdio: 'inherit' });

  const scratch = mkdtempSync(path.join(os.tmpdir(), 'dsh-session-ls-pack-'));
  try {
    const staging = path.join(scratch, 'package');
    const dist = path.join(staging, 'dist');
    await Promise.all(
      [...serverBundles({ outdir: path.join(dist, 'bundle'), sourcemap: false }), clientBundle({ outfile: path.join(dist, 'client.js') })].map((options) =>
        esbuild.build(options),
      ),
    );
    copyZstdWasm(path.join(dist, 'bundle'));
    cpSync(path.join(here, 'bin'), path.join(staging, 'bin'), { recursive: true });
    copyFileSync(path.join(here, 'README.md'), path.join(staging, 'README.md'));
    mkdirSync(path.join(staging, 'editors'));
    for (const file of editorConfigurations()) copyFileSync(path.join(repo, 'docs', 'editors', file), path.join(staging, 'editors', file));
    copyFileSync(path.join(repo, 'client-vscode', 'LICENSE'), path.join(staging, 'LICENSE'));

    const types = path.join(dist, 'types');
    mkdirSync(path.join(types, 'client'), { recursive: true });
    mkdirSync(path.join(types, 'shared'), { recursive: true });
    for (const file of clientDeclarations(path.join(here, 'dist', 'client'))) {
      const clientTypes = readFileSync(path.join(here, 'dist', 'client', file), 'utf8');
      writeFileSync(path.join(types, 'client', file), clientTypes.replaceAll("from '@dsh-session-ls/shared'", "from '../shared/index'"));
    }
    for (const file of readdirSync(path.join(repo, 'shared', 'dist')).filter((name) => name.endsWith('.d.ts'))) {
      copyFileSync(path.join(repo, 'shared', 'dist', file), path.join(types, 'shared', file));
    }
    writeFileSync(path.join(staging, 'package.json'), JSON.stringify(publishedManifest(), null, 2) + '\n');

    // npm's own CLI when run by `npm run` (the same npm), else `npm` on PATH.
    const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
    const out = run(npm[0], [...npm[1], 'pack', staging, '--pack-destination', repo, '--json', '--ignore-scripts'], { cwd: scratch });
    const [{ filename, files }] = JSON.parse(out);
    console.log(`${path.join(repo, filename)} (${files.length} files)`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

try {
  await pack();
} catch (error) {
  console.error(`pack: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
