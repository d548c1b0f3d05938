/** `--agents LIST`, `--claude-code-home DIR`, `--codex-home DIR`: which stores are read (our extension). */
export interface AgentFlags {
  agents?: string;
  claudeCodeHome?: string;
  codexHome?: string;
}

/** The command line of the `dsh-session-ls` binary, parsed: the server, a CLI subcommand, or help/version. */
export type Invocation =
  | { kind: 'help' }
  | { kind: 'version' }
  | ({ kind: 'server'; sessionsRoot?: string } & AgentFlags)
  | ({ kind: 'candidates'; query: string; root?: string; cwd?: string; target?: string; limit?: string; json: boolean } & AgentFlags)
  | ({
      kind: 'prepare';
      input: { from: 'text'; text: string } | { from: 'file'; path: string } | { from: 'stdin' };
      root?: string;
      target?: string;
      maxReferenceBytes?: string;
      json: boolean;
    } & AgentFlags);

const AGENT_FLAGS = ['--agents', '--claude-code-home', '--codex-home'] as const;

function agentFlags(values: ReadonlyMap<string, string>): AgentFlags {
  const flags: AgentFlags = {};
  if (values.has('--agents')) flags.agents = values.get('--agents')!;
  if (values.has('--claude-code-home')) flags.claudeCodeHome = values.get('--claude-code-home')!;
  if (values.has('--codex-home')) flags.codexHome = values.get('--codex-home')!;
  return flags;
}

/** A command line that cannot be understood; printed as `USAGE: message`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The help text (`--help`, or no subcommand). */
export const HELP_TEXT = `dsh-session-ls: mention DeepSeek Harness (dsh) sessions from any editor, and prepare their context as dsh does.

Language server:
  dsh-session-ls --stdio | --node-ipc | --socket=PORT | --pipe=NAME [--sessions-root DIR]

Command line:
  dsh-session-ls candidates [QUERY] [--root DIR] [--cwd DIR] [--target ID] [--limit N] [--json]
      Sessions a message may mention, best first (same cwd first, then no cwd, then the rest).
  dsh-session-ls prepare (--text TEXT | --file FILE | -) [--root DIR] [--target ID] [--max-reference-bytes N] [--json]
      Parse the mentions of a message as dsh does and print the readable text and the context for the model.

Options:
  --root DIR, --sessions-root DIR   sessions root (default: $DSH_HOME/sessions, else ~/.dsh/sessions)
  --agents LIST                     whose sessions to read, comma-separated: dsh, claude-code, codex (default dsh;
                                    also for the language server)
  --claude-code-home DIR            Claude Code's home (default: $CLAUDE_CONFIG_DIR, else ~/.claude)
  --codex-home DIR                  Codex's home (default: $CODEX_HOME, else ~/.codex)
  --cwd DIR                         the working directory candidates are ranked for (default: the target
                                    session's cwd, else the current directory)
  --target ID                       the session the message is written for (never offered, never referenced)
  --limit N                         how many candidates (default 50)
  --max-reference-bytes N           byte budget of each referenced session (default 65536)
  --json                            print JSON instead of text
  --version, --help

Errors print "CODE: message" on stderr: SESSION_REFERENCE_* codes exit 1, USAGE exits 2.`;

const TRANSPORT_FLAGS = ['--stdio', '--node-ipc', '--socket', '--pipe'];

function flagName(arg: string): string {
  const equals = arg.indexOf('=');
  return equals < 0 ? arg : arg.slice(0, equals);
}

