import { promises as fsp, readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import type { ForeignAgent } from '@dsh-session-ls/shared';
import { raceWithSignal } from '../../resolver';
import { compareStoreOrder } from '../../resolver/storeOrder';
import { SessionReadError, type SessionStore, type SessionSurface, type StoredSessionSummary } from '../../resolver/sessionStore';
import type { AgentSessionLog } from '../../resolver/sessionStore';
import { DirectoryWatches } from '../directoryWatches';
import { quickSync } from '../quickSync';
import { Emitter } from '../emitter';
import type { Subscription } from '../service';
import { nodeDirectoryFiles, type WatchFactory } from '../directoryFiles';
import { readRegularFile } from '../regularFile';
import { isWithin, loadSummaryCache, removeStaleTempFiles, saveSummaryCache, summaryCacheFile, type CachedSummary } from '../summaryCache';
import { fileIdentity, sameIdentity, writtenRecently, type FileIdentity } from '../transcriptFiles';
import { MAX_FOREIGN_FILE_BYTES, readSessionText, type FormatAdapter } from '../formats/adapter';
import { PlaintextTooLarge } from '../formats/compressed';
import { parseJsonl, type JsonlRecord } from '../formats/records';
import { formatOf } from '../formats/registry';
import { foreignCacheRoot, fromCached, toCached } from './foreignCache';
import { readForeignFile, type ForeignFiles, type ForeignResume } from './foreignRead';

export { MAX_FOREIGN_FILE_BYTES } from '../formats/adapter';

/** Another agent's store: read-only, listing and surfaces in the resolver's shapes. */
export interface ForeignSessionStore extends SessionStore {
  readonly agent: ForeignAgent;
  readonly home: string;
  /** The whole session as the user saw it (for a transcript); rejects as `readSurface` does. */
  readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog>;
  /**
   * Fires when the listing changed after the first one (a session created, deleted, renamed, or
   * written so that its row changed), at most every `notifyThrottleMs` as dsh's store does.
   */
  onDidChange(listener: () => void): Subscription;
  /** Stops watching and sweeping; no cache write starts after (one in progress finishes). */
  dispose(): void;
}

/** How the store keeps its listing fresh and its cache written. */
export interface ForeignStoreTuning {
  /** Quiet time after a watch event before the folder (or file) it names is looked at again. */
  debounceMs: number;
  /**
   * …and at least this many times the last such look took, since it ended: a session being written
   * is read again at each look (its bytes before the last read's end hashed, only the new ones
   * folded; a compressed one decoded whole), so a large one written continuously costs at most
   * ~1/(1+factor) of a core (default 10).
   */
  refreshCostFactor: number;
  /**
   * The sweep: a full walk of the home (every folder listed, every session file stat'ed) behind the
   * watches, for lost events and folders past `maxWatches`; passes at least `sweepPeriodMs` and
   * `sweepCostFactor` × the last walk's duration apart.
   */
  sweepPeriodMs: number;
  sweepCostFactor: number;
  /** Folder watches at most (the home, the session folders' parents, then the most recent session folders). */
  maxWatches: number;
  watchFactory?: WatchFactory;
  /** Delay before the persistent cache is rewritten after a change. */
  cacheSaveDelayMs: number;
  /** A read of an id that is not listed walks the home first, at most this often. */
  missRescanMs: number;
  /** Minimum spacing of `onDidChange` notifications (dsh's store: 100 ms). */
  notifyThrottleMs: number;
}

export const DEFAULT_FOREIGN_TUNING: ForeignStoreTuning = {
  debounceMs: 30,
  refreshCostFactor: 10,
  sweepPeriodMs: 30_000,
  sweepCostFactor: 400,
  maxWatches: 1024,
  cacheSaveDelayMs: 5000,
  missRescanMs: 1000,
  notifyThrottleMs: 100,
};

export interface ForeignStoreOptions {
  /** Diagnostic logging (files skipped, refreshes that failed). */
  log?: (message: string) => void;
  /**
   * Where the persistent summary cache lives (one file per agent home; the dsh store's cache
   * directory). Absent, or inside the agent's home: no persistent cache.
   */
  cacheDir?: string;
  /** Reads a session file's text for a surface or log; default: the file, a `.zst` one decoded. */
  readText?: (file: string, signal?: AbortSignal) => Promise<string>;
  /** Opens session files for the listing's reads (tests count reads); default: the file system. */
  files?: ForeignFiles;
  tuning?: Partial<ForeignStoreTuning>;
}

/** One session file as last seen. */
interface Entry {
  identity: FileIdentity;
  /** Undefined: the file holds no session (or is too large to read). */
  summary: StoredSessionSummary | undefined;
  /** The last read failed: no fact about the file, so it is never cached and the next look reads it again. */
  readFailed?: true;
  /** What an append resumes from (recently written plain JSONL files only). */
  resume?: ForeignResume;
}

/** How many files, the most recently written, keep what an append resumes from (up to twice as many between prunings). */
const RESUMABLE_FILES = 512;
/** A walk lets the event loop run after this much synchronous work. */
const SLICE_MS = 5;

/** Cache writes in progress, of every foreign store (see {@link foreignCacheWritesSettled}). */
const cacheWrites = new Set<Promise<void>>();

/** Resolves once no foreign store is writing its cache (a disposed store's write stops at its next entry). */
export async function foreignCacheWritesSettled(): Promise<void> {
  while (cacheWrites.size > 0) await Promise.allSettled([...cacheWrites]);
}

/**
 * Open another agent's store under `home`, strictly read-only. The first listing walks the home
 * (folders listed, session files stat'ed) and reads only the files the persistent cache does not
 * describe by the same identity (size, modification and change time, inode); later listings are
 * answered from memory at once, without touching the disk. Folder watches on the home, the parents
 * of the session folders and the most recent session folders report new, renamed, deleted and
 * written sessions: the folder (or the one file) named is looked at again after a short quiet time,
 * and only a file whose identity changed is read again (one that grew: only its new bytes folded,
 * see `foreignRead.ts`). A slow sweep walks the whole home behind the watches. While nothing changes
 * the listing is the same frozen array, which keeps the candidate index; a new one is told to
 * `onDidChange` listeners. Damage (torn lines, garbage, a damaged cache) is skipped, never fatal.
 */
export function openForeignStore(agent: ForeignAgent, home: string, options: ForeignStoreOptions | ((message: string) => void) = {}): ForeignSessionStore {
  return new ForeignStore(agent, home, typeof options === 'function' ? { log: options } : options);
}

class ForeignStore implements ForeignSessionStore {
  private readonly format: FormatAdapter;
  /** The home as `path.join` writes it, with a separator after: what {@link full} puts before a key. */
  private readonly homePrefix: string;
  private readonly tuning: ForeignStoreTuning;
  private readonly log: (message: string) => void;
  private readonly readText: (file: string, signal?: AbortSignal) => Promise<string>;
  /** Session files by home-relative key (`projects/<p>/<id>.jsonl`). */
  private readonly entries = new Map<string, Entry>();
  /** Session file names by the folder (home-relative) that holds them. */
  private readonly filesByDir = new Map<string, Set<string>>();
  /** Every folder known below the home, `base` included. */
  private readonly knownDirs = new Set<string>();
  private pathById = new Map<string, string>();
  private listing: readonly StoredSessionSummary[] = Object.freeze([]);
  private names = new Map<string, string>();
  private namesIdentity: FileIdentity | undefined;
  private listingChanged = true;
  private dirsChanged = false;
  private readonly reported = new Set<string>();
  private readonly resumable = new Set<Entry>();
  private sliceStart = 0;
  /** Reads that folded only the appended bytes (for tests and figures). */
  resumedReads = 0;

  private queue: Promise<void> = Promise.resolve();
  private started: Promise<void> | undefined;
  private firstListed = false;
  private disposed = false;
  private lastFullScanAt = -Infinity;
  private lastFullScanMs = 0;
  /** When the last look at what the watches reported ended, and how long it took. */
  private lastRefreshEnd = -Infinity;
  private lastRefreshMs = 0;

  private watches: DirectoryWatches | undefined;
  private readonly dirtyDirs = new Set<string>();
  private readonly dirtyFiles = new Set<string>();
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private sweepTimer: ReturnType<typeof setTimeout> | undefined;

  private cacheFile: string | undefined;
  private cacheRoot = '';
  private cacheStale = false;
  private cacheTimer: ReturnType<typeof setTimeout> | undefined;
  private cacheSaving = false;
  private cacheFailureLogged = false;

  private readonly changes: Emitter<void>;
  private notifyTimer: ReturnType<typeof setTimeout> | undefined;
  private lastNotifyAt = -Infinity;

  constructor(
    readonly agent: ForeignAgent,
    readonly home: string,
    private readonly options: ForeignStoreOptions,
  ) {
    this.format = formatOf(agent);
    this.homePrefix = path.join(home, '_').slice(0, -1);
    this.tuning = { ...DEFAULT_FOREIGN_TUNING, ...options.tuning };
    this.log = options.log ?? (() => undefined);
    this.readText = options.readText ?? readSessionText;
    this.changes = new Emitter((error) => this.log(`${this.agent} store: listener failed: ${String(error)}`));
  }

  onDidChange(listener: () => void): Subscription {
    return this.changes.on(listener);
  }

  // ---- the resolver's seam ----------------------------------------------------------------------

  async listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    signal?.throwIfAborted();
    if (!this.firstListed) await raceWithSignal(this.start(), signal);
    return this.listing;
  }

  async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
    const { records, summary } = await this.readRecords(sessionId, signal);
    const last = records.length === 0 ? null : records[records.length - 1]!.line;
    return { header: this.header(sessionId, summary), capturedThroughSeq: last, events: this.format.surface(records) };
  }

  async readLog(sessionId: string, signal?: AbortSignal): Promise<AgentSessionLog> {
    const { records, summary } = await this.readRecords(sessionId, signal);
    return { header: this.header(sessionId, summary), events: this.format.log(records), ...(summary?.title === undefined ? {} : { title: summary.title }) };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.watches?.dispose();
    this.watches = undefined;
    for (const timer of [this.refreshTimer, this.sweepTimer, this.cacheTimer, this.notifyTimer]) if (timer !== undefined) clearTimeout(timer);
    this.refreshTimer = this.sweepTimer = this.cacheTimer = this.notifyTimer = undefined;
    this.changes.clear();
  }

  /** Live handles (for leak tests): folder watches and pending timers. */
  handles(): { watches: number; timers: number } {
    const timers = [this.refreshTimer, this.sweepTimer, this.cacheTimer, this.notifyTimer].filter((timer) => timer !== undefined).length;
    return { watches: this.watches?.count ?? 0, timers: timers + (this.watches?.adding === true ? 1 : 0) };
  }

  private header(sessionId: string, summary: StoredSessionSummary | undefined): SessionSurface['header'] {
    return { id: sessionId, ...(summary?.cwd === undefined ? {} : { cwd: summary.cwd }), createdAt: summary?.createdAt ?? 0, agent: this.agent };
  }

  /** One session's records, and its listing row. */
  private async readRecords(sessionId: string, signal?: AbortSignal): Promise<{ records: JsonlRecord[]; summary: StoredSessionSummary | undefined }> {
    if (!this.firstListed) await raceWithSignal(this.start(), signal);
    if (!this.pathById.has(sessionId)) {
      // Maybe a session that just appeared: what the watches reported first, then (at most every
      // `missRescanMs`) a walk of the home for what they did not.
      await raceWithSignal(this.refreshNow(), signal);
      if (!this.pathById.has(sessionId) && performance.now() - this.lastFullScanAt >= this.tuning.missRescanMs) {
        await raceWithSignal(this.enqueue(() => this.fullScan()), signal);
      }
    }
    const key = this.pathById.get(sessionId);
    if (key === undefined) throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
    let text: string;
    try {
      const info = await fsp.stat(this.full(key));
      if (info.size > MAX_FOREIGN_FILE_BYTES) throw new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
      text = await this.readText(this.full(key), signal);
    } catch (error) {
      if (error instanceof SessionReadError) throw error;
      if (error instanceof PlaintextTooLarge) throw new SessionReadError('too-large', `session ${JSON.stringify(sessionId)} is too large to read`);
      signal?.throwIfAborted();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`, { cause: error });
      throw new SessionReadError('io', `cannot read ${this.agent} session ${JSON.stringify(sessionId)}: ${code ?? String(error)}`, { cause: error });
    }
    return { records: parseJsonl(text), summary: this.listing.find((entry) => entry.id === sessionId) };
  }

  // ---- scheduling ---------------------------------------------------------------------------------

  /** Work on the entries, one piece at a time; a failure is logged, never thrown at a later caller. */
  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(() => (this.disposed ? undefined : work()));
    this.queue = run.catch((error: unknown) => this.log(`${this.agent} store: ${error instanceof Error ? error.message : String(error)}`));
    return this.queue;
  }

  /** The first listing: the cache, one walk of the home, then watches and the sweep. Never rejects. */
  private start(): Promise<void> {
    this.started ??= this.enqueue(async () => {
      try {
        await this.loadCache();
        await this.fullScan();
        // The first cache is written at once (a CLI process lives only that long), later ones after a quiet time.
        if (this.cacheTimer !== undefined) clearTimeout(this.cacheTimer);
        this.cacheTimer = undefined;
        this.saveCache();
      } finally {
        this.firstListed = true;
        if (!this.disposed) {
          this.watches = new DirectoryWatches(this.home, (dir, name) => this.onWatch(dir, name), this.tuning.maxWatches, this.log, this.tuning.watchFactory ?? nodeDirectoryFiles.watch);
          this.updateWatches();
          this.scheduleSweep();
        }
      }
    });
    return this.started;
  }

  private timer(callback: () => void, ms: number): ReturnType<typeof setTimeout> {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return timer;
  }

  private onWatch(dir: string, name: string | undefined): void {
    if (this.disposed) return;
    if (dir === '') {
      // The home holds much else (histories, logs, databases written all the time): only the
      // session folders' parent and the agent's title index matter.
      if (name !== undefined && name !== this.format.base && name !== this.format.titleIndex?.file) return;
      this.dirtyDirs.add('');
    } else if (name !== undefined && this.depthOf(dir) === this.format.leafDepth && this.format.isSessionFile(name)) {
      this.dirtyFiles.add(`${dir}/${name}`);
    } else {
      this.dirtyDirs.add(dir);
    }
    const sinceLast = performance.now() - this.lastRefreshEnd;
    this.refreshTimer ??= this.timer(
      () => {
        this.refreshTimer = undefined;
        void this.enqueue(() => this.processDirty());
      },
      Math.max(this.tuning.debounceMs, this.tuning.refreshCostFactor * this.lastRefreshMs - sinceLast),
    );
  }

  /** Settles once what the watches reported so far is in the listing. */
  private refreshNow(): Promise<void> {
    if (this.refreshTimer !== undefined) {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = undefined;
      return this.enqueue(() => this.processDirty());
    }
    return this.queue;
  }

  private scheduleSweep(): void {
    if (this.disposed) return;
    const delay = Math.max(this.tuning.sweepPeriodMs, this.tuning.sweepCostFactor * this.lastFullScanMs);
    this.sweepTimer = this.timer(() => {
      this.sweepTimer = undefined;
      void this.enqueue(() => this.fullScan()).finally(() => this.scheduleSweep());
    }, delay);
  }

  // ---- walking the home ---------------------------------------------------------------------------

  private full(key: string): string {
    // Concatenated, not joined: a walk makes one per session file. Keys come from folder listings or
    // checked cache lines (no empty, `.` or `..` part), so `path.join` would change nothing.
    if (key === '') return this.home;
    return this.homePrefix + (path.sep === '/' ? key : key.replaceAll('/', path.sep));
  }

  /** -1 for the home, 0 for `base`, then one more per folder below it. */
  private depthOf(dir: string): number {
    return dir === '' ? -1 : dir.split('/').length - 1;
  }

  /** Walks the whole home: every folder listed, every session file stat'ed, changed ones read. */
  private async fullScan(): Promise<void> {
    const started = performance.now();
    const seenDirs = new Set<string>();
    await this.scanDir('', true, seenDirs);
    // Folders (and their files) the walk did not meet are gone, cached ones included.
    for (const dir of [...this.knownDirs]) if (!seenDirs.has(dir)) this.dropDir(dir);
    for (const [dir, names] of [...this.filesByDir]) if (!seenDirs.has(dir)) for (const name of [...names]) this.removeFile(`${dir}/${name}`);
    this.lastFullScanAt = performance.now();
    this.lastFullScanMs = this.lastFullScanAt - started;
    this.afterChanges();
  }

  /** What the watches reported: those folders listed again, those files stat'ed again. */
  private async processDirty(): Promise<void> {
    const started = performance.now();
    const dirs = [...this.dirtyDirs];
    const files = [...this.dirtyFiles].filter((key) => !this.dirtyDirs.has(parentOf(key)));
    this.dirtyDirs.clear();
    this.dirtyFiles.clear();
    for (const dir of dirs) if (dir === '' || this.knownDirs.has(dir)) await this.scanDir(dir, false);
    for (const key of files) if (this.knownDirs.has(parentOf(key))) await this.refreshFile(key);
    this.afterChanges();
    this.lastRefreshEnd = performance.now();
    this.lastRefreshMs = this.lastRefreshEnd - started;
  }

  /**
   * Looks at one folder: the home (is `base` there; the agent's title index), a folder above the session
   * folders (its subfolders; new ones walked whole), or a session folder (its files). `deep`: walk
   * every subfolder, known or not.
   */
  private async scanDir(dir: string, deep: boolean, seenDirs?: Set<string>): Promise<void> {
    const depth = this.depthOf(dir);
    if (depth === -1) {
      await this.refreshNames();
      const base = this.format.base;
      const baseDir = this.full(base);
      const isDir = quickSync.quick
        ? quickSync.call(() => statSync(baseDir, { throwIfNoEntry: false })?.isDirectory() === true)
        : await fsp.stat(baseDir).then((stats) => stats.isDirectory(), () => false);
      if (!isDir) this.dropDir(base);
      else if (deep || !this.knownDirs.has(base)) await this.scanDir(base, true, seenDirs);
      return;
    }
    let entries: Dirent[];
    try {
      // Synchronous while that is quick (see quickSync.ts), as dsh's discovery lists its folders.
      const full = this.full(dir);
      entries = quickSync.quick ? quickSync.call(() => readdirSync(full, { withFileTypes: true })) : await fsp.readdir(full, { withFileTypes: true });
    } catch {
      this.dropDir(dir);
      return;
    }
    seenDirs?.add(dir);
    if (!this.knownDirs.has(dir)) {
      this.knownDirs.add(dir);
      this.dirsChanged = true;
    }
    if (depth < this.format.leafDepth) {
      const children = new Set(entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name));
      for (const child of children) {
        const key = `${dir}/${child}`;
        if (deep || !this.knownDirs.has(key)) await this.scanDir(key, true, seenDirs);
      }
      for (const known of [...this.knownDirs]) if (parentOf(known) === dir && !children.has(path.posix.basename(known))) this.dropDir(known);
      return;
    }
    // A known name passed isSessionFile when it was added.
    const known = this.filesByDir.get(dir);
    const names = entries.filter((entry) => entry.isFile() && (known?.has(entry.name) === true || this.format.isSessionFile(entry.name))).map((entry) => entry.name);
    const present = new Set(names);
    for (const name of [...(known ?? [])]) if (!present.has(name)) this.removeFile(`${dir}/${name}`);
    // A file the synchronous stat finds unchanged costs no promise (a restart on the cache: every
    // file); the others are read through the thread pool a few at a time (one at a time, a walk of
    // thousands of new files waits on each round trip). The event loop runs every few milliseconds.
    let batch: Promise<void>[] = [];
    for (const name of names) {
      const key = `${dir}/${name}`;
      if (!this.unchanged(key)) batch.push(this.refreshFile(key));
      if (batch.length >= 16) {
        // The event loop ran while the reads were waited for: a new slice starts.
        await Promise.all(batch);
        batch = [];
        this.sliceStart = performance.now();
      }
      if (performance.now() - this.sliceStart > SLICE_MS) {
        await Promise.all(batch);
        batch = [];
        await new Promise((resolve) => setImmediate(resolve));
        this.sliceStart = performance.now();
      }
    }
    await Promise.all(batch);
  }

  /**
   * Whether a known file is, by a synchronous stat, of the identity last seen (nothing to do).
   * False when that cannot be told quickly (see quickSync.ts) or the file is new, changed, gone
   * or no longer a file: {@link refreshFile} then looks at it (and stats it again).
   */
  private unchanged(key: string): boolean {
    const known = this.entries.get(key);
    if (known === undefined || known.readFailed === true || !quickSync.quick) return false;
    const file = this.full(key);
    let stats;
    try {
      stats = quickSync.call(() => statSync(file, { throwIfNoEntry: false }));
    } catch {
      return false;
    }
    return stats !== undefined && stats.isFile() && sameIdentity(known.identity, fileIdentity(stats));
  }

  /** Stats one session file and reads it again when its identity changed. */
  private async refreshFile(key: string): Promise<void> {
    const file = this.full(key);
    let stats;
    try {
      // Synchronous while that is quick, as dsh's scans do (see quickSync.ts): a few µs, against
      // ~20 µs of CPU for a promise through the thread pool, but never blocking on a cold disk.
      stats = quickSync.quick ? quickSync.call(() => statSync(file)) : await fsp.stat(file);
    } catch {
      this.removeFile(key);
      return;
    }
    if (!stats.isFile()) return this.removeFile(key);
    const identity = fileIdentity(stats);
    const known = this.entries.get(key);
    if (known !== undefined && known.readFailed !== true && sameIdentity(known.identity, identity)) return;
    let summary: StoredSessionSummary | undefined;
    let readFailed = false;
    let resume: ForeignResume | undefined;
    let why = 'no session records';
    if (stats.size > MAX_FOREIGN_FILE_BYTES) {
      why = 'too large to read';
    } else {
      try {
        // A file written while we run (or shortly before) is likely to be appended to: keep what resumes it.
        // At the first listing only a recent one; later, every file read (it just changed).
        const keepState = this.firstListed || writtenRecently(identity, Date.now());
        const read = await readForeignFile(this.format, file, identity, known, { keepState, ...(this.options.files === undefined ? {} : { files: this.options.files }) });
        summary = read.summary === undefined ? undefined : Object.freeze({ ...read.summary, agent: this.agent });
        resume = read.resume;
        if (read.resumed) this.resumedReads++;
      } catch (error) {
        if (error instanceof PlaintextTooLarge) {
          why = 'too large to read';
        } else if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          return this.removeFile(key);
        } else {
          // Not a fact about the file (a permission, an I/O error): keep what was known, try again later.
          readFailed = true;
          why = `cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
          summary = known?.summary;
        }
      }
    }
    if ((summary === undefined || readFailed) && !this.reported.has(key)) {
      this.reported.add(key);
      this.log(`${this.agent} store: skipped ${file}: ${why}`);
    }
    const entry: Entry = readFailed ? { identity, summary, readFailed: true } : { identity, summary };
    if (known !== undefined) this.resumable.delete(known);
    this.entries.set(key, entry);
    this.keepForResume(entry, resume);
    this.addToDir(key);
    this.listingChanged = true;
    if (!readFailed) this.cacheStale = true;
  }

  private addToDir(key: string): void {
    const dir = parentOf(key);
    let names = this.filesByDir.get(dir);
    if (names === undefined) this.filesByDir.set(dir, (names = new Set()));
    names.add(path.posix.basename(key));
  }

  /** Keeps (or drops) what the next append of an entry's file resumes from, for the most recently written files only. */
  private keepForResume(entry: Entry, resume: ForeignResume | undefined): void {
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

  private removeFile(key: string): void {
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
  private dropDir(dir: string): void {
    for (const known of [...this.knownDirs]) {
      if (known !== dir && !known.startsWith(`${dir}/`)) continue;
      this.knownDirs.delete(known);
      this.dirsChanged = true;
      for (const name of [...(this.filesByDir.get(known) ?? [])]) this.removeFile(`${known}/${name}`);
    }
  }

  /** The titles of the agent's title index (if it keeps one), read again when it changed. */
  private async refreshNames(): Promise<void> {
    const titleIndex = this.format.titleIndex;
    if (titleIndex === undefined) return;
    const file = path.join(this.home, titleIndex.file);
    let identity: FileIdentity | undefined;
    let names = new Map<string, string>();
    try {
      identity = fileIdentity(await fsp.stat(file));
      if (sameIdentity(this.namesIdentity, identity)) return;
      names = titleIndex.titles(await readRegularFile(file, { encoding: 'utf8' }));
    } catch {
      // No index (never renamed, or removed): titles fall back to the first prompt.
      identity = undefined;
    }
    this.namesIdentity = identity;
    if (names.size === this.names.size && [...names].every(([id, name]) => this.names.get(id) === name)) return;
    this.names = names;
    this.listingChanged = true;
  }

  /** After a walk or a refresh: the listing rebuilt if anything changed, the watches and the cache kept up. */
  private afterChanges(): void {
    if (this.listingChanged) this.rebuildListing();
    if (this.dirsChanged && this.watches !== undefined) this.updateWatches();
    this.scheduleCacheSave();
  }

  private rebuildListing(): void {
    this.listingChanged = false;
    // One file per id: the latest written (a rollout and its compressed copy may both exist for a while).
    const pathById = new Map<string, string>();
    for (const [key, { summary, identity }] of this.entries) {
      if (summary === undefined) continue;
      const other = pathById.get(summary.id);
      if (other === undefined || this.entries.get(other)!.identity.mtimeMs < identity.mtimeMs) pathById.set(summary.id, key);
    }
    const summaries: StoredSessionSummary[] = [];
    for (const key of pathById.values()) {
      const summary = this.entries.get(key)!.summary!;
      const name = this.names.get(summary.id);
      summaries.push(name === undefined ? summary : Object.freeze({ ...summary, title: name }));
    }
    summaries.sort(compareStoreOrder);
    this.pathById = pathById;
    // A write that changed no row (a new turn of a titled session) keeps the array, and so the candidate index.
    if (summaries.length === this.listing.length && summaries.every((summary, i) => sameRow(summary, this.listing[i]!))) return;
    this.listing = Object.freeze(summaries);
    // The first listing is awaited by whoever asked for it; later ones are told (coalesced).
    if (this.firstListed) this.scheduleNotify();
  }

  /** Tells `onDidChange` listeners, at most every `notifyThrottleMs`. */
  private scheduleNotify(): void {
    if (this.disposed || this.notifyTimer !== undefined) return;
    const wait = Math.max(0, this.lastNotifyAt + this.tuning.notifyThrottleMs - performance.now());
    this.notifyTimer = this.timer(() => {
      this.notifyTimer = undefined;
      this.lastNotifyAt = performance.now();
      if (!this.disposed) this.changes.fire();
    }, wait);
  }

  /** Watches the home, the folders above the session folders, then the most recently written session folders. */
  private updateWatches(): void {
    this.dirsChanged = false;
    const newest = new Map<string, number>();
    for (const [key, { identity }] of this.entries) {
      const dir = parentOf(key);
      newest.set(dir, Math.max(newest.get(dir) ?? -Infinity, identity.mtimeMs));
    }
    const branches: string[] = [];
    const leaves: string[] = [];
    for (const dir of this.knownDirs) (this.depthOf(dir) < this.format.leafDepth ? branches : leaves).push(dir);
    leaves.sort((a, b) => (newest.get(b) ?? -Infinity) - (newest.get(a) ?? -Infinity));
    this.watches?.update([...branches, ...leaves]);
  }

  // ---- the persistent cache -----------------------------------------------------------------------

  /** The cached summaries as entries: a file still of the same identity is not read again. */
  private async loadCache(): Promise<void> {
    const cacheDir = this.options.cacheDir;
    if (cacheDir === undefined) return;
    const home = path.resolve(this.home);
    const realHome = await fsp.realpath(home).catch(() => home);
    const realCacheDir = await fsp.realpath(cacheDir).catch(() => path.resolve(cacheDir));
    if ([path.resolve(cacheDir), realCacheDir].some((dir) => isWithin(dir, home) || isWithin(dir, realHome))) {
      this.log(`${this.agent} store: cache directory ${cacheDir} is inside ${this.home}; not using a persistent cache`);
      return;
    }
    this.cacheRoot = foreignCacheRoot(this.agent, realHome);
    this.cacheFile = summaryCacheFile(cacheDir, this.cacheRoot);
    // Killed writes' leftovers go; a write in progress elsewhere stays.
    void removeStaleTempFiles(cacheDir).catch(() => undefined);
    const cached = await loadSummaryCache(this.cacheFile, this.cacheRoot);
    for (const [key, entry] of cached) {
      if (!this.isSessionKey(key)) continue;
      this.entries.set(key, { identity: entry.identity, summary: fromCached(this.agent, entry) });
      this.addToDir(key);
    }
  }

  /** Whether a cache key names a session file where this agent keeps them (a cache line is never trusted). */
  private isSessionKey(key: string): boolean {
    const parts = key.split('/');
    if (parts.length !== this.format.leafDepth + 2 || parts[0] !== this.format.base) return false;
    if (parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('\\'))) return false;
    return this.format.isSessionFile(parts[parts.length - 1]!);
  }

  /**
   * The entries as cache lines. A write in progress finishes even when the store is disposed meanwhile
   * (a CLI disposes its stores as soon as it answered; a few thousand lines take milliseconds), and
   * processes wait for it with {@link foreignCacheWritesSettled}; no write starts after.
   */
  private *cachedEntries(): Generator<[string, CachedSummary]> {
    // The listed files first, in store order: a restart loads the entries in that order, so its first
    // listing is built already sorted (the sort then only checks it).
    const written = new Set<string>();
    for (const summary of this.listing) {
      const key = this.pathById.get(summary.id);
      const entry = key === undefined ? undefined : this.entries.get(key);
      if (key === undefined || entry === undefined || entry.readFailed === true || written.has(key)) continue;
      written.add(key);
      yield [key, toCached(entry.identity, entry.summary)];
    }
    for (const [key, entry] of this.entries) {
      if (entry.readFailed === true || written.has(key)) continue;
      yield [key, toCached(entry.identity, entry.summary)];
    }
  }

  private scheduleCacheSave(): void {
    if (this.cacheFile === undefined || !this.cacheStale || this.cacheTimer !== undefined || this.disposed) return;
    this.cacheTimer = this.timer(() => {
      this.cacheTimer = undefined;
      this.saveCache();
    }, this.tuning.cacheSaveDelayMs);
  }

  /** Starts writing the cache now, when it is stale and no write is in progress (else one is scheduled). */
  private saveCache(): void {
    const cacheFile = this.cacheFile;
    if (cacheFile === undefined || this.disposed || !this.cacheStale) return;
    if (this.cacheSaving) return this.scheduleCacheSave();
    this.cacheStale = false;
    this.cacheSaving = true;
    // The entries are iterated lazily while the queue may change them: a change made meanwhile
    // marks the cache stale again, and the next save writes it.
    const write = saveSummaryCache(cacheFile, this.cacheRoot, this.cachedEntries())
      .catch((error: unknown) => {
        this.cacheStale = true;
        if (this.disposed || this.cacheFailureLogged) return;
        this.cacheFailureLogged = true;
        this.log(`${this.agent} store: cannot write the cache ${cacheFile}: ${(error as Error).message}`);
      })
      .finally(() => {
        this.cacheSaving = false;
        cacheWrites.delete(write);
        this.scheduleCacheSave();
      });
    cacheWrites.add(write);
  }
}

function sameRow(a: StoredSessionSummary, b: StoredSessionSummary): boolean {
  return a === b || (a.id === b.id && a.cwd === b.cwd && a.createdAt === b.createdAt && a.title === b.title && a.agent === b.agent);
}

/** The folder of a home-relative key ('' for a top-level one). */
function parentOf(key: string): string {
  const slash = key.lastIndexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}
