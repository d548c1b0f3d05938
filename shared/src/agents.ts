/**
 * The agents whose sessions can be mentioned, as the contract names them: each agent's id, its
 * title, its mention scheme, the setting and command-line flag of its home, and where that home
 * is by default. Settings, the command line, the features and the extension iterate over this
 * table and never name an agent themselves; the server's format registry pairs each with its
 * reader. dsh itself is listed first and has no home of its own (its root is `sessionsRoot`).
 */

/** What the contract says about one agent other than dsh. */
export interface ForeignAgentInfo {
  /** The id used in settings, commands and answers (`agents`, a reference's `agent`). */
  readonly name: string;
  /** How people call it. */
  readonly title: string;
  /** Its mention scheme, with the colon: the same shape and payload as `dsh-session:`. */
  readonly scheme: string;
  /** The setting (and CLI option, headless client option) naming its home. */
  readonly homeSetting: string;
  /** The command-line flag naming its home. */
  readonly homeFlag: string;
  /** The environment variable that moves its home (then `~/<homeFolder>`). */
  readonly homeEnv: string;
  /** The home's folder under `homeEnv`'s directory, when that variable names a parent (as `XDG_DATA_HOME` and `GEMINI_CLI_HOME` do); else the variable names the home. */
  readonly homeEnvFolder?: string;
  /** Its home's folder (a relative path) under the user's home directory. */
  readonly homeFolder: string;
  /** What of its home holds its sessions: the folder of the session folders, or (`sessionsDatabase`) one database file. */
  readonly sessionsFolder: string;
  /** Whether `sessionsFolder` names one database file rather than a folder. */
  readonly sessionsDatabase?: boolean;
}

/** Every agent other than dsh, in the order they are listed and hinted at. */
export const FOREIGN_AGENT_INFO = [
  {
    name: 'claude-code',
    title: 'Claude Code',
    scheme: 'claude-session:',
    homeSetting: 'claudeCodeHome',
    homeFlag: '--claude-code-home',
    homeEnv: 'CLAUDE_CONFIG_DIR',
    homeFolder: '.claude',
    sessionsFolder: 'projects',
  },
  {
    name: 'codex',
    title: 'Codex',
    scheme: 'codex-session:',
    homeSetting: 'codexHome',
    homeFlag: '--codex-home',
    homeEnv: 'CODEX_HOME',
    homeFolder: '.codex',
    sessionsFolder: 'sessions',
  },
  {
    name: 'qwen-code',
    title: 'Qwen Code',
    scheme: 'qwen-session:',
    homeSetting: 'qwenCodeHome',
    homeFlag: '--qwen-code-home',
    homeEnv: 'QWEN_HOME',
    homeFolder: '.qwen',
    sessionsFolder: 'projects',
  },
  {
    name: 'gemini',
    title: 'Gemini CLI',
    scheme: 'gemini-session:',
    homeSetting: 'geminiHome',
    homeFlag: '--gemini-home',
    homeEnv: 'GEMINI_CLI_HOME',
    homeEnvFolder: '.gemini',
    homeFolder: '.gemini',
    sessionsFolder: 'tmp',
  },
  {
    name: 'opencode',
    title: 'opencode',
    scheme: 'opencode-session:',
    homeSetting: 'opencodeHome',
    homeFlag: '--opencode-home',
    homeEnv: 'XDG_DATA_HOME',
    homeEnvFolder: 'opencode',
    homeFolder: '.local/share/opencode',
    sessionsFolder: 'opencode.db',
    sessionsDatabase: true,
  },
] as const satisfies readonly ForeignAgentInfo[];

/**
 * Another coding agent whose sessions can be mentioned read-only (our extension, not dsh's): dsh's own
 * sessions carry no `agent` anywhere, so everything dsh sees stays byte for byte as it was.
 */
export type ForeignAgent = (typeof FOREIGN_AGENT_INFO)[number]['name'];

/** The setting naming a foreign agent's home. */
export type AgentHomeSetting = (typeof FOREIGN_AGENT_INFO)[number]['homeSetting'];

/** Each foreign agent's home, by its setting. */
export type AgentHomes = { [K in AgentHomeSetting]: string };

/** The foreign agents' ids, in the table's order. */
export const FOREIGN_AGENTS: readonly ForeignAgent[] = FOREIGN_AGENT_INFO.map((info) => info.name);

/** Every agent a store can serve: dsh itself and the foreign ones. */
export const AGENTS = ['dsh', ...FOREIGN_AGENTS] as const;

/** One of `AGENTS`. */
export type AgentName = 'dsh' | ForeignAgent;

/** The settings naming the foreign agents' homes, in the table's order. */
export const AGENT_HOME_SETTINGS: readonly AgentHomeSetting[] = FOREIGN_AGENT_INFO.map((info) => info.homeSetting);

/** What the contract says about `agent`. */
export function foreignAgentInfo(agent: ForeignAgent): ForeignAgentInfo {
  return FOREIGN_AGENT_INFO.find((info) => info.name === agent)!;
}

/** The setting naming `agent`'s home. */
export function agentHomeSetting(agent: ForeignAgent): AgentHomeSetting {
  return FOREIGN_AGENT_INFO.find((info) => info.name === agent)!.homeSetting;
}

/** Whether `value` is a foreign agent's id. */
export function isForeignAgent(value: unknown): value is ForeignAgent {
  return FOREIGN_AGENT_INFO.some((info) => info.name === value);
}

/** `"a" or "b"`: the foreign agents' ids, for messages. */
export function foreignAgentChoices(): string {
  return FOREIGN_AGENTS.map((agent) => JSON.stringify(agent)).join(' or ');
}