/** Read the flags and positionals after a subcommand; `valued` flags take a value (`--flag V` or `--flag=V`). */
function readFlags(
  args: readonly string[],
  valued: readonly string[],
  booleans: readonly string[],
): { values: Map<string, string>; booleans: Set<string>; positionals: string[] } {
  const values = new Map<string, string>();
  const seen = new Set<string>();
  const positionals: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') {
      positionals.push(...args.slice(index + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const name = flagName(arg);
    if (booleans.includes(name) && name === arg) {
      seen.add(name);
      continue;
    }
    if (!valued.includes(name)) throw new UsageError(`unknown option ${arg}`);
    let value: string | undefined;
    if (name !== arg) {
      value = arg.slice(name.length + 1);
    } else {
      value = args[index + 1];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      index++;
    }
    if (values.has(name)) throw new UsageError(`${name} is given twice`);
    values.set(name, value);
  }
  return { values, booleans: seen, positionals };
}

/** Parse the arguments after `node bin` (`process.argv.slice(2)`). */
export function parseInvocation(args: readonly string[]): Invocation {
  const [first, ...rest] = args;
  if (first === 'candidates') {
    const flags = readFlags(rest, ['--root', '--sessions-root', '--cwd', '--target', '--limit', ...AGENT_FLAGS], ['--json', '--help']);
    if (flags.booleans.has('--help')) return { kind: 'help' };
    if (flags.positionals.length > 1) throw new UsageError('candidates takes at most one QUERY');
    if (flags.values.has('--root') && flags.values.has('--sessions-root')) throw new UsageError('give --root only once');
    return {
      kind: 'candidates',
      query: flags.positionals[0] ?? '',
      root: flags.values.get('--root') ?? flags.values.get('--sessions-root'),
      cwd: flags.values.get('--cwd'),
      target: flags.values.get('--target'),
      limit: flags.values.get('--limit'),
      json: flags.booleans.has('--json'),
      ...agentFlags(flags.values),
    };
  }
  if (first === 'prepare') {
    const flags = readFlags(
      rest,
      ['--root', '--sessions-root', '--target', '--text', '--file', '--max-reference-bytes', ...AGENT_FLAGS],
      ['--json', '--help'],
    );
    if (flags.booleans.has('--help')) return { kind: 'help' };
    const stdin = flags.positionals.filter((arg) => arg === '-').length;
    if (flags.positionals.length !== stdin) throw new UsageError(`unexpected argument ${flags.positionals.find((arg) => arg !== '-')}`);
    const forms = Number(flags.values.has('--text')) + Number(flags.values.has('--file')) + stdin;
    if (forms !== 1) throw new UsageError('prepare takes exactly one of --text TEXT, --file FILE or - (standard input)');
    if (flags.values.has('--root') && flags.values.has('--sessions-root')) throw new UsageError('give --root only once');
    const text = flags.values.get('--text');
    const file = flags.values.get('--file');
    return {
      kind: 'prepare',
      input: text !== undefined ? { from: 'text', text } : file !== undefined ? { from: 'file', path: file } : { from: 'stdin' },
      root: flags.values.get('--root') ?? flags.values.get('--sessions-root'),
      target: flags.values.get('--target'),
      maxReferenceBytes: flags.values.get('--max-reference-bytes'),
      json: flags.booleans.has('--json'),
      ...agentFlags(flags.values),
    };
  }
  if (args.includes('--help') || args.includes('-h')) return { kind: 'help' };
  if (args.includes('--version')) return { kind: 'version' };
  if (args.some((arg) => TRANSPORT_FLAGS.includes(flagName(arg)))) {
    const root = readServerFlag(args, '--sessions-root');
    const agents: Record<string, string> = {};
    for (const flag of AGENT_FLAGS) {
      const value = readServerFlag(args, flag);
      if (value !== undefined) agents[flag] = value;
    }
    return { kind: 'server', ...(root === undefined ? {} : { sessionsRoot: root }), ...agentFlags(new Map(Object.entries(agents))) };
  }
  if (first === undefined) return { kind: 'help' };
  throw new UsageError(`unknown command ${JSON.stringify(first)} (try --help)`);
}

/** `--flag VALUE` (or `=VALUE`) among the server's arguments; the transport flags are vscode-languageserver's. */
function readServerFlag(args: readonly string[], flag: string): string | undefined {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === flag) {
      const value = args[index + 1];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      return value;
    }
    if (arg.startsWith(flag + '=')) return arg.slice(flag.length + 1);
  }
  return undefined;
}

/** The settings the agent flags give (homes made absolute against `cwd`). */
export function agentSettingsOfFlags(flags: AgentFlags, cwd: string, absolute: (value: string, base: string) => string): Record<string, unknown> {
  return {
    ...(flags.agents === undefined ? {} : { agents: flags.agents }),
    ...(flags.claudeCodeHome === undefined ? {} : { claudeCodeHome: absolute(flags.claudeCodeHome, cwd) }),
    ...(flags.codexHome === undefined ? {} : { codexHome: absolute(flags.codexHome, cwd) }),
  };
}
