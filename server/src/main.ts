import { surviveBrokenPipes } from './brokenPipes';
import { HELP_TEXT, UsageError, parseInvocation, type Invocation } from './cli/commandLine';
import { loadSiblingBundle } from './codeCache';
import { SERVER_VERSION } from './version';

// The server and the CLI are required by the invocation that needs them: `--version` and
// `--help` load neither, the CLI never loads the protocol libraries. In the bundled build
// (server/esbuild.mjs) each is its own file beside this one, loaded through V8's code cache
// (codeCache.ts); elsewhere (the extension's single file, the unbundled build) by require.
type ServerProcess = typeof import('./serverProcess');
type CliProcess = typeof import('./cliProcess');

/**
 * The sibling bundle `name` through the code cache (undefined exports where there is none), and the
 * options that hand its process the cache's maker when the cache is to be made: each process calls
 * it once it has run what later starts run.
 */
function loadProcessBundle(name: 'serverProcess' | 'cliProcess'): { exports: unknown; options: { makeCodeCache?: () => void } } {
  let makeCodeCache: (() => void) | undefined;
  const exports = loadSiblingBundle(name, __dirname, { makeLater: (make) => (makeCodeCache = make) });
  return { exports, options: makeCodeCache ? { makeCodeCache } : {} };
}

/** The process entry of `dsh-session-ls`: the language server, the CLI, or help/version. */
export function main(args: readonly string[] = process.argv.slice(2)): void {
  surviveBrokenPipes();
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
    case 'server': {
      // The server changes V8 flags after it loads: it makes its code cache itself, under the
      // start-up flags, once its first index is built (or when it stops after it).
      const server = loadProcessBundle('serverProcess');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when needed (see above)
      ((server.exports ?? require('./serverProcess')) as ServerProcess).startServer(invocation, args, server.options);
      return;
    }
    default: {
      // The CLI sets no V8 flags: its code cache is made before it exits, with all the run compiled.
      // Made after a successful run only: a run that failed early compiled little of what the next
      // one runs, and a cache is kept for as long as the bundle is unchanged.
      const cli = loadProcessBundle('cliProcess');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when needed (see above)
      ((cli.exports ?? require('./cliProcess')) as CliProcess).runCliProcess(invocation, cli.options);
    }
  }
}

if (require.main === module) main();
