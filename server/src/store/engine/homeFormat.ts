/**
 * Another agent's format adapter made a format of the disk engine (`../formats/adapter.ts`
 * `EngineFormat`) for one home: its files read for the index through `foreignFormat.ts`, its
 * listing built by `homeListing.ts` with what the side files say (the key listed for each id kept
 * for the reads by id), and a session's surface and whole log read from that file's records
 * (`foreignRecords.ts`, in bounded lines). Made per store: the listing's keys are that home's.
 */
import { promises as fsp } from 'node:fs';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { SessionReadError, type AgentSessionLog, type SessionSurface, type StoredSessionSummary } from '../../resolver/sessionStore';
import { keyPath } from '../discovery';
import { MAX_FOREIGN_FILE_BYTES, type FactsRequest, type FormatAdapter, type SideFacts } from '../formats/adapter';
import type { EngineFormat } from '../formats/engineFormat';
import { PlaintextTooLarge } from '../formats/compressed';
import type { JsonlRecord } from '../formats/records';
import { foreignIndexFormat } from './foreignFormat';
import type { ForeignFiles, ForeignResume } from './foreignRead';
import { readForeignRecords } from './foreignRecords';
import { buildHomeListing } from './homeListing';

const NO_SIDE_FACTS: SideFacts = { titles: new Map(), projectCwd: () => undefined };

/** A home's engine format, and what its reads by id need of the listing last built. */
export interface HomeFormat extends EngineFormat {
  /** The key of the file listed for `sessionId` in the listing last built, if any. */
  keyOf(sessionId: string): string | undefined;
  /** The whole session as the user saw it, found by id under `root`. */
  readLog(root: string, sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog>;
  /** Reads that folded only the appended bytes (for tests and figures). */
  readonly resumedReads: number;
}

/** `adapter`'s format for one home, its session files opened through `files` (default: the file system). */
export function homeFormat(adapter: FormatAdapter, files?: ForeignFiles): HomeFormat {
  const { agent } = adapter;
  const reader = foreignIndexFormat(adapter, files);
  let listed: readonly StoredSessionSummary[] = Object.freeze([]);
  let keyById: ReadonlyMap<string, string> = new Map();
  let resumedReads = 0;
  const { titleIndex, projectIndex } = adapter;
  const sideFiles = titleIndex === undefined && projectIndex === undefined ? undefined : { ...(titleIndex === undefined ? {} : { titleIndex }), ...(projectIndex === undefined ? {} : { projectIndex }) };
  /** One session's records and its listing row, from the file listed for it. */
  const readRecords = async (root: string | undefined, sessionId: string, signal?: AbortSignal) => {
    const key = keyById.get(sessionId);
    if (root === undefined || key === undefined) throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
    const records = await readSessionRecords(agent, keyPath(root, key), sessionId, signal);
    return { records, row: listed.find((row) => row.id === sessionId) };
  };
  return {
    layout: adapter,
    cache: reader.cache,
    mayResume: (facts) => reader.mayResume(facts),
    // The engine hands back only what this format's reads returned: a line fold's state.
    readFacts: async (request, previous) => {
      const outcome = await reader.readFacts(request as FactsRequest<ForeignResume>, previous);
      if (outcome.kind === 'read' && outcome.resumed) resumedReads++;
      return outcome;
    },
    ...(sideFiles === undefined ? {} : { sideFiles }),
    listing: {
      build: (entries, side) => {
        const built = buildHomeListing(agent, entries, side ?? NO_SIDE_FACTS, listed);
        listed = built.sessions;
        keyById = built.keyById;
        return { sessions: built.sessions, problems: built.problems };
      },
    },
    keyOf: (sessionId) => keyById.get(sessionId),
    get resumedReads() {
      return resumedReads;
    },
    readSurface: async (root, sessionId, signal) => {
      const { records, row } = await readRecords(root, sessionId, signal);
      const last = records.length === 0 ? null : records[records.length - 1]!.line;
      return { header: headerOf(agent, sessionId, row), capturedThroughSeq: last, events: adapter.surface(records) };
    },
    readLog: async (root, sessionId, signal) => {
      const { records, row } = await readRecords(root, sessionId, signal);
      return { header: headerOf(agent, sessionId, row), events: adapter.log(records), ...(row?.title === undefined ? {} : { title: row.title }) };
    },
  };
}

function headerOf(agent: ForeignAgent, sessionId: string, row: StoredSessionSummary | undefined): SessionSurface['header'] {
  return { id: sessionId, ...(row?.cwd === undefined ? {} : { cwd: row.cwd }), createdAt: row?.createdAt ?? 0, agent };
}

/** A session file's records (streamed in bounded lines); a failure as the reads by id report it. */
async function readSessionRecords(agent: ForeignAgent, file: string, sessionId: string, signal?: AbortSignal): Promise<JsonlRecord[]> {
  const tooLarge = () => new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
  try {
    const info = await fsp.stat(file);
    if (info.size > MAX_FOREIGN_FILE_BYTES) throw tooLarge();
    return await readForeignRecords(file, signal);
  } catch (error) {
    if (error instanceof SessionReadError) throw error;
    if (error instanceof PlaintextTooLarge) throw tooLarge();
    signal?.throwIfAborted();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`, { cause: error });
    throw new SessionReadError('io', `cannot read ${agent} session ${JSON.stringify(sessionId)}: ${code ?? String(error)}`, { cause: error });
  }
}
