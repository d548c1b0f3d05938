import os from 'node:os';
import path from 'node:path';
import {
  AGENTS,
  AGENT_HOME_SETTINGS,
  FOREIGN_AGENT_INFO,
  type AgentHomeSetting,
  type AgentHomes,
  type AgentName,
  type ForeignAgentInfo,
  DEFAULT_SESSION_REFERENCE_CONFIG,
  SESSION_REFERENCE_CONFIG_KEYS,
  SETTINGS_SECTION,
  SessionReferenceError,
  resolveSessionReferenceConfig,
} from '@dsh-session-ls/shared';
import { expandHome, workingDirectory } from '../store/defaultRoot';
import { FILE_MENTIONS_ORDERS, type FileMentionsOrder, type SessionSettings } from '../features/services';

/** The keys of `initializationOptions` and of the `dshSessions` section (lsp-contract.md, Settings). */
export const SETTING_KEYS = ['sessionsRoot', 'targetSessionId', ...SESSION_REFERENCE_CONFIG_KEYS, 'agents', ...AGENT_HOME_SETTINGS, 'fileMentions', 'redactSecrets'] as const;

/** One settings key. */
export type SettingKey = (typeof SETTING_KEYS)[number];

/** The settings the server works with, every key resolved (declared with the services the features use). */
export type { SessionSettings } from '../features/services';

/** The default agents: dsh alone, so nothing changes unless another agent is asked for. */
export const DEFAULT_AGENTS: readonly AgentName[] = Object.freeze(['dsh']);

/** Each foreign agent's default home, by its setting: its environment variable's folder, else `~/<its folder>`. */
export function defaultAgentHomes(env: NodeJS.ProcessEnv): AgentHomes {
  const homes = {} as AgentHomes;
  for (const { homeSetting, homeEnv, homeEnvFolder, homeFolder } of FOREIGN_AGENT_INFO as readonly ForeignAgentInfo[]) {
    const dir = env[homeEnv];
    homes[homeSetting as AgentHomeSetting] =
      dir !== undefined && dir.trim() !== '' ? path.resolve(workingDirectory(env), expandHome(dir), homeEnvFolder ?? '') : path.join(os.homedir(), homeFolder);
  }
  return homes;
}

/** Whether `key` names a foreign agent's home. */
function isAgentHomeSetting(key: string): key is AgentHomeSetting {
  return (AGENT_HOME_SETTINGS as readonly string[]).includes(key);
}

/** The default place of file mentions in an `@` list: after the sessions (a path-like token lists them first). */
export const DEFAULT_FILE_MENTIONS: FileMentionsOrder = 'after';

