/**
 * The index of one agent home: session files by home-relative key, the folders known below the
 * home, the side files as read (title overrides, project cwds), and the listing built from them
 * (`homeListing.ts`). The only mutable state of a home store; what a change changed is read back
 * by the engine (the listing rebuilt or not, the folders changed or not), never told through calls
 * out.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import path from 'node:path';
import type { StoredSessionSummary } from '../../resolver/sessionStore';
import type { FileIdentity } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';
import type { ForeignResume } from './foreignRead';
import { buildHomeListing, type HomeFile, type HomeSideFacts } from './homeListing';
import type { TitlesRead } from './homeSideFiles';

/** One session file as last seen. */
export interface HomeEntry extends HomeFile {
  identity: FileIdentity;
  /** Its facts as dsh's index keeps them; a header problem: the file holds no session (or is too large to read). */
  summary: TranscriptSummary;
  /** The last read failed: no fact about the file, so it is never cached and the next look reads it again. */
  readFailed?: true;
  /** What an append resumes from (recently written plain JSONL files only). */
  resume?: ForeignResume;
}

/** How many files, the most recently written, keep what an append resumes from (up to twice as many between prunings). */
const RESUMABLE_FILES = 512;

/** What a read of a session file found, before the index keys it. */
type HomeRead = Omit<HomeEntry, 'location' | 'resume'>;

/** The id of the session a file's facts list, if any. */
function sessionIdOf(summary: TranscriptSummary | undefined): string | undefined {
  return summary?.headerProblem === undefined ? summary?.header?.id : undefined;
}

