import { describe, expect, it } from 'vitest';
import type { DataCallback, Message, MessageReader, MessageWriter } from 'vscode-languageserver/node';
import { LifecycleGate } from './lifecycle';

/** A reader whose messages the test delivers, and a writer that keeps what it is given. */
function wire() {
  let deliver: DataCallback | undefined;
  const reader = {
    listen(callback: DataCallback) {
      deliver = callback;
      return { dispose: () => undefined };
    },
  } as unknown as MessageReader;
  const written: Message[] = [];
  const writer = { write: async (message: Message) => void written.push(message) } as unknown as MessageWriter;
  return { reader, writer, written, send: (message: Message) => deliver!(message) };
}

describe('LifecycleGate', () => {
  it('tells onMessage of every message as it is read, before routing it, whether or not it passes', () => {
    const { reader, writer, written, send } = wire();
    const order: string[] = [];
    const gate = new LifecycleGate(reader, writer, {
      onInitialize: () => order.push('initialize'),
      onExit: () => order.push('exit'),
      onMessage: () => order.push('message'),
      log: () => undefined,
    });
    gate.listen((message) => order.push(`forwarded ${(message as unknown as { method: string }).method}`));
    // Before initialize: a notification is dropped and a request answered by the gate, each still seen.
    send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: {} } as Message);
    send({ jsonrpc: '2.0', id: 1, method: 'textDocument/completion', params: {} } as Message);
    send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { processId: null } } as Message);
    expect(order).toEqual(['message', 'message', 'message', 'initialize', 'forwarded initialize']);
    expect(written).toHaveLength(1);
  });
});
