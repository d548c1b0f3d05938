import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { raceWithSignal } from '../../resolver';
import { compareStoreOrder } from '../../resolver/storeOrder';
import { SessionReadError, type SessionStore, type SessionSurface, type StoredSessionSummary } from '../../resolver/sessionStore';
import type { AgentSessionLog, SessionEventRecord } from '../../resolver/sessionStore';
import { claudeLogEvents, claudeSessionIdOfFile, claudeSessionInfo, claudeSurfaceEvents } from './claudeCode';
import { codexLogEvents, codexRolloutName, codexSessionInfo, codexSurfaceEvents, codexThreadNames } from './codex';
import { PlaintextTooLarge, decodeZstdFile } from './compressed';
import { parseJsonl, type JsonlRecord } from './records';

/** Largest transcript read whole (a bigger one is listed by name only, and not read). */
export const MAX_FOREIGN_FILE_BYTES = 64 * 1024 * 1024;

/** Another agent's store: read-only, listing and surfaces in the resolver's shapes. */
export interface ForeignSessionStore extends SessionStore {
  readonly agent: ForeignAgent;
  readonly home: string;
  /** The whole session as the user saw it (for a transcript); rejects as `readSurface` does. */
  readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog>;
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
  surface(records: readonly JsonlRecord[]): SessionSurface['events'];
  /** The whole session as the user saw it. */
  log(records: readonly JsonlRecord[]): SessionEventRecord[];
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
  surface: claudeSurfaceEvents,
  log: claudeLogEvents,
};

const codexFormat: AgentFormat = {
  async files(home, signal) {
    // sessions/YYYY/MM/DD/rollout-*.jsonl, and `.jsonl.zst` (idle rollouts recent versions rewrite).
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
  surface: codexSurfaceEvents,
  log: codexLogEvents,
};

/** A session file's text; a `.zst` one decoded whole (`PlaintextTooLarge` past the read limit). */
async function readSessionText(file: string, signal?: AbortSignal): Promise<string> {
  if (!file.endsWith('.zst')) return readFile(file, { encoding: 'utf8', ...(signal === undefined ? {} : { signal }) });
  return decodeZstdFile(await readFile(file, signal === undefined ? {} : { signal }), MAX_FOREIGN_FILE_BYTES);
}

/** How fresh a listing is kept. */
export interface ForeignStoreOptions {
  /** Diagnostic logging (files skipped, refreshes that failed). */
  log?: (message: string) => void;
  /** A listing younger than this is answered as is, without touching the disk (default {@link FOREIGN_LISTING_FRESH_MS}). */
  freshMs?: number;
  /** Epoch milliseconds (tests inject a clock). */
  now?: () => number;
}

/** Default freshness of a foreign listing: one re-scan per second at most, however fast completion asks. */
export const FOREIGN_LISTING_FRESH_MS = 1000;

/**
 * Open another agent's store under `home`. A scan reads the folders and the file sizes and times,
 * and re-reads only the files that changed; while nothing changed it hands out the same frozen
 * array, which keeps the candidate index. Listings are cached: a listing younger than `freshMs` is
 * answered from memory; an older one is still answered at once while ONE background scan refreshes
 * it (so completion never waits on a walk of the agent's home after the first); only the first
 * listing waits for its scan. Changes (renames, new turns, new or deleted sessions) therefore show up
 * within `freshMs` plus one scan of being asked for. Nothing runs while nobody asks.
 */
export function openForeignStore(agent: ForeignAgent, home: string, options: ForeignStoreOptions | ((message: string) => void) = {}): ForeignSessionStore {
  const { log, freshMs = FOREIGN_LISTING_FRESH_MS, now = Date.now } = typeof options === 'function' ? { log: options } : options;
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

  /** When the cached listing was scanned (undefined: never). */
  let scannedAt: number | undefined;
  let scanning: Promise<readonly StoredSessionSummary[]> | undefined;

  /** One scan at a time, shared by every caller and not tied to any caller's signal. */
  function rescan(): Promise<readonly StoredSessionSummary[]> {
    scanning ??= (async () => {
      const startedAt = now();
      try {
        const result = await scan();
        scannedAt = startedAt;
        return result;
      } finally {
        scanning = undefined;
      }
    })();
    return scanning;
  }

  function isFresh(): boolean {
    return scannedAt !== undefined && now() - scannedAt < freshMs;
  }

  async function listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    signal?.throwIfAborted();
    if (scannedAt === undefined) return raceWithSignal(rescan(), signal);
    if (!isFresh()) {
      // Stale: answer what we have; one background scan brings the next answer up to date.
      rescan().catch((error: unknown) => log?.(`${agent} store: refreshing the listing failed: ${String(error)}`));
    }
    return listing;
  }

  async function scan(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
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
            const base = format.summarize(file, await readSessionText(file), info.mtimeMs);
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
    pathById.clear();
    // One file per id: the latest written (a rollout and its compressed copy may both exist for a while).
    for (const [file, { summary, mtimeMs }] of facts) {
      if (summary === undefined) continue;
      const other = pathById.get(summary.id);
      if (other === undefined || facts.get(other)!.mtimeMs < mtimeMs) pathById.set(summary.id, file);
    }
    const summaries: StoredSessionSummary[] = [];
    for (const file of pathById.values()) {
      const summary = facts.get(file)!.summary!;
      const name = names.get(summary.id);
      summaries.push(Object.freeze(name === undefined ? summary : { ...summary, title: name }));
    }
    summaries.sort(compareStoreOrder);
    listing = Object.freeze(summaries);
    listingKey = key;
    return listing;
  }

  /** One session's records, and its listing row. */
  async function readRecords(sessionId: string, signal?: AbortSignal): Promise<{ records: JsonlRecord[]; summary: StoredSessionSummary | undefined }> {
    // An id not listed yet may be a session that just appeared: scan again unless the listing is fresh.
    if (!pathById.has(sessionId) && !isFresh()) await raceWithSignal(rescan(), signal);
    const file = pathById.get(sessionId);
    if (file === undefined) throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
    let text: string;
    try {
      const info = await stat(file);
      if (info.size > MAX_FOREIGN_FILE_BYTES) throw new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
      text = await readSessionText(file, signal);
    } catch (error) {
      if (error instanceof SessionReadError) throw error;
      if (error instanceof PlaintextTooLarge) throw new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
      signal?.throwIfAborted();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`, { cause: error });
      throw new SessionReadError('io', `cannot read ${agent} session ${JSON.stringify(sessionId)}: ${code ?? String(error)}`, { cause: error });
    }
    return { records: parseJsonl(text), summary: listing.find((entry) => entry.id === sessionId) };
  }

  function header(sessionId: string, summary: StoredSessionSummary | undefined): SessionSurface['header'] {
    return { id: sessionId, ...(summary?.cwd === undefined ? {} : { cwd: summary.cwd }), createdAt: summary?.createdAt ?? 0, agent };
  }

  async function readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    const { records, summary } = await readRecords(sessionId, signal);
    const last = records.length === 0 ? null : records[records.length - 1]!.line;
    return { header: header(sessionId, summary), capturedThroughSeq: last, events: format.surface(records) };
  }

  async function readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog> {
    const { records, summary } = await readRecords(sessionId, signal);
    return { header: header(sessionId, summary), events: format.log(records), ...(summary?.title === undefined ? {} : { title: summary.title }) };
  }

  return { agent, home, listSessions, readSurface, readLog };
}
