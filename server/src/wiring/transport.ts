/**
 * The server's transport, chosen from the command line as vscode-languageserver would (`--stdio`,
 * `--node-ipc`, `--socket=PORT`, `--pipe=NAME`), but built here so that every message passes the
 * lifecycle gate (`lifecycle.ts`) before the library sees it, and so that the end of the input is the
 * server's to handle (the library's own handler exits at once, with no cleanup).
 */
import { createConnection, type Socket } from 'node:net';
import { IPCMessageReader, IPCMessageWriter, StreamMessageReader, type MessageReader, type MessageWriter } from 'vscode-languageserver/node';
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

/**
 * `source` through the framing check (framing.ts): a header that breaks the framing is logged and
 * ends the input here, where the library's reader would go on eating every later message as a
 * broken header and the server would answer nothing; a body too long to read is logged and dropped
 * as it streams in, a short message standing in its place.
 */
function checkedInput(source: NodeJS.ReadableStream, log: (message: string) => void): CheckedFraming {
  const input = new CheckedFraming(
    (reason) => {
      log(reason);
      source.unpipe(input);
      input.destroy();
    },
    { log },
  );
  source.pipe(input);
  // A source that closes without ending (a socket reset by its peer) ends the input all the same,
  // so that the server stops as when its client goes away, instead of idling out with nothing done.
  source.once('close', () => {
    if (!input.writableEnded && !input.destroyed) input.end();
  });
  return input;
}

/** A reader and writer over a socket (`--socket`, `--pipe`), connected as the library's own transports connect. */
function socketTransport(socket: Socket, log: (message: string) => void): [MessageReader, MessageWriter] {
  return [new StreamMessageReader(checkedInput(socket, log)), new SlicedStreamMessageWriter(socket)];
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
export function openServerTransport(args: readonly string[], log: (message: string) => void): ServerTransport | undefined {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    let reader: MessageReader;
    let writer: MessageWriter;
    let stdio = false;
    if (arg === '--stdio') {
      reader = new StreamMessageReader(checkedInput(process.stdin, log));
      // Long answers (every session) go out a slice at a time, never as one string or Buffer.
      writer = new SlicedStreamMessageWriter(process.stdout);
      stdio = true;
    } else if (arg === '--node-ipc') {
      reader = new IPCMessageReader(process);
      writer = new IPCMessageWriter(process);
    } else if (arg === '--socket' || arg.startsWith('--socket=')) {
      const port = Number.parseInt(flagValue(args, index, '--socket') ?? '', 10);
      if (!Number.isInteger(port)) continue;
      [reader, writer] = socketTransport(createConnection(port, '127.0.0.1'), log);
    } else if (arg === '--pipe' || arg.startsWith('--pipe=')) {
      const name = flagValue(args, index, '--pipe');
      if (!name) continue;
      [reader, writer] = socketTransport(createConnection(name), log);
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