/** The folder of a home-relative key ('' for a top-level one). */
export function parentOf(key: string): string {
  const slash = key.lastIndexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

export class HomeIndex {
  /** Session files by home-relative key (`projects/<p>/<id>.jsonl`). */
  readonly entries = new Map<string, HomeEntry>();
  /** Session file names by the folder (home-relative) that holds them. */
  readonly filesByDir = new Map<string, Set<string>>();
  /** Every folder known below the home, the sessions folder included. */
  readonly knownDirs = new Set<string>();
  private readonly resumable = new Set<HomeEntry>();
  private pathById: ReadonlyMap<string, string> = new Map();
  private names = new Map<string, string>();
  /** The title index as last read: its identity and the ids it was read for (its titles of other ids were not kept). */
  namesRead: TitlesRead = { identity: undefined, ids: new Set() };
  /** The project registry's cwds by project folder name. */
  private registryCwds = new Map<string, string>();
  /** The project registry's identity when last read (undefined: none). */
  registryIdentity: FileIdentity | undefined;
  /** Each project folder's marker (by the folder's key): the cwd it names, and its identity when read. */
  private readonly markers = new Map<string, { cwd: string | undefined; identity: FileIdentity }>();
  /** The listing: frozen, in store order, the same array while no row changes. */
  listing: readonly StoredSessionSummary[] = Object.freeze([]);
  /** Whether the entries differ from the persistent cache. */
  cacheStale = false;
  private listingChanged = true;
  private dirsChanged = false;
  /** The ids of the sessions whose files were read again since {@link takeContentChanges}. */
  private rereadIds = new Set<string>();

  constructor(private readonly agent: ForeignAgent) {}

  /** The key of the file listed for `sessionId`, if any. */
  keyOf(sessionId: string): string | undefined {
    return this.pathById.get(sessionId);
  }

  /** Whether the known folders changed since the last call (the watches may follow). */
  takeFolderChanges(): boolean {
    const changed = this.dirsChanged;
    this.dirsChanged = false;
    return changed;
  }

  /** The ids of the sessions whose files were read again since the last call (their content may have changed). */
  takeContentChanges(): Set<string> {
    const ids = this.rereadIds;
    this.rereadIds = new Set();
    return ids;
  }

  /** Records a file just read (or whose read failed): its entry replaces what was known. */
  set(key: string, read: HomeRead, resume: ForeignResume | undefined): void {
    const entry: HomeEntry = { location: { key }, ...read };
    const known = this.entries.get(key);
    const id = sessionIdOf(entry.summary) ?? sessionIdOf(known?.summary);
    // A read failing again is no new content (a failed read is retried at every look).
    if (id !== undefined && !(known?.readFailed === true && entry.readFailed === true)) this.rereadIds.add(id);
    if (known !== undefined) this.resumable.delete(known);
    this.entries.set(key, entry);
    this.keepForResume(entry, resume);
    this.addToDir(key);
    this.listingChanged = true;
    if (entry.readFailed !== true) this.cacheStale = true;
  }

  /** An entry from the persistent cache (before the first walk). */
  adopt(key: string, read: HomeRead): void {
    this.entries.set(key, { location: { key }, ...read });
    this.addToDir(key);
  }

  /** A folder seen by a walk; true when it was not known. */
  addDir(dir: string): boolean {
    if (this.knownDirs.has(dir)) return false;
    this.knownDirs.add(dir);
    this.dirsChanged = true;
    return true;
  }

  removeFile(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.resumable.delete(entry);
    if (!this.entries.delete(key)) return;
    const dir = parentOf(key);
    const names = this.filesByDir.get(dir);
    names?.delete(path.posix.basename(key));
    if (names?.size === 0) this.filesByDir.delete(dir);
    this.listingChanged = true;
    this.cacheStale = true;
  }

  /** Forgets a folder, its subfolders and their files. */
  dropDir(dir: string): void {
    for (const known of [...this.knownDirs]) {
      if (known !== dir && !known.startsWith(`${dir}/`)) continue;
      this.knownDirs.delete(known);
      if (this.markers.delete(known)) this.listingChanged = true;
      this.dirsChanged = true;
      for (const name of [...(this.filesByDir.get(known) ?? [])]) this.removeFile(`${known}/${name}`);
    }
  }

  /** The ids of the sessions the files hold. */
  sessionIds(): Set<string> {
    const ids = new Set<string>();
    for (const { summary } of this.entries.values()) {
      const id = sessionIdOf(summary);
      if (id !== undefined) ids.add(id);
    }
    return ids;
  }

  /** The titles of the agent's title index for the sessions `ids`, as of `identity` (undefined: no index). */
  setNames(names: Map<string, string>, identity: FileIdentity | undefined, ids: ReadonlySet<string>): void {
    this.namesRead = { identity, ids };
    if (names.size === this.names.size && [...names].every(([id, name]) => this.names.get(id) === name)) return;
    this.names = names;
    this.listingChanged = true;
  }

  /** The project registry's cwds by folder name, as of `identity` (undefined: no registry). */
  setRegistryCwds(cwds: Map<string, string>, identity: FileIdentity | undefined): void {
    this.registryIdentity = identity;
    if (cwds.size === this.registryCwds.size && [...cwds].every(([folder, cwd]) => this.registryCwds.get(folder) === cwd)) return;
    this.registryCwds = cwds;
    this.listingChanged = true;
  }

  /** The identity of a project folder's marker when last read (undefined: none read). */
  markerIdentity(dir: string): FileIdentity | undefined {
    return this.markers.get(dir)?.identity;
  }

  /** A project folder's marker as read (identity undefined: it has none). */
  setMarker(dir: string, cwd: string | undefined, identity: FileIdentity | undefined): void {
    const known = this.markers.get(dir);
    if (identity === undefined) {
      if (this.markers.delete(dir) && known?.cwd !== undefined) this.listingChanged = true;
      return;
    }
    this.markers.set(dir, { cwd, identity });
    if (known?.cwd !== cwd) this.listingChanged = true;
  }

  /** The cwd the project folder of a key has by its marker, else by the registry (keys `<base>/<project>/…`). */
  private projectCwd(key: string): string | undefined {
    if (this.markers.size === 0 && this.registryCwds.size === 0) return undefined;
    const [base, project] = key.split('/', 2);
    return this.markers.get(`${base}/${project}`)?.cwd ?? this.registryCwds.get(project!);
  }

  private addToDir(key: string): void {
    const dir = parentOf(key);
    let names = this.filesByDir.get(dir);
    if (names === undefined) this.filesByDir.set(dir, (names = new Set()));
    names.add(path.posix.basename(key));
  }

  /** Keeps (or drops) what the next append of an entry's file resumes from, for the most recently written files only. */
  private keepForResume(entry: HomeEntry, resume: ForeignResume | undefined): void {
    if (resume === undefined) return;
    entry.resume = resume;
    this.resumable.add(entry);
    if (this.resumable.size <= 2 * RESUMABLE_FILES) return;
    // Pruning to half the allowance at a time keeps the sorting amortized.
    const byRecency = [...this.resumable].sort((a, b) => b.identity.mtimeMs - a.identity.mtimeMs);
    for (const dropped of byRecency.slice(RESUMABLE_FILES)) {
      dropped.resume = undefined;
      this.resumable.delete(dropped);
    }
  }

  /** Rebuilds the listing when something changed; true when it is a new array (listeners are to be told). */
  rebuildListing(): boolean {
    if (!this.listingChanged) return false;
    this.listingChanged = false;
    const side: HomeSideFacts = { titles: this.names, projectCwd: (key) => this.projectCwd(key) };
    const { sessions, keyById } = buildHomeListing(this.agent, this.entries.values(), side, this.listing);
    this.pathById = keyById;
    if (sessions === this.listing) return false;
    this.listing = sessions;
    return true;
  }

  /**
   * The folders to watch, in order: those above the session folders (`depthOf` below `leafDepth`),
   * then the session folders, the most recently written first.
   */
  foldersToWatch(depthOf: (dir: string) => number, leafDepth: number): string[] {
    const newest = new Map<string, number>();
    for (const [key, { identity }] of this.entries) {
      const dir = parentOf(key);
      newest.set(dir, Math.max(newest.get(dir) ?? -Infinity, identity.mtimeMs));
    }
    const branches: string[] = [];
    const leaves: string[] = [];
    for (const dir of this.knownDirs) (depthOf(dir) < leafDepth ? branches : leaves).push(dir);
    leaves.sort((a, b) => (newest.get(b) ?? -Infinity) - (newest.get(a) ?? -Infinity));
    return [...branches, ...leaves];
  }
}
