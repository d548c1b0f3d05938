import { AGENTS, FOREIGN_AGENT_INFO, type AgentHomeSetting, type ForeignAgentInfo } from '@dsh-session-ls/shared';
import { didYouMean, nearestWord } from './suggest';

/** `--agents LIST` and each other agent's home flag (`shared`'s agents table): which stores are read (our extension). */
export type AgentFlags = { agents?: string } & { [K in AgentHomeSetting]?: string };

/** How a subcommand prints its answer: readable text, indented JSON (`--json`), or JSON Lines (`--jsonl`). */
export type OutputFormat = 'text' | 'json' | 'jsonl';

/** The command line of the `dsh-session-ls` binary, parsed: the server, a CLI subcommand, or help/version. */
export type Invocation =
  | { kind: 'help' }
  | { kind: 'version' }
  | ({ kind: 'server'; sessionsRoot?: string } & AgentFlags)
  | ({ kind: 'candidates'; query: string; root?: string; cwd?: string; target?: string; limit?: number; format: OutputFormat } & AgentFlags)
  | ({
      kind: 'prepare';
      input: { from: 'text'; text: string } | { from: 'file'; path: string } | { from: 'stdin' };
      root?: string;
      target?: string;
      maxReferenceBytes?: number;
      /** `--redact-secrets`: credentials in the context become `[REDACTED:<kind>]`. */
      redactSecrets?: boolean;
      format: OutputFormat;
    } & AgentFlags);

const AGENT_FLAGS: readonly string[] = ['--agents', ...FOREIGN_AGENT_INFO.map((info) => info.homeFlag)];

function agentFlags(values: ReadonlyMap<string, string>): AgentFlags {
  const flags: AgentFlags = {};
  if (values.has('--agents')) flags.agents = values.get('--agents')!;
  for (const { homeFlag, homeSetting } of FOREIGN_AGENT_INFO) if (values.has(homeFlag)) flags[homeSetting] = values.get(homeFlag)!;
  return flags;
}

/** Where an option's description starts, and how wide the help text's lines are at most. */
const HELP_COLUMN = 36;
const HELP_WIDTH = 116;

/** One option of the help text: its name in the first column, its description wrapped at {@link HELP_WIDTH}. */
function helpOption(name: string, description: string): string {
  const lines: string[] = [];
  let line = `  ${name}`.padEnd(HELP_COLUMN);
  let empty = true;
  for (const word of description.split(' ')) {
    if (!empty && line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(line);
      line = ' '.repeat(HELP_COLUMN);
      empty = true;
    }
    line += (empty ? '' : ' ') + word;
    empty = false;
  }
  return [...lines, line].join('\n');
}

/** The help text's lines of `--agents` and each other agent's home flag. */
const AGENT_HELP = [
  helpOption('--agents LIST', `whose sessions to read, comma-separated: ${AGENTS.join(', ')} (default dsh; also for the language server)`),
  ...(FOREIGN_AGENT_INFO as readonly ForeignAgentInfo[]).map((info) =>
    helpOption(
      `${info.homeFlag} DIR`,
      `${info.title}'s home, the folder holding ${info.sessionsFolder}${info.sessionsDatabase === true ? '' : '/'} ` +
        `(default: $${info.homeEnv}${info.homeEnvFolder === undefined ? '' : `/${info.homeEnvFolder}`}, else ~/${info.homeFolder})`,
    ),
  ),
].join('\n');

/** A command line that cannot be understood; printed as `USAGE: message`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The help text (`--help`, or no subcommand). */
export const HELP_TEXT = `dsh-session-ls: mention DeepSeek Harness (dsh) sessions from any editor, and prepare their context as dsh does.

Language server:
  dsh-session-ls --stdio | --node-ipc | --socket=PORT | --pipe=NAME [--sessions-root DIR] [--agents LIST]

Command line:
  dsh-session-ls candidates [QUERY] [--root DIR] [--cwd DIR] [--target ID] [--limit N] [--json | --jsonl]
      Sessions a message may mention, best first (same cwd first, then no cwd, then the rest).
  dsh-session-ls prepare (--text TEXT | --file FILE | -) [--root DIR] [--target ID] [--max-reference-bytes N]
                         [--redact-secrets] [--json | --jsonl]
      Parse the mentions of a message as dsh does and print the readable text and the context for the model.
      FILE and standard input are read as UTF-8 (UTF-16 with a byte order mark is decoded too).
      Without --redact-secrets, credentials found in the context are counted in a warning on stderr.

Options:
  --root DIR, --sessions-root DIR   sessions root (default: $DSH_HOME/sessions, else ~/.dsh/sessions)
${AGENT_HELP}
  --cwd DIR                         the working directory candidates are ranked for (default: the target
                                    session's cwd, else the current directory)
  --target ID                       the session the message is written for (never offered, never referenced)
  --limit N                         how many candidates (default 50)
  --max-reference-bytes N           byte budget of each referenced session (default 65536)
  --redact-secrets                  replace each credential found in the context with [REDACTED:<kind>]
  --json                            print JSON (an indented array or object) instead of text
  --jsonl                           print JSON Lines: one compact object per line (a candidate, or the prepared message)
  --                                what follows is the QUERY, even when it starts with -
  --version, --help

Errors print one line "CODE: message" on stderr: USAGE (a usage error or unreadable input) exits 2,
SESSION_REFERENCE_* codes exit 1. Warnings and hints print as "warning: ..." and "hint: ..." lines.`;