/** `agents` from a setting: an array (or, from the command line, a comma-separated string) of known names, without repeats. */
export function parseAgents(value: unknown): AgentName[] {
  const list = typeof value === 'string' ? value.split(',').map((part) => part.trim()).filter((part) => part !== '') : value;
  const names = AGENTS.map((agent) => JSON.stringify(agent));
  const problem = `agents must be a non-empty array of ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
  if (!Array.isArray(list) || list.length === 0) throw invalidConfig(problem);
  const agents: AgentName[] = [];
  for (const name of list as unknown[]) {
    if (typeof name !== 'string' || !(AGENTS as readonly string[]).includes(name)) throw invalidConfig(problem);
    if (!agents.includes(name as AgentName)) agents.push(name as AgentName);
  }
  return agents;
}

/** The places a setting can come from, besides the environment and the defaults. */
export interface SettingsSources {
  /** The pulled (or pushed) `dshSessions` section. */
  section?: unknown;
  /** The `initializationOptions` of `initialize`. */
  initializationOptions?: unknown;
  /** Values from the command line (`--sessions-root`, or the CLI's flags); paths already absolute. */
  commandLine?: Partial<Record<SettingKey, unknown>>;
  /** The environment (`DSH_HOME`). */
  env: NodeJS.ProcessEnv;
  /** The folder a relative `sessionsRoot` is resolved against (the first workspace folder). */
  baseDir?: string;
  /** Where sessions live when nothing names a root: `$DSH_HOME/sessions`, else `~/.dsh/sessions`. */
  defaultSessionsRoot: (env: NodeJS.ProcessEnv) => string;
}

/** An invalid setting: where it came from, and the INVALID_CONFIG error it raises. */
export interface SettingProblem {
  /** The key, or undefined when a whole settings object is not an object. */
  key: SettingKey | undefined;
  /** e.g. `dshSessions.maxReferences` or `initializationOptions.sessionsRoot`. */
  origin: string;
  error: SessionReferenceError;
  /** The value the key keeps instead. */
  kept: unknown;
}

type Layer = { origin: string; values: Readonly<Record<string, unknown>> };

// The contract's order: the root is fixed by the launching host first ("Where sessions come from"); every
// other key lets the live settings section win over initializationOptions ("Settings", per key).
const CLIENT_LAYER_ORDER: Readonly<Record<SettingKey, ReadonlyArray<'section' | 'initializationOptions'>>> = {
  sessionsRoot: ['initializationOptions', 'section'],
  targetSessionId: ['section', 'initializationOptions'],
  maxReferences: ['section', 'initializationOptions'],
  candidateLimit: ['section', 'initializationOptions'],
  maxReferenceBytes: ['section', 'initializationOptions'],
  // Which stores are read is, like the root, the launching host's first.
  agents: ['initializationOptions', 'section'],
  ...(Object.fromEntries(AGENT_HOME_SETTINGS.map((key) => [key, ['initializationOptions', 'section']])) as Record<AgentHomeSetting, ['initializationOptions', 'section']>),
  // How completion looks is the user's to change while the server runs, as the limits are.
  fileMentions: ['section', 'initializationOptions'],
  redactSecrets: ['section', 'initializationOptions'],
};

const ORIGIN_NAMES = { section: SETTINGS_SECTION, initializationOptions: 'initializationOptions' } as const;

function invalidConfig(message: string): SessionReferenceError {
  return new SessionReferenceError('SESSION_REFERENCE_INVALID_CONFIG', message);
}

/** A sessions root made absolute: `~` expanded, a relative path resolved against `baseDir`. */
export function absoluteSessionsRoot(value: string, baseDir?: string): string {
  return path.resolve(baseDir ?? workingDirectory(), expandHome(value));
}

// `null`, `undefined` and a blank string are "unset": editors show string settings as "" by default.
function isUnset(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** Validate one set value; returns the value to use, or throws INVALID_CONFIG. */
function validateSetting(key: SettingKey, value: unknown, baseDir: string | undefined): unknown {
  if (isAgentHomeSetting(key)) {
    if (typeof value !== 'string') throw invalidConfig(`${key} must be a string`);
    return absoluteSessionsRoot(value, baseDir);
  }
  switch (key) {
    case 'sessionsRoot':
      if (typeof value !== 'string') throw invalidConfig('sessionsRoot must be a string');
      return absoluteSessionsRoot(value, baseDir);
    case 'targetSessionId':
      if (typeof value !== 'string') throw invalidConfig('targetSessionId must be a string');
      return value;
    case 'agents':
      return parseAgents(value);
    case 'fileMentions':
      if (typeof value !== 'string' || !(FILE_MENTIONS_ORDERS as readonly string[]).includes(value)) {
        throw invalidConfig(`fileMentions must be "after", "before" or "off", not ${describeValue(value)}`);
      }
      return value;
    case 'redactSecrets':
      if (typeof value !== 'boolean') throw invalidConfig(`redactSecrets must be true or false, not ${describeValue(value)}`);
      return value;
    default:
      // The shared validation, for dsh's own messages.
      return resolveSessionReferenceConfig({ [key]: value })[key];
  }
}

/** A bad value as an error message shows it: JSON, cut short. */
function describeValue(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function asRecord(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The layers that may set `key`, in precedence order: the client's (per the key's order), then the command line. */
function layersFor(sources: SettingsSources, key: SettingKey): Layer[] {
  const layers: Layer[] = [];
  for (const name of CLIENT_LAYER_ORDER[key]) {
    const values = asRecord(sources[name]);
    if (values !== undefined) layers.push({ origin: ORIGIN_NAMES[name], values });
  }
  if (sources.commandLine !== undefined) layers.push({ origin: 'command line', values: sources.commandLine });
  return layers;
}

/** Every key's value when no layer sets it. */
function fallbackSettings(sources: SettingsSources): Record<SettingKey, unknown> {
  return {
    sessionsRoot: sources.defaultSessionsRoot(sources.env),
    targetSessionId: undefined,
    ...DEFAULT_SESSION_REFERENCE_CONFIG,
    agents: DEFAULT_AGENTS,
    ...defaultAgentHomes(sources.env),
    fileMentions: DEFAULT_FILE_MENTIONS,
    redactSecrets: false,
  };
}

/** One key's value in resolved settings. */
function settingValue(settings: SessionSettings, key: SettingKey): unknown {
  return key === 'sessionsRoot' || key === 'targetSessionId' || key === 'agents' || isAgentHomeSetting(key) || key === 'fileMentions' || key === 'redactSecrets'
    ? settings[key]
    : settings.config[key];
}

/** The settings of every key's resolved value. */
function settingsOf(next: Record<string, unknown>): SessionSettings {
  return {
    sessionsRoot: next.sessionsRoot as string,
    ...(next.targetSessionId === undefined ? {} : { targetSessionId: next.targetSessionId as string }),
    config: {
      maxReferences: next.maxReferences as number,
      candidateLimit: next.candidateLimit as number,
      maxReferenceBytes: next.maxReferenceBytes as number,
    },
    agents: next.agents as readonly AgentName[],
    ...(Object.fromEntries(AGENT_HOME_SETTINGS.map((key) => [key, next[key] as string])) as AgentHomes),
    fileMentions: next.fileMentions as FileMentionsOrder,
    redactSecrets: next.redactSecrets as boolean,
  };
}

/**
 * The effective settings, kept across updates: each key takes the first set value in precedence order;
 * an invalid value is reported (once per origin and value) and the key keeps its last valid value.
 */
export class SettingsState {
  private current: SessionSettings | undefined;
  // Per origin, the invalid value last reported: a value is reported once, again only after it changed.
  private readonly reported = new Map<string, string>();

  /** The settings as last resolved (throws before the first `update`). */
  get settings(): SessionSettings {
    if (this.current === undefined) throw new Error('settings are not resolved yet');
    return this.current;
  }

  /** Resolve the settings from `sources`; returns the problems not reported before. */
  update(sources: SettingsSources): SettingProblem[] {
    const problems: SettingProblem[] = [];
    const fallback = fallbackSettings(sources);
    const previous = this.current;
    const next: Record<string, unknown> = {};
    for (const key of SETTING_KEYS) {
      // Once settings exist, an invalid value keeps the key's last valid value; the very first
      // time, the last valid value is whatever the lower layers give.
      const kept = previous === undefined ? undefined : { value: settingValue(previous, key) };
      const { value, invalid } = this.resolveKey(key, sources, fallback[key], kept);
      next[key] = value;
      for (const { origin, raw, error } of invalid) {
        if (!this.noteInvalid(origin, raw)) continue;
        problems.push({ key, origin, error, kept: value });
      }
    }
    problems.push(...this.checkSettingObjects(sources));
    this.current = settingsOf(next);
    return problems;
  }

  /**
   * One key: the first set and valid value of its layers, else `fallback`. An invalid value is returned
   * among `invalid`; with `kept` (settings exist), it stops the search and the key keeps `kept.value`.
   */
  private resolveKey(
    key: SettingKey,
    sources: SettingsSources,
    fallback: unknown,
    kept: { value: unknown } | undefined,
  ): { value: unknown; invalid: Array<{ origin: string; raw: unknown; error: SessionReferenceError }> } {
    const invalid: Array<{ origin: string; raw: unknown; error: SessionReferenceError }> = [];
    for (const layer of layersFor(sources, key)) {
      const raw = layer.values[key];
      const origin = `${layer.origin}.${key}`;
      if (isUnset(raw)) {
        this.reported.delete(origin);
        continue;
      }
      try {
        const value = validateSetting(key, raw, sources.baseDir);
        this.reported.delete(origin);
        return { value, invalid };
      } catch (error) {
        invalid.push({ origin, raw, error: error instanceof SessionReferenceError ? error : invalidConfig(String(error)) });
        if (kept !== undefined) return { value: kept.value, invalid };
      }
    }
    return { value: fallback, invalid };
  }

  /** The problems of a `dshSessions` section or `initializationOptions` that is set but not an object. */
  private checkSettingObjects(sources: SettingsSources): SettingProblem[] {
    const problems: SettingProblem[] = [];
    for (const name of ['section', 'initializationOptions'] as const) {
      const value = sources[name];
      if (isUnset(value) || asRecord(value) !== undefined) {
        this.reported.delete(ORIGIN_NAMES[name]);
      } else if (this.noteInvalid(ORIGIN_NAMES[name], value)) {
        problems.push({
          key: undefined,
          origin: ORIGIN_NAMES[name],
          error: invalidConfig(`${ORIGIN_NAMES[name]} must be an object`),
          kept: undefined,
        });
      }
    }
    return problems;
  }

  /** Remember an invalid value of `origin`; true when it was not the one reported last. */
  private noteInvalid(origin: string, value: unknown): boolean {
    let serialized: string;
    try {
      serialized = JSON.stringify(value) ?? String(value);
    } catch {
      serialized = String(value);
    }
    if (this.reported.get(origin) === serialized) return false;
    this.reported.set(origin, serialized);
    return true;
  }
}

/** The human line for a setting problem, naming the error code first (for `window/showMessage` and the CLI). */
export function describeSettingProblem(problem: SettingProblem): string {
  const kept = problem.kept === undefined ? '' : `; keeping ${JSON.stringify(problem.kept)}`;
  return `${problem.error.code}: invalid setting ${problem.origin}: ${problem.error.message}${kept}`;
}
