/** The CLI process (`dsh-session-ls candidates|prepare …`); main.ts requires it only then. */
import { fstatSync, type Stats } from 'node:fs';
import { runCli } from './cli/cli';
import type { Invocation } from './cli/commandLine';
import { openAgentStore, openStore } from './processStore';
import { cacheWritesSettled } from './store';
import { defaultSessionsRoot, workingDirectory } from './store/defaultRoot';

/** How long an exiting CLI waits for a cache write in progress. */
const CACHE_WRITE_GRACE_MS = 3000;

/** Standard input whole, as bytes: the CLI decodes them itself (refusing what is not UTF-8). */
function readStdin(): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    // `prepare - < folder` reads nothing, silently: say it is a folder instead.
    let standardInput: Stats | undefined;
    try {
      standardInput = fstatSync(0);
    } catch {
      standardInput = undefined;
    }
    if (standardInput?.isDirectory() === true) {
      reject(Object.assign(new Error('EISDIR: illegal operation on a directory, read'), { code: 'EISDIR' }));
      return;
    }
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', reject);
  });
}

/** What main.js hands the CLI. */
export interface CliStartOptions {
  /** Makes the bundle's V8 code cache (codeCache.ts), when it was missing or rejected: called after a successful run. */
  makeCodeCache?: () => void;
}

/** Runs a CLI subcommand, then exits with its code once the output is flushed. */
export function runCliProcess(invocation: Extract<Invocation, { kind: 'candidates' | 'prepare' }>, options: CliStartOptions = {}): void {
  void runCli(invocation, { stdout: process.stdout, stderr: process.stderr, readStdin, env: process.env, cwd: workingDirectory() }, { openStore, openForeignStore: openAgentStore, defaultSessionsRoot }).then(
    (code) => {
      // Exit once the output is flushed, whatever store watchers are still winding down; another
      // agent's cache, written once its first listing read files, is finished first (a few seconds
      // at most); the code cache is made after a successful run.
      const grace = new Promise<void>((resolve) => setTimeout(resolve, CACHE_WRITE_GRACE_MS).unref());
      if (code === 0) options.makeCodeCache?.();
      process.stdout.write('', () => void Promise.race([cacheWritesSettled(), grace]).finally(() => process.exit(code)));
    },
  );
}
