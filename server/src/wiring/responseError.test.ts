import { describe, expect, it } from 'vitest';
import { JsonRpcErrorCodes, SESSION_REFERENCE_ERROR_CODES, SESSION_REFERENCE_JSON_RPC_CODES, SessionReferenceError } from '@dsh-session-ls/shared';
import { ResponseError } from 'vscode-languageserver/node';
import { UnknownCommandError } from '../features/errors';
import { toResponseError } from './responseError';

describe('toResponseError', () => {
  it('maps every SessionReferenceError code by the shared table, with its message and data.code only', () => {
    for (const code of SESSION_REFERENCE_ERROR_CODES) {
      const error = toResponseError(new SessionReferenceError(code, `message of ${code}`, { cause: new Error('secret cause') }));
      expect(error.code).toBe(SESSION_REFERENCE_JSON_RPC_CODES[code]);
      expect(error.message).toBe(`message of ${code}`);
      expect(error.toJson()).toEqual({ code: SESSION_REFERENCE_JSON_RPC_CODES[code], message: `message of ${code}`, data: { code } });
    }
  });

  it('keeps protocol errors and turns anything else into InternalError', () => {
    const protocol = new ResponseError(JsonRpcErrorCodes.MethodNotFound, 'x');
    expect(toResponseError(protocol)).toBe(protocol);
    expect(toResponseError(new TypeError('boom')).code).toBe(JsonRpcErrorCodes.InternalError);
    expect(toResponseError('weird').code).toBe(JsonRpcErrorCodes.InternalError);
    const unknown = toResponseError(new UnknownCommandError('dshSession.nope'));
    expect(unknown.code).toBe(JsonRpcErrorCodes.MethodNotFound);
    expect(unknown.message).toBe('unknown command "dshSession.nope"');
  });
});
