import { describe, expect, it } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { findProgram } from '../../../../test/support/conformance';
import { initZstdSupport, loadSessionLog, parseSessionHeaderLine, readSessionHeader } from './index';
import { DEMO_1, concatBytes, headerLine, rawTranscript, zstdFrame } from '../../testing/testLogs';

const zstdCli = findProgram('zstd');
await initZstdSupport();

function thrown(action: () => unknown): SessionReadError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return error as SessionReadError;
  }
  throw new Error('expected a SessionReadError');
}

const VALID = {
  type: 'session',
  version: 0,
  id: 'ada8966c',
  createdAt: 1783352137161,
  cwd: '/repo',
  parentSession: '96cf59c9',
  seedLength: 42,
  origin: 'subagent',
  delegationDepth: 1,
  agentPreset: 'coder',
};

describe('header line as listing reads it (store doc §2)', () => {
  it('returns every defined key and drops unknown extra keys', () => {
    expect(parseSessionHeaderLine(JSON.stringify({ ...VALID, futureKey: 1 }))).toEqual(VALID);
  });

  it('accepts any numeric version (refused only when loading)', () => {
    expect(parseSessionHeaderLine(JSON.stringify({ ...VALID, version: 1 })).version).toBe(1);
  });

  const invalid: Array<[string, Record<string, unknown>]> = [
    ['delegationDepth missing', { delegationDepth: undefined }],
    ['delegationDepth negative', { delegationDepth: -1 }],
    ['delegationDepth fractional', { delegationDepth: 0.5 }],
    ['retired sandboxMode', { sandboxMode: 'x' }],
    ['retired approvalPolicy', { approvalPolicy: 'x' }],
    ['origin other than subagent', { origin: 'fork' }],
    ['type other than session', { type: 'turn/start' }],
    ['version not a number', { version: '0' }],
    ['id not a string', { id: 7 }],
    ['createdAt negative', { createdAt: -5 }],
    ['createdAt not an integer', { createdAt: 1.5 }],
    ['cwd null', { cwd: null }],
    ['seedLength negative', { seedLength: -1 }],
    ['agentPreset not a string', { agentPreset: 3 }],
  ];
  for (const [what, change] of invalid) {
    it(`rejects a header with ${what}`, () => {
      const error = thrown(() => parseSessionHeaderLine(JSON.stringify({ ...VALID, ...change })));
      expect(error.reason).toBe('corrupt');
    });
  }

  it('rejects createdAt -0 and a line that is not JSON', () => {
    expect(thrown(() => parseSessionHeaderLine(JSON.stringify(VALID).replace('1783352137161', '-0'))).reason).toBe('corrupt');
    expect(thrown(() => parseSessionHeaderLine('{"type":"session"')).message).toMatch(/not valid JSON/);
  });
});

describe('header when loading', () => {
  it('refuses version ≠ 0 as unsupported before any other check, in both directions', () => {
    const newer = thrown(() => loadSessionLog(rawTranscript([JSON.stringify({ ...VALID, version: 1 })]), 'raw'));
    expect(newer.reason).toBe('unsupported');
    expect(newer.message).toMatch(/newer harness/);
    const older = thrown(() => loadSessionLog(rawTranscript([JSON.stringify({ version: -1, id: 'x' })]), 'raw'));
    expect(older.reason).toBe('unsupported');
    expect(older.message).toMatch(/older than the supported v0/);
  });

  it('rejects a header that is not a session header as corrupt', () => {
    const error = thrown(() => loadSessionLog(rawTranscript([JSON.stringify({ ...VALID, delegationDepth: undefined })]), 'raw'));
    expect(error.reason).toBe('corrupt');
  });

  it('rejects a relative cwd (dsh validates it when building the session)', () => {
    const error = thrown(() => loadSessionLog(rawTranscript([headerLine('rel', { cwd: 'relative/dir' })]), 'raw'));
    expect(error).toMatchObject({ reason: 'corrupt' });
    expect(error.message).toMatch(/absolute/);
  });

  it('rejects a header naming another id than the one looked up', () => {
    const error = thrown(() => loadSessionLog(rawTranscript(DEMO_1), 'raw', { expectedId: 'demo-9' }));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toMatch(/identity mismatch/);
  });
});

describe('readSessionHeader', () => {
  it('raw: the bytes up to the first newline, or incomplete without one', () => {
    const bytes = rawTranscript(DEMO_1);
    const headerBytes = DEMO_1[0].length + 1;
    expect(readSessionHeader(bytes, 'raw')).toEqual({ header: parseSessionHeaderLine(DEMO_1[0]), headerBytes });
    expect(readSessionHeader(bytes.subarray(0, headerBytes - 1), 'raw')).toEqual({ incomplete: true });
    expect(thrown(() => readSessionHeader(rawTranscript(['{"type":"session"}', DEMO_1[1]]), 'raw')).reason).toBe('corrupt');
  });

  describe.skipIf(!zstdCli.found)('zstd', () => {
    it('the first frame, decoded and checked; incomplete while it is torn', () => {
      const first = zstdFrame(DEMO_1.slice(0, 1));
      const bytes = concatBytes([first, zstdFrame(DEMO_1.slice(1))]);
      expect(readSessionHeader(bytes, 'zstd')).toEqual({ header: parseSessionHeaderLine(DEMO_1[0]), headerBytes: first.length });
      for (const cut of [0, 3, first.length - 1]) {
        expect(readSessionHeader(bytes.subarray(0, cut), 'zstd')).toEqual({ incomplete: true });
      }
    });

    it('throws corrupt for a complete header frame that fails its checksum or holds more than one line', () => {
      const first = zstdFrame(DEMO_1.slice(0, 1));
      const damaged = first.slice();
      damaged[damaged.length - 1] ^= 0xff;
      expect(thrown(() => readSessionHeader(damaged, 'zstd')).message).toMatch(/header frame failed validation/);
      const twoLines = zstdFrame(DEMO_1.slice(0, 2));
      expect(thrown(() => readSessionHeader(twoLines, 'zstd')).message).toMatch(/not exactly one header line/);
      expect(thrown(() => readSessionHeader(new TextEncoder().encode('{"type":"session"}\n'), 'zstd')).message).toMatch(
        /invalid zstd frame magic/,
      );
    });
  });
});
