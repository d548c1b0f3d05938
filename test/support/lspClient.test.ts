import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LspTestClient } from './lspClient';

/** The JSON-RPC messages framed in one chunk of bytes. */
function framedMessages(chunk: Buffer): unknown[] {
  const messages: unknown[] = [];
  let rest = chunk.toString('utf8');
  while (rest.length > 0) {
    const match = /^Content-Length: (\d+)\r\n\r\n/.exec(rest);
    if (!match) throw new Error(`not a frame: ${JSON.stringify(rest.slice(0, 40))}`);
    const body = Buffer.from(rest.slice(match[0].length), 'utf8');
    const length = Number(match[1]);
    messages.push(JSON.parse(body.subarray(0, length).toString('utf8')));
    rest = body.subarray(length).toString('utf8');
  }
  return messages;
}

const clients: LspTestClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.dispose();
});

describe('the headless client', () => {
  it('writes a request and its $/cancelRequest in one chunk, so the server reads them together', async () => {
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const client = LspTestClient.overStreams(fromServer, toServer);
    clients.push(client);
    const chunks: Buffer[] = [];
    toServer.on('data', (chunk: Buffer) => chunks.push(chunk));

    const answer = client.requestCancelledAtOnce('textDocument/completion', { position: { line: 0, character: 1 } });
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(chunks).toHaveLength(1);
    const [request, cancel] = framedMessages(chunks[0]!) as Array<{ id?: number; method: string; params: { id?: number } }>;
    expect(request).toMatchObject({ method: 'textDocument/completion', params: { position: { line: 0, character: 1 } } });
    expect(cancel).toEqual({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: request!.id } });

    // The answer still reaches the caller through the connection.
    fromServer.write(framed({ jsonrpc: '2.0', id: request!.id, error: { code: -32800, message: 'cancelled' } }));
    await expect(answer).rejects.toMatchObject({ code: -32800 });
  });

  it('writes every other message on its own, in the order sent', async () => {
    const toServer = new PassThrough();
    const client = LspTestClient.overStreams(new PassThrough(), toServer);
    clients.push(client);
    const chunks: Buffer[] = [];
    toServer.on('data', (chunk: Buffer) => chunks.push(chunk));
    await client.openDocument('file:///a.md', 'one');
    await client.changeDocument('file:///a.md', 'two');
    expect(chunks.map((chunk) => framedMessages(chunk).map((message) => (message as { method: string }).method))).toEqual([
      ['textDocument/didOpen'],
      ['textDocument/didChange'],
    ]);
  });
});

function framed(message: unknown): string {
  const body = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
