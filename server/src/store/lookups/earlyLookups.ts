/**
 * The first scan's lookups, made early in a worker thread (lookupWorker.ts): a restart of a large
 * store spends most of its main thread on two things, loading the index cache and looking up every
 * transcript (two `lstat`s per session directory), and only the first needs the main thread. The
 * worker starts once the cache turns out large (see cacheWriter.ts: a small store's lookups take
 * less than the worker's start) and posts each project directory when it is done; the scan of a
 * project directory waits for its message, and discovery then takes each directory's entries
 * from it instead of the disk, once. What the worker did not post (it stopped at lookups that
 * waited for the disk, failed, or a project directory came later) discovery looks up itself.
 *
 * Looking early changes nothing about freshness: the first scan's lookups were never newer than
 * the moment they were made, and the catch-up rescan after the first index (its directories then
 * watched) looks at the disk again.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { NamedEntry, PrefetchedEntries } from '../discovery';
import { reapplyRuntimeV8Flags } from '../runtimeV8Flags';
import { ENTRY_KINDS, IDENTITY_FIELDS, type LookupMessage, type LookupRequest, type ProjectLookups } from './protocol';

/** Off only in the bench's variant build without the lookup worker (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_EARLY_LOOKUPS: boolean | undefined;
const EARLY_LOOKUPS_ON = typeof DSH_DEVICE_EARLY_LOOKUPS === 'undefined' || DSH_DEVICE_EARLY_LOOKUPS;

/** The worker entry: next to this module in tsc's output, and beside the server's bundle. */
export const LOOKUP_WORKER_FILE = path.join(__dirname, 'lookupWorker.js');

/**
 * The worker's young generation at most (MB): every lookup leaves a `Stats` object behind, and V8
 * would grow the young generation for that garbage alone.
 */
const WORKER_YOUNG_GENERATION_MB = 2;

type Waiter = (entries: PrefetchedEntries | undefined) => void;

/** One root's early lookups; see the module comment. */
export class EarlyLookups {
  private worker: Worker | undefined;
  private readonly arrived = new Map<string, ProjectLookups>();
  private readonly waiting = new Map<string, Waiter>();
  /** The project directories the worker will post, once it has listed the root. */
  private coming: Set<string> | undefined;
  /** The worker posts nothing more: what it did not post, discovery looks up itself. */
  private done = false;
  private readonly walked: Promise<boolean>;
  private walkedWith: (complete: boolean) => void = () => undefined;
  private flagsReapplied = false;

