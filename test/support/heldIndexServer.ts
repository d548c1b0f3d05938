/**
 * The language server with its first index held open: the server's own start (serverProcess.ts)
 * with a store opener that wraps every store in the held-index double (test/support/heldIndex.ts).
 * Run as `node heldIndexServer.js --hold-first-index=FILE --stdio …` once built by
 * `buildHeldIndexServer` (test/support/heldIndexServerBuild.ts); every other argument is the server's.
 */
import { parseInvocation } from '../../server/src/cli/commandLine';
import { logToStderr, openStore } from '../../server/src/processStore';
import { startServer } from '../../server/src/serverProcess';
import { HOLD_ARGUMENT, holdFirstIndex } from './heldIndex';

const holdArgument = process.argv.findIndex((arg) => arg.startsWith(HOLD_ARGUMENT));
if (holdArgument < 0) throw new Error(`heldIndexServer: give ${HOLD_ARGUMENT}FILE`);
const holdFile = process.argv[holdArgument]!.slice(HOLD_ARGUMENT.length);
process.argv.splice(holdArgument, 1);
const args = process.argv.slice(2);
const invocation = parseInvocation(args);
if (invocation.kind !== 'server') throw new Error(`heldIndexServer runs the language server only, not ${invocation.kind}`);
startServer(invocation, args, { openStore: (root) => holdFirstIndex(openStore(root), holdFile, logToStderr) });
