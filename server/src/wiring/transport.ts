/**
 * The server's transport, chosen from the command line as vscode-languageserver would (`--stdio`,
 * `--node-ipc`, `--socket=PORT`, `--pipe=NAME`), but built here so that every message passes the
 * lifecycle gate (`lifecycle.ts`) before the library sees it, and so that the end of the input is the
 * server's to handle (the library's own handler exits at once, with no cleanup).
 */
import {
  IPCMessageReader,
  IPCMessageWriter,
  StreamMessageReader,
  createServerPipeTransport,
  createServerSocketTransport,
  type MessageReader,
  type MessageWriter,
} from 'vscode-languageserver/node';
import { CheckedFraming } from './framing';
import { SlicedStreamMessageWriter } from './jsonEncoder';

export interface ServerTransport {
  reader: MessageReader;
  writer: MessageWriter;
  /** True when stdout carries the protocol (nothing else may be written there). */
  stdio: boolean;
  /** Calls `listener` once when the client's side is gone (input closed, IPC channel disconnected). */
  onClosed(listener: () => void): void;
}

function flagValue(args: readonly string[], index: number, name: string): string | undefined {
  const arg = args[index]!;
  if (arg === name) return args[index + 1];
  return arg.startsWith(`${name}=`) ? arg.slice(name.length + 1) : undefined;
}

/**
 * The transport named in `args` (`process.argv.slice(2)`), or undefined when none is. `log` hears why
 * the input ended early (stdio framing that breaks, see framing.ts).
 */
export function openServerTransport(args: readonly string[], log: (message: string) => void = () => undefined): ServerTransport | undefined {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    let reader: MessageReader;
    let writer: MessageWriter;
    let stdio = false;
    if (arg === '--stdio') {
      // A header that breaks the framing ends the input here; the library's reader would go on
      // eating every later message as a broken header, and the server would answer nothing.
      const input = new CheckedFraming((reason) => {
        log(reason);
        process.stdin.unpipe(input);
        input.destroy();
      });
      process.stdin.pipe(input);
      reader = new StreamMessageReader(input);
      // Long answers (every session) go out a slice at a time, never as one string or Buffer.
      writer = new SlicedStreamMessageWriter(process.stdout);
      stdio = true;
    } else if (arg === '--node-ipc') {
      reader = new IPCMessageReader(process);
      writer = new IPCMessageWriter(process);
    } else if (arg === '--socket' || arg.startsWith('--socket=')) {
      const port = Number.parseInt(flagValue(args, index, '--socket') ?? '', 10);
      if (!Number.isInteger(port)) continue;
      [reader, writer] = createServerSocketTransport(port);
    } else if (arg === '--pipe' || arg.startsWith('--pipe=')) {
      const name = flagValue(args, index, '--pipe');
      if (!name) continue;
      [reader, writer] = createServerPipeTransport(name);
    } else {
      continue;
    }
    const ipc = arg === '--node-ipc';
    return {
      reader,
      writer,
      stdio,
      onClosed(listener) {
        let called = false;
        const once = (): void => {
          if (called) return;
          called = true;
          listener();
        };
        reader.onClose(once);
        // A forked server's parent that goes away disconnects the channel; 'close' never comes for `process`.
        if (ipc) process.once('disconnect', once);
        if (stdio) process.stdin.once('end', once);
      },
    };
  }
  return undefined;
}
