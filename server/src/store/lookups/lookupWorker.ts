/**
 * The lookup worker's entry (run by `worker_threads`, see earlyLookups.ts). While a restarting
 * store loads its index cache, this thread makes the first scan's lookups: it lists the root and
 * each project directory, and looks up the transcript names of every session directory, exactly
 * as discovery would, posting each project directory as soon as it is done. Synchronous calls: the
 * thread has nothing else to do. A call that waits for the disk ends the walk (see quickSync.ts):
 * the store's own lookups then go through the thread pool, in parallel.
 */
import { lstatSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { QuickSync } from '../quickSync';
import { type EntryKindCode, type LookupMessage, type LookupRequest, type ProjectLookups } from './protocol';

const port = parentPort;
if (!port) throw new Error('lookupWorker.js runs only as a worker thread');

function kindCode(entry: Dirent | Stats): EntryKindCode {
  return entry.isSymbolicLink() ? 3 : entry.isDirectory() ? 2 : entry.isFile() ? 1 : 4;
}

const request = workerData as LookupRequest;
const timing = new QuickSync(undefined, request.slowCallMs);

/** `call`'s result, or undefined when it throws (discovery leaves such an entry out too); timed. */
function attempt<T>(call: () => T): T | undefined {
  try {
    return timing.call(call);
  } catch {
    return undefined;
  }
}

function post(message: LookupMessage, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

/** One project directory; undefined when calls turned slow meanwhile (the walk stops). */
function lookUpProject(root: string, project: string, leafNames: readonly string[]): ProjectLookups | undefined {
  const projectPath = root + path.sep + project;
  const entries = attempt(() => readdirSync(projectPath, { withFileTypes: true }));
  if (!timing.quick) return undefined;
  if (entries === undefined) return { kind: 'project', project, listed: false, names: '', kinds: new Uint8Array(0), leaves: new Uint8Array(0), identities: new Float64Array(0) };
  let names = '';
  const kinds = new Uint8Array(entries.length);
  const leaves: number[] = [];
  const identities: number[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    names += `${entry.name}/`;
    const kind = (kinds[i] = kindCode(entry));
    if (kind !== 2) continue;
    const sessionPath = projectPath + path.sep + entry.name + path.sep;
    for (const leaf of leafNames) {
      const stats = attempt(() => lstatSync(sessionPath + leaf, { throwIfNoEntry: false }));
      if (!timing.quick) return undefined;
      const leafKind = stats === undefined ? 0 : kindCode(stats);
      leaves.push(leafKind);
      if (leafKind === 1) identities.push(stats!.size, stats!.mtimeMs, stats!.ctimeMs, stats!.ino, stats!.dev);
    }
  }
  return { kind: 'project', project, listed: true, names, kinds, leaves: Uint8Array.from(leaves), identities: Float64Array.from(identities) };
}

function walk({ root, leafNames }: LookupRequest): boolean {
  const rootEntries = attempt(() => readdirSync(root, { withFileTypes: true }));
  if (rootEntries === undefined || !timing.quick) return false;
  // A root's name ends with a separator only when it is a file system's root.
  const base = root.endsWith(path.sep) ? root.slice(0, -1) : root;
  const projects = rootEntries.filter((entry) => kindCode(entry) === 2).map((entry) => entry.name);
  post({ kind: 'root', projects });
  for (const project of projects) {
    const found = lookUpProject(base, project, leafNames);
    if (found === undefined) return false;
    post(found, [found.kinds.buffer as ArrayBuffer, found.leaves.buffer as ArrayBuffer, found.identities.buffer as ArrayBuffer]);
  }
  return true;
}

post({ kind: 'done', complete: walk(request) });