const TRANSPORT_FLAGS = ['--stdio', '--node-ipc', '--socket', '--pipe'];

/** The options of each subcommand: those that take a value, and the switches. */
const SUBCOMMAND_OPTIONS = {
  candidates: { valued: ['--root', '--sessions-root', '--cwd', '--target', '--limit', ...AGENT_FLAGS], switches: ['--json', '--jsonl', '--help'] },
  prepare: {
    valued: ['--root', '--sessions-root', '--target', '--text', '--file', '--max-reference-bytes', ...AGENT_FLAGS],
    switches: ['--json', '--jsonl', '--redact-secrets', '--help'],
  },
} as const;

type Subcommand = keyof typeof SUBCOMMAND_OPTIONS;
const SUBCOMMANDS = Object.keys(SUBCOMMAND_OPTIONS) as Subcommand[];

/** What the binary understands without a subcommand. */
const TOP_LEVEL_OPTIONS = ['--help', '--version', ...TRANSPORT_FLAGS, '--sessions-root', ...AGENT_FLAGS];

function flagName(arg: string): string {
  const equals = arg.indexOf('=');
  return equals < 0 ? arg : arg.slice(0, equals);
}

/** A single-dash word that reads as a mistyped option (`-root`), not `-` (standard input) nor a number. */
function looksLikeShortOption(arg: string): boolean {
  return /^-[^-\d]/.test(arg);
}

/** The usage error of an option `subcommand` does not know: the nearest it knows, or the subcommand that has it. */
function unknownOption(subcommand: Subcommand, arg: string): UsageError {
  const name = flagName(arg);
  const spelled = name.startsWith('--') ? name : `-${name}`;
  const { valued, switches } = SUBCOMMAND_OPTIONS[subcommand];
  const own: readonly string[] = [...valued, ...switches];
  const other = SUBCOMMANDS.find((candidate) => candidate !== subcommand && (SUBCOMMAND_OPTIONS[candidate].valued as readonly string[]).includes(spelled));
  if (other !== undefined && !own.includes(spelled)) return new UsageError(`${subcommand} has no option ${name} (it is an option of ${other})`);
  return new UsageError(`unknown option ${name}${didYouMean(spelled, own) || ' (see --help)'}`);
}

/** Read the flags and positionals after a subcommand (`--flag V` or `--flag=V` for those that take a value). */
function readFlags(subcommand: Subcommand, args: readonly string[]): { values: Map<string, string>; switches: Set<string>; positionals: string[] } {
  const { valued, switches } = SUBCOMMAND_OPTIONS[subcommand];
  const values = new Map<string, string>();
  const seen = new Set<string>();
  const positionals: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') {
      positionals.push(...args.slice(index + 1));
      break;
    }
    if (arg === '-h') {
      seen.add('--help');
      continue;
    }
    if (!arg.startsWith('--')) {
      if (looksLikeShortOption(arg)) throw unknownOption(subcommand, arg);
      positionals.push(arg);
      continue;
    }
    const name = flagName(arg);
    if ((switches as readonly string[]).includes(name)) {
      if (name !== arg) throw new UsageError(`${name} takes no value`);
      seen.add(name);
      continue;
    }
    if (!(valued as readonly string[]).includes(name)) throw unknownOption(subcommand, arg);
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
  return { values, switches: seen, positionals };
}

/** A whole number flag (`--limit`, `--max-reference-bytes`): at least 1, at most 2^53 - 1. */
function positiveWholeNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const digits = value.trim();
  const number = /^[0-9]+$/.test(digits) ? Number(digits) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) {
    throw new UsageError(`${name} takes a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not ${JSON.stringify(value)}`);
  }
  return number;
}

