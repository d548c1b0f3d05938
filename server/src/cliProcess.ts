/** The CLI process (`dsh-session-ls candidates|prepare …`); main.ts requires it only then. */
import { runCli } from './cli/cli';
import type { Invocation } from './cli/commandLine';
import { openStore } from './processStore';
import { defaultSessionsRoot } from './store/defaultRoot';

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/** Runs a CLI subcommand, then exits with its code once the output is flushed. */
export function runCliProcess(invocation: Extract<Invocation, { kind: 'candidates' | 'prepare' }>): void {
  void runCli(invocation, { stdout: process.stdout, stderr: process.stderr, readStdin, env: process.env, cwd: process.cwd() }, { openStore, defaultSessionsRoot }).then(
    (code) => {
      // Exit once the output is flushed, whatever store watchers are still winding down.
      process.stdout.write('', () => process.exit(code));
    },
  );
}
