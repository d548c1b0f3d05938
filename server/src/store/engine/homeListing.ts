/**
 * A home's listing rule, pure: from the indexed session files (their keys, identities and facts,
 * shaped as dsh's index holds them) and the home's side files (title overrides by id, project cwds
 * by key), the listing rows in store order, with the agent, one file per id (the latest written),
 * the key of each listed id, and the files that list no session (the engine reports each once). A
 * rebuild that changes no row gives the previous array back.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { StoredSessionSummary } from '../../resolver/sessionStore';
import { compareStoreOrder } from '../../resolver/storeOrder';
import type { FileIdentity } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';
import type { DiscoveryProblem } from '../discovery';
import type { SideFacts } from '../formats/adapter';

/** One indexed session file (an `IndexedTranscript` of `../transcriptIndex.ts` is one). */
export interface HomeFile {
  readonly location: { readonly key: string };
  readonly identity?: FileIdentity;
  /** Undefined: not read yet; a header problem: the file lists no session. */
  readonly summary?: TranscriptSummary;
}


/** A home's listing. */
interface HomeListing {
  /** Frozen, in store order. */
  readonly sessions: readonly StoredSessionSummary[];
  /** The key of the file listed for each session id. */
  readonly keyById: ReadonlyMap<string, string>;
  /** The files read that list no session, and why (damage, too large, unreadable). */
  readonly problems: DiscoveryProblem[];
}

function sameRow(a: StoredSessionSummary, b: StoredSessionSummary): boolean {
  return a === b || (a.id === b.id && a.cwd === b.cwd && a.createdAt === b.createdAt && a.title === b.title && a.agent === b.agent);
}

/** The session a file's facts list, or undefined (not read, or no session). */
function listedHeader(file: HomeFile): NonNullable<TranscriptSummary['header']> | undefined {
  const summary = file.summary;
  return summary?.headerProblem === undefined ? summary?.header : undefined;
}

/**
 * The listing of `agent`'s home: `previous` (its rows as last built) when no row changed, so a
 * write that changed nothing listed (a new turn of a titled session) keeps the candidate index.
 */
export function buildHomeListing(agent: ForeignAgent, files: Iterable<HomeFile>, side: SideFacts, previous: readonly StoredSessionSummary[]): HomeListing {
  // One file per id: the latest written (a session and its compressed copy may both exist for a while).
  const chosen = new Map<string, HomeFile>();
  const problems: DiscoveryProblem[] = [];
  for (const file of files) {
    const header = listedHeader(file);
    const problem = file.summary?.headerProblem;
    if (problem !== undefined) problems.push({ key: file.location.key, reason: problem });
    if (header === undefined) continue;
    const other = chosen.get(header.id);
    if (other === undefined || (other.identity?.mtimeMs ?? -Infinity) < (file.identity?.mtimeMs ?? -Infinity)) chosen.set(header.id, file);
  }
  const keyById = new Map<string, string>();
  const sessions: StoredSessionSummary[] = [];
  for (const [id, file] of chosen) {
    const { key } = file.location;
    keyById.set(id, key);
    const { createdAt } = listedHeader(file)!;
    const title = side.titles.get(id) ?? file.summary!.title;
    const cwd = side.projectCwd(key) ?? file.summary!.header!.cwd;
    sessions.push(Object.freeze({ id, ...(cwd === undefined ? {} : { cwd }), createdAt, ...(title === undefined ? {} : { title }), agent }));
  }
  sessions.sort(compareStoreOrder);
  if (sessions.length === previous.length && sessions.every((row, i) => sameRow(row, previous[i]!))) return { sessions: previous, keyById, problems };
  return { sessions: Object.freeze(sessions), keyById, problems };
}