function outputFormat(switches: ReadonlySet<string>): OutputFormat {
  if (switches.has('--json') && switches.has('--jsonl')) throw new UsageError('give either --json or --jsonl, not both');
  return switches.has('--jsonl') ? 'jsonl' : switches.has('--json') ? 'json' : 'text';
}

function sessionsRoot(values: ReadonlyMap<string, string>): string | undefined {
  if (values.has('--root') && values.has('--sessions-root')) throw new UsageError('give --root only once');
  return values.get('--root') ?? values.get('--sessions-root');
}

/** Parse the arguments after `node bin` (`process.argv.slice(2)`). */
export function parseInvocation(args: readonly string[]): Invocation {
  const [first, ...rest] = args;
  if (first === 'candidates') {
    const flags = readFlags('candidates', rest);
    if (flags.switches.has('--help')) return { kind: 'help' };
    if (flags.positionals.length > 1) {
      throw new UsageError(`candidates takes at most one QUERY, got ${flags.positionals.length}: ${flags.positionals.map((arg) => JSON.stringify(arg)).join(' ')}`);
    }
    return {
      kind: 'candidates',
      query: flags.positionals[0] ?? '',
      root: sessionsRoot(flags.values),
      cwd: flags.values.get('--cwd'),
      target: flags.values.get('--target'),
      limit: positiveWholeNumber('--limit', flags.values.get('--limit')),
      format: outputFormat(flags.switches),
      ...agentFlags(flags.values),
    };
  }
  if (first === 'prepare') {
    const flags = readFlags('prepare', rest);
    if (flags.switches.has('--help')) return { kind: 'help' };
    const stdin = flags.positionals.filter((arg) => arg === '-').length;
    if (flags.positionals.length !== stdin) {
      throw new UsageError(`unexpected argument ${JSON.stringify(flags.positionals.find((arg) => arg !== '-'))} (the message goes in --text, --file or standard input)`);
    }
    const forms = Number(flags.values.has('--text')) + Number(flags.values.has('--file')) + stdin;
    if (forms !== 1) throw new UsageError('prepare takes exactly one of --text TEXT, --file FILE or - (standard input)');
    const text = flags.values.get('--text');
    const file = flags.values.get('--file');
    return {
      kind: 'prepare',
      input: text !== undefined ? { from: 'text', text } : file !== undefined ? { from: 'file', path: file } : { from: 'stdin' },
      root: sessionsRoot(flags.values),
      target: flags.values.get('--target'),
      maxReferenceBytes: positiveWholeNumber('--max-reference-bytes', flags.values.get('--max-reference-bytes')),
      ...(flags.switches.has('--redact-secrets') ? { redactSecrets: true } : {}),
      format: outputFormat(flags.switches),
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
  if (first.startsWith('-')) {
    const name = flagName(first);
    const spelled = name.startsWith('--') ? name : `-${name}`;
    const topLevel = nearestWord(spelled, TOP_LEVEL_OPTIONS);
    // A server option without a transport (--help and --version were answered above).
    if (topLevel === name) return usage(`${name} is an option of the language server: add --stdio (or --node-ipc, --socket=PORT, --pipe=NAME), or put a subcommand first`);
    if (topLevel !== undefined) return usage(`unknown option ${name} (did you mean ${topLevel}?)`);
    const options = [...new Set(SUBCOMMANDS.flatMap((subcommand) => [...SUBCOMMAND_OPTIONS[subcommand].valued, ...SUBCOMMAND_OPTIONS[subcommand].switches]))];
    const option = nearestWord(spelled, options);
    if (option === undefined) return usage(`unknown option ${name} (see --help)`);
    const owners = SUBCOMMANDS.filter((subcommand) => [...SUBCOMMAND_OPTIONS[subcommand].valued, ...SUBCOMMAND_OPTIONS[subcommand].switches].some((known) => known === option));
    const where = `goes after a subcommand, as in dsh-session-ls ${owners[0]!} ${option} ...`;
    return usage(option === name ? `${name} ${where}` : `unknown option ${name} (did you mean ${option}? it ${where})`);
  }
  return usage(`unknown command ${JSON.stringify(first)}${didYouMean(first, SUBCOMMANDS) || ' (try --help)'}`);
}

function usage(message: string): never {
  throw new UsageError(message);
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
    ...Object.fromEntries(FOREIGN_AGENT_INFO.flatMap(({ homeSetting }) => (flags[homeSetting] === undefined ? [] : [[homeSetting, absolute(flags[homeSetting], cwd)]]))),
  };
}
