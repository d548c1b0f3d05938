import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { describe, expect, it, vi } from 'vitest';

vi.mock('vscode-languageclient/node', () => import('vscode-languageserver-protocol'));

import { SessionServer, type RequestSender } from './sessionServer';

function recordingClient(answer: unknown) {
  const calls: Array<{ method: string; params: unknown; token: unknown }> = [];
  const client: RequestSender = {
    sendRequest: async (type, params, token) => {
      calls.push({ method: type.method, params, token });
      return answer as never;
    },
  };
  return { client, calls };
}

describe('SessionServer', () => {
  it('asks dshSession.candidates with ONE argument object: the query and the document', async () => {
    const row = { sessionId: 's-1', label: 'Alpha', createdAt: 1, mention: formatSessionReferenceMention({ sessionId: 's-1', label: 'Alpha' }) };
    const { client, calls } = recordingClient([row, { junk: true }]);
    const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };
    const candidates = await new SessionServer(client).candidates('alp', 'file:///w/a.md', token);
    expect(candidates).toEqual([row]);
    expect(calls).toEqual([
      {
        method: 'workspace/executeCommand',
        params: { command: 'dshSession.candidates', arguments: [{ query: 'alp', textDocument: { uri: 'file:///w/a.md' } }] },
        token,
      },
    ]);
  });

  it('asks dshSession.preview for an open document and returns its Markdown', async () => {
    const { client, calls } = recordingClient('# What the model sees');
    expect(await new SessionServer(client).preview('file:///w/a.md')).toBe('# What the model sees');
    expect(calls[0]!.params).toEqual({ command: 'dshSession.preview', arguments: [{ textDocument: { uri: 'file:///w/a.md' } }] });
  });

  it('asks dshSession.transcript by session id', async () => {
    const { client, calls } = recordingClient('## Transcript');
    expect(await new SessionServer(client).transcript('s-1')).toBe('## Transcript');
    expect(calls[0]!.params).toEqual({ command: 'dshSession.transcript', arguments: [{ sessionId: 's-1' }] });
  });

  it('asks dshSession.transcript of another agent’s session with its agent', async () => {
    const { client, calls } = recordingClient('## Transcript');
    expect(await new SessionServer(client).transcript('cx-1', 'codex')).toBe('## Transcript');
    expect(calls[0]!.params).toEqual({ command: 'dshSession.transcript', arguments: [{ sessionId: 'cx-1', agent: 'codex' }] });
  });

  it('refuses an answer that is not Markdown text', async () => {
    const { client } = recordingClient(null);
    await expect(new SessionServer(client).transcript('s-1')).rejects.toThrow('dshSession.transcript answered without Markdown text');
  });

  it('passes the server error through untouched, code and all', async () => {
    const failure = Object.assign(new Error('failed to read referenced session: gone'), { code: -32803, data: { code: 'SESSION_REFERENCE_READ_FAILED' } });
    const client: RequestSender = { sendRequest: () => Promise.reject(failure) };
    await expect(new SessionServer(client).preview('file:///w/a.md')).rejects.toBe(failure);
  });
});