  /** Starts the worker; undefined when its file is missing or it cannot start (discovery then looks itself). */
  static start(request: LookupRequest, workerFile: string, log: (message: string) => void): EarlyLookups | undefined {
    // The plain path: discovery makes every lookup itself.
    if (!EARLY_LOOKUPS_ON || !existsSync(workerFile)) return undefined;
    let worker: Worker;
    try {
      worker = new Worker(workerFile, { workerData: request, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    } catch (error) {
      log(`cannot start the lookup worker: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
    return new EarlyLookups(worker, request.leafNames);
  }

  private constructor(
    worker: Worker,
    private readonly leafNames: readonly string[],
  ) {
    this.worker = worker;
    this.walked = new Promise((resolve) => (this.walkedWith = resolve));
    // Never what keeps a process alive: a CLI that has its answer exits.
    worker.unref();
    worker.on('message', (message: LookupMessage) => this.received(message));
    worker.on('error', () => this.ended(false));
    worker.on('messageerror', () => this.ended(false));
    worker.on('exit', () => this.ended(false));
  }

  /**
   * Project directory `projectDir`'s entries, once the worker has posted them; undefined when it
   * will not (discovery then looks at the directory itself). Each project directory is handed out once.
   */
  project(projectDir: string): Promise<PrefetchedEntries | undefined> {
    const found = this.arrived.get(projectDir);
    if (found !== undefined) {
      this.arrived.delete(projectDir);
      return Promise.resolve(this.entriesOf(found));
    }
    // Asked for again while its message is awaited: the first ask gets it.
    if (this.done || (this.coming !== undefined && !this.coming.has(projectDir)) || this.waiting.has(projectDir)) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiting.set(projectDir, resolve));
  }

  /** Resolves when the worker posts nothing more: true when it walked the whole root. @forTests */
  whenWalked(): Promise<boolean> {
    return this.walked;
  }

  /** Stops the worker (if still walking) and forgets what it posted; later calls find nothing. */
  dispose(): void {
    const worker = this.worker;
    this.ended(false);
    this.arrived.clear();
    void worker?.terminate().catch(() => undefined);
  }

  private received(message: LookupMessage): void {
    if (this.done) return;
    this.reapplyFlags();
    if (message.kind === 'root') {
      this.coming = new Set(message.projects);
      for (const [projectDir, resolve] of this.waiting) {
        if (this.coming.has(projectDir)) continue;
        this.waiting.delete(projectDir);
        resolve(undefined);
      }
    } else if (message.kind === 'project') {
      const resolve = this.waiting.get(message.project);
      if (resolve === undefined) {
        this.arrived.set(message.project, message);
        return;
      }
      this.waiting.delete(message.project);
      resolve(this.entriesOf(message));
    } else {
      this.ended(message.complete);
    }
  }

  /** The worker's start reset the process's V8 flags on Node 20 and 22 (see runtimeV8Flags.ts). */
  private reapplyFlags(): void {
    if (this.flagsReapplied) return;
    this.flagsReapplied = true;
    reapplyRuntimeV8Flags();
  }

  /** The worker posts nothing more (it finished, failed or was stopped): nobody waits for it. */
  private ended(complete: boolean): void {
    if (this.done) return;
    this.done = true;
    this.reapplyFlags();
    this.worker = undefined;
    this.walkedWith(complete);
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const resolve of waiting) resolve(undefined);
  }

  /**
   * A project directory's message as discovery takes it: the listing (`''`) and each session
   * directory's leaves, by name. Undefined (discovery looks itself) when the worker could not list
   * the directory, or the message is not one it writes.
   */
  private entriesOf(found: ProjectLookups): PrefetchedEntries | undefined {
    if (!found.listed) return undefined;
    const names = found.names.split('/');
    const listing: NamedEntry[] = [];
    const sessions = new Map<string, NamedEntry[]>();
    let leaf = 0;
    let field = 0;
    const ids = found.identities;
    for (let i = 0; i < found.kinds.length; i++) {
      const name = names[i];
      const code = found.kinds[i]!;
      const kind = kindOf(code);
      if (kind === undefined || name === undefined) return undefined;
      listing.push({ name, kind, identity: undefined });
      if (code !== 2) continue;
      const leaves: NamedEntry[] = [];
      for (const leafName of this.leafNames) {
        const leafCode = found.leaves[leaf++];
        if (leafCode === 0) continue;
        const leafKind = kindOf(leafCode);
        if (leafKind === undefined || (leafKind === 'file' && field + IDENTITY_FIELDS > ids.length)) return undefined;
        if (leafKind !== 'file') {
          leaves.push({ name: leafName, kind: leafKind, identity: undefined });
          continue;
        }
        const identity = { size: ids[field]!, mtimeMs: ids[field + 1]!, ctimeMs: ids[field + 2]!, ino: ids[field + 3]!, dev: ids[field + 4]! };
        field += IDENTITY_FIELDS;
        leaves.push({ name: leafName, kind: 'file', identity });
      }
      sessions.set(name, leaves);
    }
    let listed: NamedEntry[] | undefined = listing;
    return {
      take(rel: string): NamedEntry[] | undefined {
        if (rel === '') {
          const entries = listed;
          listed = undefined;
          return entries;
        }
        const entries = sessions.get(rel);
        sessions.delete(rel);
        return entries;
      },
    };
  }
}

/** An entry's kind by its code; undefined for 'missing' and for codes the worker never writes. */
function kindOf(code: number | undefined): NamedEntry['kind'] | undefined {
  const kind = code === undefined ? undefined : ENTRY_KINDS[code];
  return kind === 'missing' ? undefined : kind;
}
