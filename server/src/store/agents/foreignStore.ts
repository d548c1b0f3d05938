import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { compareStoreOrder } from '../../resolver/storeOrder';
import { SessionReadError, type SessionStore, type SessionSurface, type StoredSessionSummary } from '../../resolver/sessionStore';
import { claudeSessionIdOfFile, claudeSessionInfo, claudeSurfaceEvents } from './claudeCode';
import { codexRolloutName, codexSessionInfo, codexSurfaceEvents, codexThreadNames } from './codex';
import { parseJsonl } from './records';

/** Largest transcript read whole (a bigger one is listed by name only, and not read). */
export const MAX_FOREIGN_FILE_BYTES = 64 * 1024 * 1024;

/** Another agent's store: read-only, listing and surfaces in the resolver's shapes. */
export interface ForeignSessionStore extends SessionStore {
  readonly agent: ForeignAgent;
  readonly home: string;
}

interface FileFacts {
  mtimeMs: number;
  size: number;
  summary: StoredSessionSummary | undefined;
}

/** One agent's format: where its session files are, and how one is read. */
interface AgentFormat {
  /** The session files under `home` (absolute paths). */
  files(home: string, signal?: AbortSignal): Promise<string[]>;
  /** Listing facts of a file (title before the index lookup), or undefined when it is no session. */
  summarize(file: string, text: string, mtimeMs: number): Omit<StoredSessionSummary, 'agent'> | undefined;
  surface(text: string): SessionSurface['events'];
}

async function listDir(dir: string): Promise<import('node:fs').Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

const claudeFormat: AgentFormat = {
  async files(home, signal) {
    const projects = path.join(home, 'projects');
    const files: string[] = [];
    for (const project of await listDir(projects)) {
      signal?.throwIfAborted();
      if (!project.isDirectory()) continue;
      for (const entry of await listDir(path.join(projects, project.name))) {
        if (entry.isFile() && entry.name.endsWith('.jsonl')) files.push(path.join(projects, project.name, entry.name));
      }
    }
    return files;
  },
  summarize(file, text, mtimeMs) {
    const records = parseJsonl(text);
    if (records.length === 0) return undefined;
    const info = claudeSessionInfo(records, claudeSessionIdOfFile(file));
    return { id: info.id, ...(info.cwd === undefined ? {} : { cwd: info.cwd }), createdAt: info.createdAt ?? mtimeMs, ...(info.title === undefined ? {} : { title: info.title }) };
  },
  surface: (text) => claudeSurfaceEvents(parseJsonl(text)),
};

const codexFormat: AgentFormat = {
  async files(home, signal) {
    // sessions/YYYY/MM/DD/rollout-*.jsonl; compressed `.jsonl.zst` rollouts are not read (yet).
    const files: string[] = [];
    const walk = async (dir: string, depth: number): Promise<void> => {
      signal?.throwIfAborted();
      for (const entry of await listDir(dir)) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory() && depth < 3) await walk(full, depth + 1);
        else if (entry.isFile() && depth === 3 && codexRolloutName(entry.name) !== undefined) files.push(full);
      }
    };
    await walk(path.join(home, 'sessions'), 0);
    return files;
  },
  summarize(file, text, mtimeMs) {
    const records = parseJsonl(text);
    if (records.length === 0) return undefined;
    const info = codexSessionInfo(records, file);
    if (info === undefined) return undefined;
    return { id: info.id, ...(info.cwd === undefined ? {} : { cwd: info.cwd }), createdAt: info.createdAt ?? mtimeMs, ...(info.firstPrompt === undefined ? {} : { title: info.firstPrompt }) };
  },
  surface: (text) => codexSurfaceEvents(parseJsonl(text)),
};

/**
 * Open another agent's store under `home`. Every listing re-reads the folder and the file sizes and
 * times, and re-reads only the files that changed (so renames and new turns show up on the next
 * call); while nothing changed it hands out the same frozen array, which keeps the candidate index.
 */
export function openForeignStore(agent: ForeignAgent, home: string, log?: (message: string) => void): ForeignSessionStore {
  const format = agent === 'claude-code' ? claudeFormat : codexFormat;
  const facts = new Map<string, FileFacts>();
  const pathById = new Map<string, string>();
  let listing: readonly StoredSessionSummary[] = Object.freeze([]);
  let listingKey = '';
  const reported = new Set<string>();

  async function threadNames(): Promise<Map<string, string>> {
    if (agent !== 'codex') return new Map();
    try {
      return codexThreadNames(await readFile(path.join(home, 'session_index.jsonl'), 'utf8'));
    } catch {
      return new Map(); // No index (never renamed, or removed): titles fall back to the first prompt.
    }
  }

  async function listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    const files = await format.files(home, signal);
    const names = await threadNames();
    const seen = new Set<string>();
    const keyParts: string[] = [];
    for (const file of files) {
      signal?.throwIfAborted();
      seen.add(file);
      let info;
      try {
        info = await stat(file);
      } catch {
        continue;
      }
      let known = facts.get(file);
      if (known === undefined || known.mtimeMs !== info.mtimeMs || known.size !== info.size) {
        let summary: StoredSessionSummary | undefined;
        if (info.size <= MAX_FOREIGN_FILE_BYTES) {
          try {
            const base = format.summarize(file, await readFile(file, 'utf8'), info.mtimeMs);
            summary = base === undefined ? undefined : { ...base, agent };
          } catch {
            summary = undefined;
          }
        }
        if (summary === undefined && !reported.has(file)) {
          reported.add(file);
          log?.(`${agent} store: skipped ${file}: no session records`);
        }
        known = { mtimeMs: info.mtimeMs, size: info.size, summary };
        facts.set(file, known);
      }
      keyParts.push(`${file}\u0000${known.mtimeMs}\u0000${known.size}`);
    }
    for (const file of facts.keys()) if (!seen.has(file)) facts.delete(file);
    const key = keyParts.join('\u0001') + '\u0002' + JSON.stringify([...names]);
    if (key === listingKey) return listing;
    const summaries: StoredSessionSummary[] = [];
    pathById.clear();
    for (const [file, { summary }] of facts) {
      if (summary === undefined || pathById.has(summary.id)) continue;
      pathById.set(summary.id, file);
      const name = names.get(summary.id);
      summaries.push(Object.freeze(name === undefined ? summary : { ...summary, title: name }));
    }
    summaries.sort(compareStoreOrder);
    listing = Object.freeze(summaries);
    listingKey = key;
    return listing;
  }

  async function readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    if (!pathById.has(sessionId)) await listSessions(signal);
    const file = pathById.get(sessionId);
    if (file === undefined) throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
    let text: string;
    try {
      const info = await stat(file);
      if (info.size > MAX_FOREIGN_FILE_BYTES) throw new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
      text = await readFile(file, { encoding: 'utf8', signal });
    } catch (error) {
      if (error instanceof SessionReadError) throw error;
      signal?.throwIfAborted();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`, { cause: error });
      throw new SessionReadError('io', `cannot read ${agent} session ${JSON.stringify(sessionId)}: ${code ?? String(error)}`, { cause: error });
    }
    const summary = listing.find((entry) => entry.id === sessionId);
    const events = format.surface(text);
    const records = parseJsonl(text);
    const last = records.length === 0 ? null : records[records.length - 1]!.line;
    return {
      header: { id: sessionId, ...(summary?.cwd === undefined ? {} : { cwd: summary.cwd }), createdAt: summary?.createdAt ?? 0, agent },
      capturedThroughSeq: last,
      events,
    };
  }

  return { agent, home, listSessions, readSurface };
}
