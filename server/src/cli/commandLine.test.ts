import { describe, expect, it } from 'vitest';
import { UsageError, parseInvocation } from './commandLine';

describe('parseInvocation', () => {
  it('prints help without a subcommand, and for --help', () => {
    expect(parseInvocation([])).toEqual({ kind: 'help' });
    expect(parseInvocation(['--help'])).toEqual({ kind: 'help' });
    expect(parseInvocation(['candidates', '--help'])).toEqual({ kind: 'help' });
    expect(parseInvocation(['--version'])).toEqual({ kind: 'version' });
  });

  it('starts the server for any vscode-languageserver transport, with an optional sessions root', () => {
    expect(parseInvocation(['--stdio'])).toEqual({ kind: 'server' });
    expect(parseInvocation(['--node-ipc'])).toEqual({ kind: 'server' });
    expect(parseInvocation(['--socket=5000'])).toEqual({ kind: 'server' });
    expect(parseInvocation(['--pipe=/tmp/p'])).toEqual({ kind: 'server' });
    expect(parseInvocation(['--stdio', '--sessions-root', '/s'])).toEqual({ kind: 'server', sessionsRoot: '/s' });
    expect(parseInvocation(['--sessions-root=/s', '--stdio', '--clientProcessId=12'])).toEqual({ kind: 'server', sessionsRoot: '/s' });
  });

  it('parses candidates with its query and flags (space or = values)', () => {
    expect(parseInvocation(['candidates', 'fore', '--root', '/r', '--cwd=/c', '--target', 't', '--limit', '5', '--json'])).toEqual({
      kind: 'candidates',
      query: 'fore',
      root: '/r',
      cwd: '/c',
      target: 't',
      limit: '5',
      json: true,
    });
    expect(parseInvocation(['candidates'])).toMatchObject({ kind: 'candidates', query: '', json: false });
    expect(parseInvocation(['candidates', '--', '--odd'])).toMatchObject({ query: '--odd' });
  });

  it('parses prepare with exactly one input form', () => {
    expect(parseInvocation(['prepare', '--text', 'hi @x'])).toMatchObject({ kind: 'prepare', input: { from: 'text', text: 'hi @x' } });
    expect(parseInvocation(['prepare', '--file', 'msg.md', '--max-reference-bytes', '300'])).toMatchObject({
      input: { from: 'file', path: 'msg.md' },
      maxReferenceBytes: '300',
    });
    expect(parseInvocation(['prepare', '-', '--json', '--target', 'me'])).toMatchObject({ input: { from: 'stdin' }, json: true, target: 'me' });
  });

  it('refuses what it cannot understand with a UsageError', () => {
    for (const args of [
      ['prepare'],
      ['prepare', '--text', 'a', '-'],
      ['prepare', '--text', 'a', '--file', 'b'],
      ['prepare', 'extra'],
      ['candidates', 'a', 'b'],
      ['candidates', '--limit'],
      ['candidates', '--bogus'],
      ['candidates', '--cwd', 'a', '--cwd', 'b'],
      ['frobnicate'],
      ['--stdio', '--sessions-root'],
    ]) {
      expect(() => parseInvocation(args), args.join(' ')).toThrow(UsageError);
    }
  });
});
