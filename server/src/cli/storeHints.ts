import { readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { FOREIGN_AGENTS, FOREIGN_AGENT_INFO, agentHomeSetting, displaySafeText, foreignAgentInfo, type AgentHomes, type AgentName, type ForeignAgent } from '@dsh-session-ls/shared';
import { formatOf } from '../store/formats/registry';
import { isDatabaseAdapter } from '../store/formats/database';
import { sqliteMissingMessage } from '../store/engine/databaseStore';
import { loadSqlite } from '../store/engine/databaseSnapshot';
import { TRANSCRIPT_NAMES } from '../store/layout';

/**
 * What the CLI says about a store that gave no sessions: where it looked, why that place may be the
 * wrong one, and the flags that point at the right one. It only looks (a few folder listings, only
 * when a store is empty); it never writes.
 */

/** The folders the stores of one run read: the dsh root, and each other agent's home by its setting. */
export interface StoreLocations extends AgentHomes {
  agents: readonly AgentName[];
  sessionsRoot: string;
}

/** What an agent's store is called in a sentence. */
export const AGENT_TITLES: Readonly<Record<AgentName, string>> = {
  dsh: 'dsh',
  ...(Object.fromEntries(FOREIGN_AGENT_INFO.map((info) => [info.name, info.title])) as Record<ForeignAgent, string>),
};

/** Folder listings one probe may make at most: an answer for a home, not a walk of a disk. */
const MAX_LISTINGS = 200;

/** A path as a shell argument: bare when it is plain, else in single quotes. */
export function shellWord(text: string): string {
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A path for a message line: display-safe (a control character in a folder name must not reach the terminal). */
function shown(folder: string): string {
  return displaySafeText(folder);
}

function entriesOf(folder: string): Dirent[] | undefined {
  try {
    return readdirSync(folder, { withFileTypes: true });
  } catch {
    return undefined;
  }
}

function isDirectory(folder: string): boolean {
  try {
    return statSync(folder).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `folder` holds files of `matches` exactly `depth` folders down (a bounded walk). */
function holdsFilesAtDepth(folder: string, depth: number, matches: (name: string) => boolean): boolean {
  let level = [folder];
  let listings = 0;
  for (let current = 0; current <= depth; current++) {
    const next: string[] = [];
    for (const dir of level) {
      if (listings++ >= MAX_LISTINGS) return false;
      const entries = entriesOf(dir);
      if (entries === undefined) continue;
      if (current === depth) {
        if (entries.some((entry) => !entry.isDirectory() && matches(entry.name))) return true;
      } else {
        // Newest-looking names first (dated folders), so a big home is answered early.
        next.push(...entries.filter((entry) => entry.isDirectory()).map((entry) => path.join(dir, entry.name)).sort().reverse());
      }
    }
    level = next;
  }
  return false;
}

/** Whether `home` is laid out as `agent`'s home: session files where that agent writes them (or its title index, if it keeps one). */
export function looksLikeAgentHome(agent: ForeignAgent, home: string): boolean {
  const format = formatOf(agent);
  if (isDatabaseAdapter(format)) return entriesOf(home)?.some((entry) => entry.isFile() && entry.name === format.file) === true;
  if (holdsFilesAtDepth(path.join(home, format.base), format.leafDepth, (name) => format.isSessionFile(name))) return true;
  const indexes = [format.titleIndex?.file, format.projectIndex?.file];
  return indexes.some((index) => index !== undefined && entriesOf(home)?.some((entry) => entry.isFile() && entry.name === index) === true);
}

/** Whether `root` is laid out as a dsh sessions root: `<project>/<session>/session.jsonl[.zstd]`. */
export function looksLikeDshRoot(root: string): boolean {
  const names = new Set(Object.values(TRANSCRIPT_NAMES));
  return holdsFilesAtDepth(root, 2, (name) => names.has(name));
}

/** Why a store that gave no sessions gave none, in a few words (for "No sessions found in …"), if there is more to say than that it is empty. */
export interface EmptyStore {
  agent: AgentName;
  folder: string;
  /** e.g. `it has no projects folder`. */
  note?: string;
  /** One line of advice, with the flags to use. */
  hint?: string;
}

/** The agents flag that adds `agent` to `agents` (dsh kept first when it is there). */
function agentsWith(agents: readonly AgentName[], agent: AgentName): string {
  return [...agents.filter((name) => name !== agent), agent].join(',');
}

/** What to say about the dsh root when it lists nothing. */
function emptyDshRoot(root: string): EmptyStore {
  const found: EmptyStore = { agent: 'dsh', folder: root };
  if (!isDirectory(root)) return found;
  for (const agent of FOREIGN_AGENTS) {
    if (!looksLikeAgentHome(agent, root)) continue;
    const title = AGENT_TITLES[agent];
    found.note = `it looks like ${title}'s home`;
    found.hint =
      `${shown(root)} looks like ${title}'s home, not a dsh sessions root: to read its sessions, pass --agents ${agent} ${foreignAgentInfo(agent).homeFlag} ${shellWord(shown(root))} ` +
      `(or --agents dsh,${agent} to read them beside dsh's)`;
    return found;
  }
  const inner = path.join(root, 'sessions');
  if (looksLikeDshRoot(inner)) {
    found.note = 'its sessions folder holds the sessions';
    found.hint = `${shown(root)} looks like a dsh home: did you mean --root ${shellWord(shown(inner))}?`;
  }
  return found;
}

/** What to say about another agent's home when it lists nothing: a home one level too high or too low names the right one. */
function emptyAgentHome(agent: ForeignAgent, home: string): EmptyStore {
  const found: EmptyStore = { agent, folder: home };
  const format = formatOf(agent);
  const { homeFlag, homeFolder } = foreignAgentInfo(agent);
  if (!isDirectory(home)) {
    found.note = 'it does not exist';
    return found;
  }
  const title = AGENT_TITLES[agent];
  // Too high: the folder holding the home (the user's home folder, or any folder around it).
  const candidates = [path.join(home, homeFolder)];
  if (isDatabaseAdapter(format)) {
    if (!looksLikeAgentHome(agent, home)) found.note = `it has no ${format.file}`;
    else if (loadSqlite() === undefined) found.note = sqliteMissingMessage(agent);
  } else {
    if (!isDirectory(path.join(home, format.base))) found.note = `it has no ${format.base} folder`;
    // Too low: the base folder itself, or a folder inside it.
    if (path.basename(home) === format.base) candidates.push(path.dirname(home));
  }
  const right = candidates.find((candidate) => looksLikeAgentHome(agent, candidate));
  if (right !== undefined) found.hint = `${shown(home)} is not ${title}'s home but ${shown(right)} is: did you mean ${homeFlag} ${shellWord(shown(right))}?`;
  return found;
}

/** What to say about each enabled store that gave no sessions (`counts`: the sessions each agent listed). */
export function describeEmptyStores(locations: StoreLocations, counts: ReadonlyMap<AgentName, number>): EmptyStore[] {
  const empty: EmptyStore[] = [];
  for (const agent of locations.agents) {
    if ((counts.get(agent) ?? 0) > 0) continue;
    if (agent === 'dsh') empty.push(emptyDshRoot(locations.sessionsRoot));
    else empty.push(emptyAgentHome(agent, locations[agentHomeSetting(agent)]));
  }
  return empty;
}

/** Where a session of `agent` is looked for, in words; or why it is not looked for at all (its agent is off). */
export function searchedStore(agent: AgentName, locations: StoreLocations): string {
  if (!locations.agents.includes(agent)) {
    return `${agent} is not among --agents ${locations.agents.join(',')}: add it, as in --agents ${agentsWith(locations.agents, agent)}`;
  }
  if (agent === 'dsh') return `searched the dsh sessions root ${shown(locations.sessionsRoot)}`;
  return `searched the ${AGENT_TITLES[agent]} home ${shown(locations[agentHomeSetting(agent)])}`;
}

/** The `--agents` value that adds `added` to the default (dsh first). */
export function agentsFlagFor(added: readonly ForeignAgent[]): string {
  return `--agents ${['dsh', ...added].join(',')}`;
}
