import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JsonRpcErrorCodes,
  SESSION_REFERENCE_ERROR_CODES,
  SESSION_REFERENCE_JSON_RPC_CODES,
  SessionReferenceError,
  isSessionReferenceError,
  sessionReferenceErrorFromJsonRpc,
  type SessionReferenceErrorCode,
} from '@dsh-session-ls/shared';

describe('SessionReferenceError', () => {
  it('is an Error named SessionReferenceError carrying its code and message', () => {
    const error = new SessionReferenceError('SESSION_REFERENCE_TOO_MANY', 'a message may reference at most 3 sessions');
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(SessionReferenceError);
    expect(error.name).toBe('SessionReferenceError');
    expect(error.code).toBe('SESSION_REFERENCE_TOO_MANY');
    expect(error.message).toBe('a message may reference at most 3 sessions');
    expect(String(error)).toBe('SessionReferenceError: a message may reference at most 3 sessions');
    expect(error.stack).toContain('SessionReferenceError');
  });

  it('keeps the cause, whatever it is', () => {
    const reason = new DOMException('aborted', 'AbortError');
    const error = new SessionReferenceError('SESSION_REFERENCE_CANCELLED', 'session reference preparation was cancelled', {
      cause: reason,
    });
    expect(error.cause).toBe(reason);
    expect(new SessionReferenceError('SESSION_REFERENCE_READ_FAILED', 'x', { cause: 'text' }).cause).toBe('text');
    // An explicitly undefined cause is still a cause (an abort reason may be anything).
    expect('cause' in new SessionReferenceError('SESSION_REFERENCE_CANCELLED', 'x', { cause: undefined })).toBe(true);
  });

  it('has no cause unless one is given', () => {
    expect('cause' in new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'x')).toBe(false);
    expect('cause' in new SessionReferenceError('SESSION_REFERENCE_INVALID_REFERENCE', 'x', {})).toBe(false);
  });
});

describe('error codes', () => {
  it('are exactly the seven codes of session-reference.md §3', () => {
    expect([...SESSION_REFERENCE_ERROR_CODES].sort()).toEqual(
      [
        'SESSION_REFERENCE_INVALID_CONFIG',
        'SESSION_REFERENCE_INVALID_REFERENCE',
        'SESSION_REFERENCE_SELF_REFERENCE',
        'SESSION_REFERENCE_TOO_MANY',
        'SESSION_REFERENCE_READ_FAILED',
        'SESSION_REFERENCE_BUDGET_EXCEEDED',
        'SESSION_REFERENCE_CANCELLED',
      ].sort(),
    );
  });

  it('use the LSP numbers for the JSON-RPC codes', () => {
    expect(JsonRpcErrorCodes).toEqual({
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
      RequestFailed: -32803,
      RequestCancelled: -32800,
    });
  });

  it('map to JSON-RPC codes as the table in lsp-contract.md (Errors) says', () => {
    expect(SESSION_REFERENCE_JSON_RPC_CODES).toEqual({
      SESSION_REFERENCE_INVALID_CONFIG: -32602,
      SESSION_REFERENCE_INVALID_REFERENCE: -32602,
      SESSION_REFERENCE_SELF_REFERENCE: -32602,
      SESSION_REFERENCE_TOO_MANY: -32602,
      SESSION_REFERENCE_READ_FAILED: -32803,
      SESSION_REFERENCE_BUDGET_EXCEEDED: -32803,
      SESSION_REFERENCE_CANCELLED: -32800,
    });
  });
});

describe('isSessionReferenceError', () => {
  it('recognises instances and same-shaped errors from another bundle', () => {
    expect(isSessionReferenceError(new SessionReferenceError('SESSION_REFERENCE_TOO_MANY', 'x'))).toBe(true);
    const foreign = Object.assign(new Error('x'), { name: 'SessionReferenceError', code: 'SESSION_REFERENCE_TOO_MANY' });
    expect(isSessionReferenceError(foreign)).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an unknown code', { name: 'SessionReferenceError', code: 'SESSION_REFERENCE_OTHER' }],
    ['another name', { name: 'TypeError', code: 'SESSION_REFERENCE_TOO_MANY' }],
    ['null', null],
    ['a string', 'SessionReferenceError'],
  ])('rejects %s', (_what, value) => {
    expect(isSessionReferenceError(value)).toBe(false);
  });
});

describe('sessionReferenceErrorFromJsonRpc', () => {
  /** What the server sends for an error (lsp-contract.md, Errors): data.code and the message. */
  const toJsonRpc = (error: SessionReferenceError) => ({
    code: SESSION_REFERENCE_JSON_RPC_CODES[error.code],
    message: error.message,
    data: { code: error.code },
  });

  it.each(SESSION_REFERENCE_ERROR_CODES)('round-trips %s with its message', (code) => {
    const original = new SessionReferenceError(code, `message for ${code}`, { cause: new Error('never sent') });
    // Through real JSON, as it travels.
    const back = sessionReferenceErrorFromJsonRpc(JSON.parse(JSON.stringify(toJsonRpc(original))));
    expect(back).toBeInstanceOf(SessionReferenceError);
    expect(back).toMatchObject({ name: 'SessionReferenceError', code, message: `message for ${code}` });
  });

  it('round-trips any message', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SESSION_REFERENCE_ERROR_CODES), fc.string({ unit: 'binary' }), (code, message) => {
        const back = sessionReferenceErrorFromJsonRpc(toJsonRpc(new SessionReferenceError(code, message)));
        expect(back?.code).toBe(code);
        expect(back?.message).toBe(message);
      }),
    );
  });

  it.each([
    ['no data', { message: 'x' }],
    ['null data', { message: 'x', data: null }],
    ['data without a code', { message: 'x', data: {} }],
    ['an unknown code', { message: 'x', data: { code: 'SESSION_REFERENCE_OTHER' } }],
    ['a numeric code', { message: 'x', data: { code: -32602 } }],
    ['data that is a string', { message: 'x', data: 'SESSION_REFERENCE_TOO_MANY' }],
  ])('gives undefined for %s', (_what, error) => {
    expect(sessionReferenceErrorFromJsonRpc(error)).toBeUndefined();
  });

  it('keeps the code when the message is missing', () => {
    const code: SessionReferenceErrorCode = 'SESSION_REFERENCE_READ_FAILED';
    expect(sessionReferenceErrorFromJsonRpc({ data: { code } })).toMatchObject({ code, message: '' });
  });

  it('keeps the code and no message when the message is not a string', () => {
    const code: SessionReferenceErrorCode = 'SESSION_REFERENCE_READ_FAILED';
    expect(sessionReferenceErrorFromJsonRpc({ message: { text: 'x' }, data: { code } })).toMatchObject({ code, message: '' });
  });
});
