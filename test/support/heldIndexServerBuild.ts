/**
 * Builds test/support/heldIndexServer.ts as the server's bundles are built (server/esbuild.mjs): one
 * CommonJS file, with the index workers and libzstd's wasm beside it, where the server looks for them.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from './conformance';
import { HOLD_ARGUMENT } from './heldIndex';

/** The command-line argument that holds the first index open while `file` exists. */
export function holdArgument(file: string): string {
  return `${HOLD_ARGUMENT}${file}`;
}

/**
 * Writes `heldIndexServer.js` into `outdir` (with `summarizeWorker.js` and `zstd.wasm` unless
 * `workers` is false, for a directory that has them) and returns its path.
 */
export async function buildHeldIndexServer(outdir: string, options: { workers?: boolean; target?: string } = {}): Promise<string> {
  const server = path.join(REPO_ROOT, 'server', 'src');
  const workers = options.workers ?? true;
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: {
      heldIndexServer: path.join(REPO_ROOT, 'test', 'support', 'heldIndexServer.ts'),
      ...(workers ? { summarizeWorker: path.join(server, 'store', 'summarize', 'summarizeWorker.ts') } : {}),
    },
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: options.target ?? 'node20',
    logLevel: 'warning',
    alias: { '@dsh-session-ls/shared': path.join(REPO_ROOT, 'shared', 'src', 'index.ts') },
  });
  if (workers) copyFileSync(path.join(path.dirname(require.resolve('@bokuweb/zstd-wasm')), 'zstd.wasm'), path.join(outdir, 'zstd.wasm'));
  return path.join(outdir, 'heldIndexServer.js');
}
