/**
 * Takes `--clientProcessId=PID` (or `--clientProcessId PID`, which VS Code's language client adds) off
 * `process.argv` BEFORE vscode-languageserver is loaded: the library starts its own parent watchdog from
 * that argument as its module loads, and that watchdog takes EPERM from `process.kill(pid, 0)` for a dead
 * parent. The server watches the parent itself (`parentWatchdog.ts`).
 *
 * Import this module first in the process entry (main.ts): imports run in order.
 */
const NAME = '--clientProcessId';

function take(argv: string[]): number | undefined {
  let pid: number | undefined;
  for (let index = 2; index < argv.length; index++) {
    const arg = argv[index]!;
    let value: string | undefined;
    let count = 0;
    if (arg === NAME) {
      value = argv[index + 1];
      count = value === undefined ? 1 : 2;
    } else if (arg.startsWith(`${NAME}=`)) {
      value = arg.slice(NAME.length + 1);
      count = 1;
    }
    if (count === 0) continue;
    argv.splice(index, count);
    index--;
    const parsed = value === undefined ? NaN : Number(value);
    if (Number.isSafeInteger(parsed) && parsed > 0) pid = parsed;
  }
  return pid;
}

/** The client's process id from the command line, if one was given. */
export const CLIENT_PROCESS_ID: number | undefined = take(process.argv);
