import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeSegment,
  isFlatTranscriptName,
  projectDirName,
  projectKey,
  relativeLogKey,
  relativeLogPath,
  transcriptEncoding,
} from './layout';
import { decodeSegment } from '../testing/decodeSegment';

describe('projectKey (dsh-session-store.md §1.1)', () => {
  it.each([
    ['/home/alice/proj', '--home-alice-proj--'],
    ['/home/alice/proj/', '--home-alice-proj---'],
    ['/a//b', '--a-b--'],
    ['/a/b-c', '--a-b-c--'],
    ['/a-b/c', '--a-b-c--'],
    ['C:\\work\\agent', '--C-work-agent--'],
    ['/-x/y z', '--x-y~0020z--'],
    ['/开发/~agent', '--~5F00~53D1-~007Eagent--'],
    ['/', '--root--'],
    ['/srv/work space/日本', '--srv-work~0020space-~65E5~672C--'],
    ['/é', '--~00E9--'],
    ['/😀', '--~D83D~DE00--'],
    ['---', '--root--'],
    ['a:/\\b', '--a-b--'],
  ])('%j → %j', (cwd, expected) => {
    expect(projectKey(cwd)).toBe(expected);
  });

  it('rejects an empty cwd', () => {
    expect(() => projectKey('')).toThrow();
  });

  it('keeps the first 251 slug characters, even when that cuts through an escape', () => {
    const cwd = '/' + 'a'.repeat(249) + ' tail';
    // readable slug: 249 × a, then `~0020tail`; 251 characters end inside the escape.
    expect(projectKey(cwd)).toBe('--' + 'a'.repeat(249) + '~0' + '--');
    expect(projectKey(cwd)).toHaveLength(255);
    expect(projectKey('/' + 'b'.repeat(300))).toBe('--' + 'b'.repeat(251) + '--');
  });

  it('is pure ASCII and at most 255 characters for any cwd', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1 }), (cwd) => {
        const key = projectKey(cwd);
        expect(key.length).toBeLessThanOrEqual(255);
        expect(key).toMatch(/^--[A-Za-z0-9._~-]+--$/);
      }),
    );
  });

  it('maps a header without cwd to _no-cwd', () => {
    expect(projectDirName(undefined)).toBe('_no-cwd');
    expect(projectDirName('/home/alice/proj')).toBe('--home-alice-proj--');
  });
});

/** §1.1 and §1.2 a unit at a time, as the store doc states them: what the sliced builders must equal. */
const literal = (unit: number): boolean => /[A-Za-z0-9._-]/.test(String.fromCharCode(unit));
const escaped = (unit: number): string => `~${unit.toString(16).toUpperCase().padStart(4, '0')}`;
function projectKeyByUnit(cwd: string): string {
  let readable = '';
  let inRun = false;
  for (let i = 0; i < cwd.length; i++) {
    const unit = cwd.charCodeAt(i);
    const separator = unit === 0x2f || unit === 0x5c || unit === 0x3a;
    if (separator && !inRun) readable += '-';
    if (!separator) readable += literal(unit) ? cwd[i] : escaped(unit);
    inRun = separator;
  }
  return `--${(readable.replace(/^-+/, '') || 'root').slice(0, 251)}--`;
}
function encodeSegmentByUnit(id: string): string {
  if (id === '.' || id === '..') return escaped(0x2e).repeat(id.length);
  return [...Array(id.length).keys()].map((i) => (literal(id.charCodeAt(i)) ? id[i] : escaped(id.charCodeAt(i)))).join('');
}

describe('the sliced builders', () => {
  /** Strings mixing literal runs, separators, escapes and lone surrogates. */
  const text = fc.oneof(
    fc.string({ unit: 'binary', minLength: 1 }),
    fc.array(fc.constantFrom('a', 'Zz9', '.', '-', '_', '/', '\\', ':', '//', ' ', '~', '\uD800', '😀', 'é', 'x'.repeat(260)), { minLength: 1, maxLength: 12 }).map((parts) => parts.join('')),
  );

  it('projectKey equals the unit-at-a-time rule', () => {
    fc.assert(
      fc.property(text, (cwd) => {
        expect(projectKey(cwd)).toBe(projectKeyByUnit(cwd));
      }),
      { numRuns: 3000 },
    );
  });

  it('encodeSegment equals the unit-at-a-time rule, and returns an id needing no escape as it is', () => {
    fc.assert(
      fc.property(text, (id) => {
        expect(encodeSegment(id)).toBe(encodeSegmentByUnit(id));
      }),
      { numRuns: 3000 },
    );
    const id = 'ada8966c-1f2e-4c3d-9a0b-123456789abc';
    expect(encodeSegment(id)).toBe(id);
  });
});

