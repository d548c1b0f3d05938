import { SESSION_REFERENCE_JSON_RPC_CODES, SessionReferenceError } from '@dsh-session-ls/shared';
import { ResponseError } from 'vscode-jsonrpc';
import { describe, expect, it } from 'vitest';
import { describeServerError, isCancellation } from './serverErrors';

function serverError(code: keyof typeof SESSION_REFERENCE_JSON_RPC_CODES, message: string): ResponseError<{ code: string }> {
  return new ResponseError(SESSION_REFERENCE_JSON_RPC_CODES[code], message, { code });
}

describe('describeServerError', () => {
  it('shows a session-reference error from the server with its data.code', () => {
    expect(describeServerError(serverError('SESSION_REFERENCE_READ_FAILED', 'failed to read referenced session: EACCES'))).toBe(
      'SESSION_REFERENCE_READ_FAILED: failed to read referenced session: EACCES',
    );
  });

  it('shows a session-reference error raised in the client with its code', () => {
    const local = new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'invalid session reference URI "dsh-session:IiJ"');
    expect(describeServerError(local)).toBe('SESSION_REFERENCE_INVALID_REFERENCE: invalid session reference URI "dsh-session:IiJ"');
  });

  it('shows other failures by message, never inventing a code', () => {
    expect(describeServerError(new ResponseError(-32603, 'internal failure'))).toBe('dsh sessions: internal failure');
    expect(describeServerError(new ResponseError(-32602, 'odd', { code: 'NOT_OURS' }))).toBe('dsh sessions: odd');
    expect(describeServerError('plain text')).toBe('dsh sessions: plain text');
  });
});

describe('isCancellation', () => {
  it('is true for RequestCancelled and for the CANCELLED code', () => {
    expect(isCancellation(new ResponseError(-32800, 'Request cancelled'))).toBe(true);
    expect(isCancellation(serverError('SESSION_REFERENCE_CANCELLED', 'session reference preparation was cancelled'))).toBe(true);
  });

  it('is false for real failures', () => {
    expect(isCancellation(serverError('SESSION_REFERENCE_BUDGET_EXCEEDED', 'too big'))).toBe(false);
    expect(isCancellation(new Error('boom'))).toBe(false);
  });
});
