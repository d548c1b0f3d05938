// Starts modelServer.mjs on 127.0.0.1 for a fixture generator and waits until it has written the port
// it listens on. Returns the child process (the caller kills it when done) and the port.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** `portFile` is written by the server once it listens; `requestLog` gets every request, one JSON line each. */
export async function startModelServer(portFile, requestLog) {
  rmSync(portFile, { force: true });
  const server = spawn(process.execPath, [path.join(here, 'modelServer.mjs'), portFile, requestLog], { stdio: 'ignore' });
  while (!existsSync(portFile)) await new Promise((resolve) => setTimeout(resolve, 50));
  return { server, port: readFileSync(portFile, 'utf8') };
}
