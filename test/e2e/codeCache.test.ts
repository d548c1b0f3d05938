// V8's code cache beside the split bundles (server/src/codeCache.ts), seen from outside: a copy of
// the built bundle directory, run as the bin runs it. Whether V8 accepted a cache shows in whether
// the process wrote it again (it writes only a missing or rejected one, by rename: a new inode).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DshSessionClient } from '../../server/src/client';
import { REPO_ROOT } from '../support/lspClient';
import { EXAMPLE_STORE, removeTemporary, temporaryDirectory } from './helpers';

const scratch = temporaryDirectory('code-cache');
afterAll(() => removeTemporary(scratch));

/** A copy of the built bundles (no code cache yet) in `<scratch>/<name>/bundle`. */
function bundleCopy(name: string): string {
  const bundle = path.join(scratch, name, 'bundle');
  const built = path.join(REPO_ROOT, 'server', 'dist', 'bundle');
  cpSync(built, bundle, { recursive: true, filter: (source) => source === built || /\.(js|wasm)$/.test(source) });
  return bundle;
}

const env = (bundle: string): NodeJS.ProcessEnv => ({
  ...process.env,
  XDG_CACHE_HOME: path.join(bundle, '..', 'cache'),
  DSH_HOME: path.join(bundle, '..', 'dsh'),
  DSH_SESSION_LS_NO_CODE_CACHE: '',
});