describe('encodeSegment / decodeSegment (§1.2)', () => {
  it.each([
    ['a/b', 'a~002Fb'],
    ['x~y', 'x~007Ey'],
    ['/etc/passwd', '~002Fetc~002Fpasswd'],
    ['{{sessionId}}', '~007B~007BsessionId~007D~007D'],
    ['ada8966c-1f2e-4c3d-9a0b-123456789abc', 'ada8966c-1f2e-4c3d-9a0b-123456789abc'],
    ['.', '~002E'],
    ['..', '~002E~002E'],
    ['...', '...'],
    ['.a', '.a'],
    ['a:b\\c', 'a~003Ab~005Cc'],
    ['nul\u0000', 'nul~0000'],
    ['\uD800', '~D800'],
    ['x\uDC00y', 'x~DC00y'],
    ['😀', '~D83D~DE00'],
    ['é', '~00E9'],
    ['~0041', '~007E0041'],
  ])('%j ↔ %j', (id, encoded) => {
    expect(encodeSegment(id)).toBe(encoded);
    expect(decodeSegment(encoded)).toBe(id);
  });

  it('rejects an empty id', () => {
    expect(() => encodeSegment('')).toThrow();
  });

  it.each(['', '.', '..', '~002e', '~00', '~zzzz', 'a b', 'a~007', '~0041'])(
    'decodes only canonical names: %j is not one',
    (name) => {
      expect(decodeSegment(name)).toBeUndefined();
    },
  );

  it('is injective over all JS strings, lone surrogates included, and decodes back', () => {
    const id = fc.string({ unit: 'binary', minLength: 1 });
    fc.assert(
      fc.property(id, id, (a, b) => {
        expect(decodeSegment(encodeSegment(a))).toBe(a);
        if (a !== b) expect(encodeSegment(a)).not.toBe(encodeSegment(b));
      }),
      { numRuns: 2000 },
    );
    // Near-collisions: ids that only differ by a literal `~XXXX` versus the escaped unit.
    fc.assert(
      fc.property(fc.constantFrom('~', '.', '/', 'A', '~002F', '\uD83D', '\uDE00'), fc.array(fc.constantFrom('~', '.', '/', 'A', '~002F', '\uD83D', '\uDE00'), { maxLength: 6 }), (head, tail) => {
        const a = [head, ...tail].join('');
        const b = [...tail, head].join('');
        expect(encodeSegment(a) === encodeSegment(b)).toBe(a === b);
      }),
    );
  });

  it('never produces a path separator, `.` or `..`', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1 }), (id) => {
        const name = encodeSegment(id);
        expect(name).toMatch(/^[A-Za-z0-9._~-]+$/);
        expect(name).not.toBe('.');
        expect(name).not.toBe('..');
      }),
    );
  });
});

describe('transcript names', () => {
  it('derives dsh logPath relative to the root, as an index key', () => {
    expect(relativeLogKey('/home/alice/proj', 'demo-1', 'raw')).toBe('--home-alice-proj--/demo-1/session.jsonl');
    expect(relativeLogKey(undefined, 'a/b', 'zstd')).toBe('_no-cwd/a~002Fb/session.jsonl.zstd');
    expect(relativeLogPath('/home/alice/proj', 'demo-1', 'raw')).toBe(['--home-alice-proj--', 'demo-1', 'session.jsonl'].join(path.sep));
  });

  it('is path.join of the three names, on POSIX and on Windows, separators made `/`', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ unit: 'binary', minLength: 1 }), { nil: undefined }), fc.string({ unit: 'binary', minLength: 1 }), fc.constantFrom('raw' as const, 'zstd' as const), (cwd, id, encoding) => {
        const names = [projectDirName(cwd), encodeSegment(id), encoding === 'raw' ? 'session.jsonl' : 'session.jsonl.zstd'];
        const key = relativeLogKey(cwd, id, encoding);
        expect(key).toBe(path.posix.join(...names));
        expect(key).toBe(path.win32.join(...names).split('\\').join('/'));
        expect(relativeLogPath(cwd, id, encoding)).toBe(path.join(...names));
      }),
      { numRuns: 2000 },
    );
  });

  it('tells the encoding by name and ignores temp files', () => {
    expect(transcriptEncoding('session.jsonl')).toBe('raw');
    expect(transcriptEncoding('session.jsonl.zstd')).toBe('zstd');
    expect(transcriptEncoding('session.jsonl.0123456789ab.tmp')).toBeUndefined();
    expect(transcriptEncoding('notes.txt')).toBeUndefined();
  });

  it('recognizes flat-layout transcripts', () => {
    expect(isFlatTranscriptName('demo-1.jsonl')).toBe(true);
    expect(isFlatTranscriptName('demo-1.jsonl.zstd')).toBe(true);
    expect(isFlatTranscriptName('demo-1.jsonl.0123456789ab.tmp')).toBe(false);
  });
});
