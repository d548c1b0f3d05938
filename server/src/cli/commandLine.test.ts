import { describe, expect, it } from 'vitest';
import { HELP_TEXT, UsageError, parseInvocation } from './commandLine';

describe('parseInvocation', () => {
  it('prints help without a subcommand, and for --help', () => {
    expect(parseInvocation([])).toEqual({ kind: 'help' });
    expect(parseInvocation(['--help'])).toEqual({ kind: 'help' });
    expect(parseInvocation(['candidates', '--help'])).toEqual({ kind: 'help' });
    expect(parseInvocation(['--version'])).toEqual({ kind: 'version' });
  });

  it('describes --agents and each agent home flag in --help, wrapped in the options column', () => {
    expect(HELP_TEXT).toContain(
      [
        '  --agents LIST                     whose sessions to read, comma-separated: dsh, claude-code, codex, qwen-code,',
        '                                    gemini, opencode (default dsh; also for the language server)',
        "  --claude-code-home DIR            Claude Code's home, the folder holding projects/ (default: $CLAUDE_CONFIG_DIR,",
        '                                    else ~/.claude)',
        "  --codex-home DIR                  Codex's home, the folder holding sessions/ (default: $CODEX_HOME, else ~/.codex)",
        "  --qwen-code-home DIR              Qwen Code's home, the folder holding projects/ (default: $QWEN_HOME, else",
        '                                    ~/.qwen)',
        "  --gemini-home DIR                 Gemini CLI's home, the folder holding tmp/ (default: $GEMINI_CLI_HOME/.gemini,",
        '                                    else ~/.gemini)',
        "  --opencode-home DIR               opencode's home, the folder holding opencode.db (default:",
        '                                    $XDG_DATA_HOME/opencode, else ~/.local/share/opencode)',
        '  --cwd DIR ',
      ].join('\n'),
    );
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
      limit: 5,
      format: 'json',
    });
    expect(parseInvocation(['candidates'])).toMatchObject({ kind: 'candidates', query: '', format: 'text' });
    expect(parseInvocation(['candidates', '--jsonl'])).toMatchObject({ format: 'jsonl' });
    expect(parseInvocation(['candidates', '--', '--odd'])).toMatchObject({ query: '--odd' });
  });

  it('parses prepare with exactly one input form', () => {
    expect(parseInvocation(['prepare', '--text', 'hi @x'])).toMatchObject({ kind: 'prepare', input: { from: 'text', text: 'hi @x' } });
    expect(parseInvocation(['prepare', '--file', 'msg.md', '--max-reference-bytes', '300'])).toMatchObject({
      input: { from: 'file', path: 'msg.md' },
      maxReferenceBytes: 300,
    });
    expect(parseInvocation(['prepare', '-', '--json', '--target', 'me'])).toMatchObject({ input: { from: 'stdin' }, format: 'json', target: 'me' });
    expect(parseInvocation(['prepare', '-', '--jsonl'])).toMatchObject({ format: 'jsonl' });
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
      ['candidates', '--json', '--jsonl'],
    ]) {
      expect(() => parseInvocation(args), args.join(' ')).toThrow(UsageError);
    }
  });

  /** The message of the usage error `args` raise. */
  function usage(args: string[]): string {
    try {
      parseInvocation(args);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error(`${args.join(' ')} parsed`);
  }

  it('suggests the nearest option or command for a misspelled one', () => {
    expect(usage(['candidates', '--roott', '/r'])).toBe('unknown option --roott (did you mean --root?)');
    expect(usage(['prepare', '--roott=/r', '-'])).toBe('unknown option --roott (did you mean --root?)');
    expect(usage(['candidates', '--JSON'])).toBe('unknown option --JSON (did you mean --json?)');
    expect(usage(['prepare', '--max-ref', '9', '-'])).toBe('unknown option --max-ref (did you mean --max-reference-bytes?)');
    expect(usage(['candidates', '-root', '/r'])).toBe('unknown option -root (did you mean --root?)');
    expect(usage(['candidates', '--bogus'])).toBe('unknown option --bogus (see --help)');
    expect(usage(['candidate'])).toBe('unknown command "candidate" (did you mean candidates?)');
    expect(usage(['frobnicate'])).toBe('unknown command "frobnicate" (try --help)');
    expect(usage(['--verison'])).toBe('unknown option --verison (did you mean --version?)');
    expect(usage(['--roott'])).toBe('unknown option --roott (did you mean --root? it goes after a subcommand, as in dsh-session-ls candidates --root ...)');
    expect(usage(['--sessions-root', '/s'])).toBe(
      '--sessions-root is an option of the language server: add --stdio (or --node-ipc, --socket=PORT, --pipe=NAME), or put a subcommand first',
    );
    expect(usage(['--json'])).toBe('--json goes after a subcommand, as in dsh-session-ls candidates --json ...');
  });

  it("names the subcommand an option belongs to, and a switch's value", () => {
    expect(usage(['prepare', '--limit', '3', '-'])).toBe('prepare has no option --limit (it is an option of candidates)');
    expect(usage(['candidates', '--file', 'm.md'])).toBe('candidates has no option --file (it is an option of prepare)');
    expect(usage(['candidates', '--json=yes'])).toBe('--json takes no value');
  });

  it('takes --limit and --max-reference-bytes as whole numbers from 1, refusing anything else as a usage error', () => {
    expect(parseInvocation(['candidates', '--limit', ' 7 '])).toMatchObject({ limit: 7 });
    expect(parseInvocation(['candidates', `--limit=${Number.MAX_SAFE_INTEGER}`])).toMatchObject({ limit: Number.MAX_SAFE_INTEGER });
    for (const value of ['abc', '0', '-1', '1.5', '1e3', '', '0x10', String(Number.MAX_SAFE_INTEGER + 2)]) {
      expect(usage(['candidates', '--limit', value])).toBe(`--limit takes a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not ${JSON.stringify(value)}`);
      expect(usage(['prepare', '-', '--max-reference-bytes', value])).toBe(
        `--max-reference-bytes takes a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not ${JSON.stringify(value)}`,
      );
    }
  });
});
