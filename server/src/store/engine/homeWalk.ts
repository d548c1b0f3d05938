/**
 * Looking at an agent home: walking its folders (the whole home, or the folders and files the
 * watches named), stat'ing session files and reading those whose identity changed through the
 * format adapter. Results go into the home's index; nothing here schedules anything.
 */
import { promises as fsp, readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import type { CacheRule, FormatAdapter, IndexFormat } from '../formats/adapter';
import { quickSync } from '../quickSync';
import { fileIdentity, sameIdentity, writtenRecently, type FileIdentity } from '../transcriptFiles';
import type { TranscriptSummary } from '../transcriptSummary';
import { foreignIndexFormat } from './foreignFormat';
import type { ForeignFiles, ForeignResume } from './foreignRead';
import { parentOf, type HomeEntry, type HomeIndex } from './homeIndex';
import { readProjectMarker, readProjectRegistry, readTitleIndex } from './homeSideFiles';

/** A walk lets the event loop run after this much synchronous work. */
const SLICE_MS = 5;

/** What a walk needs besides the index. */
export interface HomeWalkOptions {
  /** Opens session files for the listing's reads (tests count reads); default: the file system. */
  files?: ForeignFiles;
  /** Diagnostic logging (files skipped). */
  log: (message: string) => void;
}

export class HomeWalk {
  /** The home as `path.join` writes it, with a separator after: what {@link full} puts before a key. */
  private readonly homePrefix: string;
  private readonly reported = new Set<string>();
  /** The adapter as an index format: what a file's bytes mean. */
  private readonly reader: IndexFormat<TranscriptSummary, ForeignResume>;
  private sliceStart = 0;
  /** Reads that folded only the appended bytes (for tests and figures). */
  resumedReads = 0;
  /**
   * Whether every file read keeps what resumes it (after the first listing: a file read then just
   * changed); before, only a recently written one.
   */
  keepEveryState = false;

  constructor(
    private readonly index: HomeIndex,
    private readonly format: FormatAdapter,
    readonly home: string,
    private readonly options: HomeWalkOptions,
  ) {
    this.homePrefix = path.join(home, '_').slice(0, -1);
    this.reader = foreignIndexFormat(format, options.files);
  }

  /** How the format's index is cached. */
  get cacheRule(): CacheRule {
    return this.reader.cache;
  }

  /** The full path of a home-relative key. */
  full(key: string): string {
    // Concatenated, not joined: a walk makes one per session file. Keys come from folder listings or
    // checked cache lines (no empty, `.` or `..` part), so `path.join` would change nothing.
    if (key === '') return this.home;
    return this.homePrefix + (path.sep === '/' ? key : key.replaceAll('/', path.sep));
  }

  /** -1 for the home, 0 for `base`, then one more per folder below it. */
  depthOf(dir: string): number {
    return dir === '' ? -1 : dir.split('/').length - 1;
  }

  /** Walks the whole home: every folder listed, every session file stat'ed, changed ones read. */
  async fullScan(): Promise<void> {
    const { index } = this;
    const seenDirs = new Set<string>();
    await this.scanDir('', true, seenDirs);
    // Folders (and their files) the walk did not meet are gone, cached ones included.
    for (const dir of [...index.knownDirs]) if (!seenDirs.has(dir)) index.dropDir(dir);
    for (const [dir, names] of [...index.filesByDir]) if (!seenDirs.has(dir)) for (const name of [...names]) index.removeFile(`${dir}/${name}`);
  }

  /**
   * What the watches reported: those folders listed again, those files stat'ed again; then the title
   * index, if it changed or sessions it was not read for appeared.
   */
  async lookAgain(dirs: readonly string[], files: readonly string[]): Promise<void> {
    const { index } = this;
    for (const dir of dirs) if (dir === '' || index.knownDirs.has(dir)) await this.scanDir(dir, false);
    for (const key of files) if (index.knownDirs.has(parentOf(key))) await this.refreshFile(key);
    await this.refreshNames();
  }

  /**
   * Looks at one folder: the home (is `base` there; the agent's title index), a folder above the session
   * folders (its subfolders; new ones walked whole), or a session folder (its files). `deep`: walk
   * every subfolder, known or not.
   */
  private async scanDir(dir: string, deep: boolean, seenDirs?: Set<string>): Promise<void> {
    const depth = this.depthOf(dir);
    if (depth === -1) return this.scanHome(deep, seenDirs);
    let entries: Dirent[];
    try {
      // Synchronous while that is quick (see quickSync.ts), as dsh's discovery lists its folders.
      const full = this.full(dir);
      entries = quickSync.quick ? quickSync.call(() => readdirSync(full, { withFileTypes: true })) : await fsp.readdir(full, { withFileTypes: true });
    } catch {
      this.index.dropDir(dir);
      return;
    }
    seenDirs?.add(dir);
    this.index.addDir(dir);
    if (depth < this.format.leafDepth) return this.scanBranch(dir, entries, deep, seenDirs);
    return this.scanLeaf(dir, entries);
  }

  /** The home itself: whether the sessions folder is there, then the title index (for the sessions found). */
  private async scanHome(deep: boolean, seenDirs?: Set<string>): Promise<void> {
    await this.refreshRegistry();
    const base = this.format.base;
    const baseDir = this.full(base);
    const isDir = quickSync.quick
      ? quickSync.call(() => statSync(baseDir, { throwIfNoEntry: false })?.isDirectory() === true)
      : await fsp.stat(baseDir).then((stats) => stats.isDirectory(), () => false);
    if (!isDir) this.index.dropDir(base);
    else if (deep || !this.index.knownDirs.has(base)) await this.scanDir(base, true, seenDirs);
    await this.refreshNames();
  }

  /** A folder above the session folders: its subfolders (new ones walked whole); gone ones forgotten. */
  private async scanBranch(dir: string, entries: Dirent[], deep: boolean, seenDirs?: Set<string>): Promise<void> {
    const { index } = this;
    const depth = this.depthOf(dir);
    if (depth === 1) await this.refreshMarker(dir, entries);
    // Above the leaves, every folder; at the leaves, only those of the leaf name (when the format has one).
    const { leafName } = this.format;
    const wanted = (entry: Dirent) => entry.isDirectory() && (leafName === undefined || depth + 1 < this.format.leafDepth || entry.name === leafName);
    const children = new Set(entries.filter(wanted).map((entry) => entry.name));
    for (const child of children) {
      const key = `${dir}/${child}`;
      if (deep || !index.knownDirs.has(key)) await this.scanDir(key, true, seenDirs);
    }
    for (const known of [...index.knownDirs]) if (parentOf(known) === dir && !children.has(path.posix.basename(known))) index.dropDir(known);
  }

  /** A session folder: its session files stat'ed (changed ones read), gone ones forgotten. */
  private async scanLeaf(dir: string, entries: Dirent[]): Promise<void> {
    // A known name passed isSessionFile when it was added.
    const known = this.index.filesByDir.get(dir);
    const names = entries.filter((entry) => entry.isFile() && (known?.has(entry.name) === true || this.format.isSessionFile(entry.name))).map((entry) => entry.name);
    const present = new Set(names);
    for (const name of [...(known ?? [])]) if (!present.has(name)) this.index.removeFile(`${dir}/${name}`);
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
    const known = this.index.entries.get(key);
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
    const { index } = this;
    const file = this.full(key);
    let stats;
    try {
      // Synchronous while that is quick, as dsh's scans do (see quickSync.ts): a few µs, against
      // ~20 µs of CPU for a promise through the thread pool, but never blocking on a cold disk.
      stats = quickSync.quick ? quickSync.call(() => statSync(file)) : await fsp.stat(file);
    } catch {
      index.removeFile(key);
      return;
    }
    if (!stats.isFile()) return index.removeFile(key);
    const identity = fileIdentity(stats);
    const known = index.entries.get(key);
    if (known !== undefined && known.readFailed !== true && sameIdentity(known.identity, identity)) return;
    const read = await this.read(key, identity, known);
    if (read === 'gone') return index.removeFile(key);
    if ((read.summary.headerProblem !== undefined || read.readFailed) && !this.reported.has(key)) {
      this.reported.add(key);
      this.options.log(`${this.format.agent} store: skipped ${file}: ${read.why}`);
    }
    index.set(key, read.readFailed ? { identity, summary: read.summary, readFailed: true } : { identity, summary: read.summary }, read.resume);
  }

  /** One file read through the adapter: its facts (a header problem: why it lists no session); 'gone' when it went meanwhile. */
  private async read(
    key: string,
    identity: FileIdentity,
    known: HomeEntry | undefined,
  ): Promise<{ summary: TranscriptSummary; readFailed: boolean; resume?: ForeignResume; why: string } | 'gone'> {
    // A file written while we run (or shortly before) is likely to be appended to: keep what resumes it.
    // At the first listing only a recent one; later, every file read (it just changed).
    const keepState = this.keepEveryState || writtenRecently(identity, Date.now());
    const request = { root: this.home, key, file: this.full(key), identity, previous: known?.identity, resume: known?.resume, keepState, bytes: identity.size };
    const outcome = await this.reader.readFacts(request, undefined);
    if (outcome.kind === 'failed') {
      const code = (outcome.error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'gone';
      // Not a fact about the file (a permission, an I/O error): keep what was known, try again later.
      const why = `cannot read: ${code ?? String(outcome.error)}`;
      return { summary: known?.summary ?? { headerProblem: why, capturedThroughSeq: null, eventCount: 0 }, readFailed: true, why };
    }
    if (outcome.resumed) this.resumedReads++;
    const { facts } = outcome;
    return { summary: facts, readFailed: false, ...(outcome.resume === undefined ? {} : { resume: outcome.resume }), why: facts.headerProblem ?? '' };
  }

  /** The cwds of the agent's project registry (if it keeps one), read again when it changed. */
  private async refreshRegistry(): Promise<void> {
    const projectIndex = this.format.projectIndex;
    if (projectIndex === undefined) return;
    const read = await readProjectRegistry(projectIndex, path.join(this.home, projectIndex.file), this.index.registryIdentity);
    if (read !== 'unchanged') this.index.setRegistryCwds(read.cwds, read.identity);
  }

  /** A project folder's marker naming its cwd (if the format keeps them), read again when it changed. */
  private async refreshMarker(dir: string, entries: Dirent[]): Promise<void> {
    const projectIndex = this.format.projectIndex;
    if (projectIndex === undefined) return;
    if (!entries.some((entry) => entry.isFile() && entry.name === projectIndex.marker)) return this.index.setMarker(dir, undefined, undefined);
    const read = await readProjectMarker(projectIndex, path.join(this.full(dir), projectIndex.marker), this.index.markerIdentity(dir));
    if (read !== 'unchanged') this.index.setMarker(dir, read.cwd, read.identity);
  }

  /**
   * The titles of the agent's title index (if it keeps one) for the sessions known, read again when
   * it changed or sessions it was not read for appeared.
   */
  private async refreshNames(): Promise<void> {
    const titleIndex = this.format.titleIndex;
    if (titleIndex === undefined) return;
    const ids = this.index.sessionIds();
    const read = await readTitleIndex(titleIndex, path.join(this.home, titleIndex.file), this.index.namesRead, ids);
    if (read !== 'unchanged') this.index.setNames(read.titles, read.identity, ids);
  }
}
