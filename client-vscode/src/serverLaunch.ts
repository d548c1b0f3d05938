import { TransportKind, type ServerOptions } from 'vscode-languageclient/node';

/** Start the bundled server with the editor's own Node over IPC; `--inspect` when debugging the extension. */
export function serverOptions(serverModule: string): ServerOptions {
  return {
    run: { module: serverModule, transport: TransportKind.ipc },
    debug: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6011'] } },
  };
}
