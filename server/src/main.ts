import { HELP_TEXT, UsageError, parseInvocation, type Invocation } from './cli/commandLine';
import { loadSiblingBundle } from './codeCache';
import { SERVER_VERSION } from './version';

// The server and the CLI are required by the invocation that needs them: `--version` and
// `--help` load neither, the CLI never loads the protocol libraries. In the bundled build
// (server/esbuild.mjs) each is its own file beside this one, loaded through V8's code cache
// (codeCache.ts); elsewhere (the extension's single file, the unbundled build) by require.
type ServerProcess = typeof import('./serverProcess');
type CliProcess = typeof import('./cliProcess');

/** The process entry of `dsh-session-ls`: the language server, the CLI, or help/version. */
export function main(args: readonly string[] = process.argv.slice(2)): void {
  let invocation: Invocation;
  try {
    invocation = parseInvocation(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`USAGE: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
  switch (invocation.kind) {
    case 'help':
      process.stdout.write(HELP_TEXT + '\n');
      return;
    case 'version':
      process.stdout.write(SERVER_VERSION + '\n');
      return;
    case 'server':
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when needed (see above)
      ((loadSiblingBundle('serverProcess') ?? require('./serverProcess')) as ServerProcess).startServer(invocation, args);
      return;
    default: {
      // The CLI sets no V8 flags: its code cache is made at exit, with all the run compiled.
      const cli = loadSiblingBundle('cliProcess', __dirname, { makeLater: (make) => process.once('exit', make) });
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when needed (see above)
      ((cli ?? require('./cliProcess')) as CliProcess).runCliProcess(invocation);
    }
  }
}

if (require.main === module) main();
