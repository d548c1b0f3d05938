import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SESSION_REFERENCE_CONFIG,
  SessionReferenceError,
  isPositiveSafeInteger,
  resolveSessionReferenceConfig,
  type SessionReferenceConfig,
} from '@dsh-session-ls/shared';

function configError(partial: unknown): SessionReferenceError {
  try {
    resolveSessionReferenceConfig(partial as Partial<SessionReferenceConfig>);
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReferenceError);
    return error as SessionReferenceError;
  }
  throw new Error(`expected ${String(partial)} to be rejected`);
}

const FIELDS = ['maxReferences', 'candidateLimit', 'maxReferenceBytes'] as const;

/** Values that are not positive safe integers. */
const NOT_POSITIVE_SAFE_INTEGERS: Array<[string, unknown]> = [
  ['0', 0],
  ['-0', -0],
  ['-1', -1],
  ['1.5', 1.5],
  ['0.1', 0.1],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['2**53', 2 ** 53],
  ['the string "3"', '3'],
  ['a BigInt', 3n],
  ['true', true],
  ['an object', { valueOf: () => 3 }],
  ['a boxed number', Object(3)],
];

describe('resolveSessionReferenceConfig', () => {
  it('has dsh’s defaults', () => {
    expect(resolveSessionReferenceConfig()).toEqual({ maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 });
    expect(resolveSessionReferenceConfig({})).toEqual(DEFAULT_SESSION_REFERENCE_CONFIG);
    expect(DEFAULT_SESSION_REFERENCE_CONFIG).toEqual({ maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 });
  });

  it('fills each missing field with its default and keeps the given ones', () => {
    expect(resolveSessionReferenceConfig({ maxReferenceBytes: 16 })).toEqual({
      maxReferences: 3,
      candidateLimit: 50,
      maxReferenceBytes: 16,
    });
    expect(resolveSessionReferenceConfig({ maxReferences: 1, candidateLimit: 2 })).toEqual({
      maxReferences: 1,
      candidateLimit: 2,
      maxReferenceBytes: 65536,
    });
    expect(resolveSessionReferenceConfig({ candidateLimit: undefined })).toEqual(DEFAULT_SESSION_REFERENCE_CONFIG);
  });

  it('accepts the largest safe integer where only positivity is required', () => {
    const max = Number.MAX_SAFE_INTEGER;
    expect(resolveSessionReferenceConfig({ candidateLimit: max, maxReferenceBytes: max })).toEqual({
      maxReferences: 3,
      candidateLimit: max,
      maxReferenceBytes: max,
    });
  });

  it('returns a fresh object and never changes the defaults', () => {
    const resolved = resolveSessionReferenceConfig();
    resolved.maxReferences = 1;
    expect(resolveSessionReferenceConfig().maxReferences).toBe(3);
    expect(Object.isFrozen(DEFAULT_SESSION_REFERENCE_CONFIG)).toBe(true);
  });

  it.each([1, 2, 3])('accepts maxReferences %d', (maxReferences) => {
    expect(resolveSessionReferenceConfig({ maxReferences }).maxReferences).toBe(maxReferences);
  });

  it.each([4, 100, Number.MAX_SAFE_INTEGER])('rejects maxReferences %d: must not exceed 3', (maxReferences) => {
    const error = configError({ maxReferences });
    expect(error.code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
    expect(error.message).toBe('session-reference: maxReferences must not exceed 3');
  });

  for (const field of FIELDS) {
    it.each(NOT_POSITIVE_SAFE_INTEGERS)(`rejects ${field} = %s`, (_what, value) => {
      const error = configError({ [field]: value });
      expect(error.name).toBe('SessionReferenceError');
      expect(error.code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
      expect(error.message).toBe(`session-reference: ${field} must be a positive safe integer`);
    });
  }

  it('validates in the order maxReferences, candidateLimit, maxReferenceBytes', () => {
    expect(configError({ maxReferenceBytes: 0, candidateLimit: 0, maxReferences: 0 }).message).toBe(
      'session-reference: maxReferences must be a positive safe integer',
    );
    // The ceiling belongs to maxReferences, so it comes before candidateLimit is looked at.
    expect(configError({ maxReferenceBytes: 0, candidateLimit: 0, maxReferences: 4 }).message).toBe(
      'session-reference: maxReferences must not exceed 3',
    );
    expect(configError({ maxReferenceBytes: 0, candidateLimit: -1, maxReferences: 2 }).message).toBe(
      'session-reference: candidateLimit must be a positive safe integer',
    );
    expect(configError({ maxReferenceBytes: 1.5, candidateLimit: 10 }).message).toBe(
      'session-reference: maxReferenceBytes must be a positive safe integer',
    );
  });
});

describe('isPositiveSafeInteger', () => {
  it.each([1, 2, 65536, Number.MAX_SAFE_INTEGER])('accepts %d', (value) => {
    expect(isPositiveSafeInteger(value)).toBe(true);
  });

  it.each([...NOT_POSITIVE_SAFE_INTEGERS, ['null', null], ['undefined', undefined]])('rejects %s', (_what, value) => {
    expect(isPositiveSafeInteger(value)).toBe(false);
  });
});