function candidates(bundle: string): string {
  const result = spawnSync(process.execPath, [path.join(bundle, 'main.js'), 'candidates', '--root', EXAMPLE_STORE, '--json'], {
    encoding: 'utf8',
    env: env(bundle),
    timeout: 60_000,
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout;
}

/**
 * The one cache file of `prefix` in the bundle's code-cache directory, with its inode, mtime and
 * bytes (a cache made again is byte for byte the same, and may even get the freed inode back: only
 * its mtime tells that it was written again).
 */
function cacheOf(bundle: string, prefix: string): { name: string; ino: number; mtimeMs: number; bytes: Buffer } {
  const dir = path.join(bundle, 'code-cache');
  const names = readdirSync(dir).filter((name) => name.startsWith(`${prefix}-${process.version}-`));
  expect(names, `one ${prefix} cache in ${dir}`).toHaveLength(1);
  const file = path.join(dir, names[0]!);
  const stats = statSync(file);
  return { name: names[0]!, ino: stats.ino, mtimeMs: stats.mtimeMs, bytes: readFileSync(file) };
}

/** A language server from `bundle` on the example store: the session ids of its complete listing. */
async function serve(bundle: string, extra: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const client = await DshSessionClient.start({ server: path.join(bundle, 'main.js'), env: { ...env(bundle), ...extra }, settings: { sessionsRoot: EXAMPLE_STORE } });
  try {
    return (await client.candidates()).map((row) => row.sessionId);
  } finally {
    await client.shutdown();
  }
}

/** The index caches (not code caches) a run from `bundle` left in its XDG cache directory. */
function indexCaches(bundle: string): string[] {
  return readdirSync(path.join(bundle, '..', 'cache', 'dsh-session-ls')).filter((name) => name.startsWith('session-index-'));
}

describe('the code cache of the split bundles', () => {
  it('is not made by a CLI run that fails', () => {
    const bundle = bundleCopy('cli-failed');
    // A mention of a session the store does not have: the CLI runs, and fails.
    const failed = spawnSync(process.execPath, [path.join(bundle, 'main.js'), 'prepare', '--text', 'dsh-session:Im5vcGUi', '--root', EXAMPLE_STORE, '--json'], {
      encoding: 'utf8',
      env: env(bundle),
      timeout: 60_000,
    });
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('SESSION_REFERENCE_READ_FAILED');
    expect(readdirSync(bundle).includes('code-cache') ? readdirSync(path.join(bundle, 'code-cache')) : []).toEqual([]);
    candidates(bundle);
    expect(cacheOf(bundle, 'cliProcess').bytes.length).toBeGreaterThan(0);
  });

  it('is made by the first CLI run, read (not rewritten) by the next, and replaced when damaged', () => {
    const bundle = bundleCopy('cli');
    const plain = spawnSync(process.execPath, [path.join(REPO_ROOT, 'server', 'bin', 'dsh-session-ls.js'), 'candidates', '--root', EXAMPLE_STORE, '--json'], {
      encoding: 'utf8',
      env: { ...env(bundle), DSH_SESSION_LS_NO_CODE_CACHE: '1', XDG_CACHE_HOME: path.join(scratch, 'plain-cache') },
    }).stdout;
    expect(JSON.parse(plain)).toHaveLength(5);

    expect(candidates(bundle)).toBe(plain);
    const made = cacheOf(bundle, 'cliProcess');
    expect(made.bytes.length).toBeGreaterThan(10_000);

    expect(candidates(bundle)).toBe(plain);
    const read = cacheOf(bundle, 'cliProcess');
    expect(read.ino).toBe(made.ino);
    expect(read.mtimeMs).toBe(made.mtimeMs);
    expect(read.bytes.equals(made.bytes)).toBe(true);

    writeFileSync(path.join(bundle, 'code-cache', made.name), 'damaged: not a code cache');
    expect(candidates(bundle)).toBe(plain);
    const replaced = cacheOf(bundle, 'cliProcess');
    expect(replaced.bytes.length).toBeGreaterThan(10_000);
    expect(candidates(bundle)).toBe(plain);
    expect(cacheOf(bundle, 'cliProcess')).toMatchObject({ ino: replaced.ino, mtimeMs: replaced.mtimeMs });
    expect(readdirSync(path.join(bundle, 'code-cache')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('is no cache, nor is the index cache, when a FIFO stands in its place (a plain open would wait forever)', () => {
    const bundle = bundleCopy('fifo');
    const answer = candidates(bundle);
    const codeCache = path.join(bundle, 'code-cache', cacheOf(bundle, 'cliProcess').name);
    const [indexCache] = indexCaches(bundle);
    for (const file of [codeCache, path.join(bundle, '..', 'cache', 'dsh-session-ls', indexCache!)]) {
      rmSync(file);
      execFileSync('mkfifo', [file]);
    }
    // Within candidates()'s 60 s, with nothing on stderr and the same answer.
    expect(candidates(bundle)).toBe(answer);
    expect(statSync(codeCache).isFile()).toBe(true);
  });

  it('is not made by a language server stopped before its first index, and is made by the next one that indexes', async () => {
    const bundle = bundleCopy('early-stop');
    // The input closes at once: the server stops before any client initializes it.
    const early = spawnSync(process.execPath, [path.join(bundle, 'main.js'), '--stdio', '--sessions-root', EXAMPLE_STORE], {
      input: '',
      encoding: 'utf8',
      env: env(bundle),
      timeout: 60_000,
    });
    expect(early.stderr).toContain('stopping (the input closed)');
    const cacheDir = path.join(bundle, 'code-cache');
    const made = (): string[] => {
      try {
        return readdirSync(cacheDir).filter((name) => name.startsWith(`serverProcess-${process.version}-`));
      } catch {
        return [];
      }
    };
    expect(made()).toEqual([]);
    expect(await serve(bundle)).toHaveLength(5);
    expect(made()).toHaveLength(1);
  });

  it("is read back by the next language server, though the server sets V8 flags and starts workers after it loads", async () => {
    const bundle = bundleCopy('server');
    const first = await serve(bundle);
    expect(first).toHaveLength(5);
    const made = cacheOf(bundle, 'serverProcess');
    expect(await serve(bundle)).toEqual(first);
    const read = cacheOf(bundle, 'serverProcess');
    expect(read.ino).toBe(made.ino);
    expect(read.mtimeMs).toBe(made.mtimeMs);
    expect(read.bytes.equals(made.bytes)).toBe(true);
  });
});
