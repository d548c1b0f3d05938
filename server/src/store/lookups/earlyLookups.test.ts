import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../../test/support/conformance';
import { pollUntil } from '../../../../test/support/lspClient';
import { nodeDirectoryFiles, type DirectoryFiles } from '../directoryFiles';
import { discover, discoverRootLevel } from '../discovery';
import { dshLayout } from '../formats/dshLayout';

const TRANSCRIPT_FILE_NAMES = dshLayout.sessionFileNames ?? [];
import { DiskSessionStore } from '../diskStore';
import { relativeLogPath, TRANSCRIPT_NAMES } from '../layout';
import { sortedDiscovery, writeDiscoveryTree, writeTreeFile } from '../../testing/discoveryTree';
import { DEMO_1, DEMO_2 } from '../../testing/testLogs';
import { EarlyLookups } from './earlyLookups';

let base: string;
let root: string;
let workerFile: string;
const started: EarlyLookups[] = [];

/** The worker as the server ships it (JavaScript), built from these sources. */
beforeAll(async () => {
  base = mkdtempSync(path.join(os.tmpdir(), 'dsh-early-lookups-'));
  workerFile = path.join(base, 'built', 'lookupWorker.js');
  await build({
    entryPoints: [path.join(REPO_ROOT, 'server', 'src', 'store', 'lookups', 'lookupWorker.ts')],
    outfile: workerFile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'warning',
  });
  root = path.join(base, 'sessions');
  // Every kind of entry discovery tells apart, in two project directories and more, with sizes told apart.
  writeDiscoveryTree(root);
  writeTreeFile(root, '--p--/a/session.jsonl', 'a\n');
  // Every number of an identity told apart: a modification time unlike the change time.
  utimesSync(path.join(root, '--p--', 'a', 'session.jsonl'), new Date(2026, 0, 2), new Date(2026, 0, 1));
  writeTreeFile(root, '--p--/b/session.jsonl.zstd', 'bb\n');
  writeTreeFile(root, '--p--/both/session.jsonl.zstd', 'longer\n');
  writeTreeFile(root, '--q--/x/session.jsonl', 'x\n');
});

afterAll(() => {
  for (const lookups of started) lookups.dispose();
  rmSync(base, { recursive: true, force: true });
});

function start(options: { slowCallMs?: number; file?: string } = {}): EarlyLookups | undefined {
  const lookups = EarlyLookups.start({ root, leafNames: TRANSCRIPT_FILE_NAMES, slowCallMs: options.slowCallMs }, options.file ?? workerFile, () => undefined);
  if (lookups) started.push(lookups);
  return lookups;
}

/** Lookups whose worker has walked the whole root. */
async function walked(): Promise<EarlyLookups> {
  const lookups = start()!;
  expect(await lookups.whenWalked()).toBe(true);
  return lookups;
}

/** The real file system, counting the synchronous lookups discovery makes through it. */
function counting(): { files: DirectoryFiles; readdirs: string[]; lstats: string[] } {
  const readdirs: string[] = [];
  const lstats: string[] = [];
  const files: DirectoryFiles = {
    ...nodeDirectoryFiles,
    readdirSync: (dir) => (readdirs.push(dir), nodeDirectoryFiles.readdirSync!(dir)),
    lstatSync: (entry) => (lstats.push(entry), nodeDirectoryFiles.lstatSync!(entry)),
  };
  return { files, readdirs, lstats };
}

async function projectDirectories(): Promise<string[]> {
  return (await discoverRootLevel(root)).directories;
}

describe('early lookups (a worker thread)', () => {
  it('give each project directory the discovery that looking at the disk gives', async () => {
    const lookups = await walked();
    const projects = await projectDirectories();
    expect(projects.sort()).toEqual(['--p--', '--q--', '.hidden']);
    for (const projectDir of projects) {
      const scope = { kind: 'dir', dir: projectDir } as const;
      const prefetched = await lookups.project(projectDir);
      expect(prefetched, projectDir).toBeDefined();
      const early = await discover(root, scope, nodeDirectoryFiles, prefetched);
      expect(sortedDiscovery(early), projectDir).toEqual(sortedDiscovery(await discover(root, scope)));
    }
  });

  it('leave discovery no directory to list and no transcript to look up', async () => {
    const lookups = await walked();
    const { files, readdirs, lstats } = counting();
    const prefetched = await lookups.project('--p--');
    const result = await discover(root, { kind: 'dir', dir: '--p--' }, files, prefetched);
    expect(result.seen.get('--p--/both/session.jsonl.zstd')).toMatchObject({ size: 'longer\n'.length });
    expect(result.seen.get('--p--/a/session.jsonl')).toMatchObject({ mtimeMs: new Date(2026, 0, 1).getTime() });
    expect(readdirs).toEqual([]);
    // Only the project directory itself, which a project scope always looks at first.
    expect(lstats).toEqual([path.join(root, '--p--')]);
    const { files: alone, readdirs: readdirsAlone, lstats: lstatsAlone } = counting();
    await discover(root, { kind: 'dir', dir: '--p--' }, alone);
    expect(readdirsAlone.length).toBe(1);
    expect(lstatsAlone.length).toBeGreaterThan(TRANSCRIPT_FILE_NAMES.length * 5);
  });

  it('hand each project directory and each of its directories out once', async () => {
    const lookups = await walked();
    const prefetched = (await lookups.project('--q--'))!;
    expect(prefetched.take('x')?.map((entry) => entry.name)).toEqual(['session.jsonl']);
    expect(prefetched.take('x')).toBeUndefined();
    expect(prefetched.take('')?.map((entry) => entry.name)).toEqual(['x']);
    expect(prefetched.take('')).toBeUndefined();
    expect(await lookups.project('--q--')).toBeUndefined();
  });

  it('have nothing for a project directory the root did not hold, or a link', async () => {
    const lookups = await walked();
    expect(await lookups.project('--created-later--')).toBeUndefined();
    expect(await lookups.project('--linked-project--')).toBeUndefined();
    expect(await lookups.project('--p--')).toBeDefined();
  });

  it('keep a project directory asked for before the worker posted it until it comes', async () => {
    const lookups = start()!;
    // Asked at once: no message can have come in the same turn.
    const asked = lookups.project('--q--');
    expect((await asked)?.take('x')?.map((entry) => entry.name)).toEqual(['session.jsonl']);
    expect(await lookups.whenWalked()).toBe(true);
  });

  it('have nothing for a project directory the root did not hold, even before the worker listed the root', async () => {
    const lookups = start()!;
    const asked = lookups.project('--created-later--');
    expect(await asked).toBeUndefined();
    expect(await lookups.project('--p--')).toBeDefined();
  });

  it('stop at calls that wait for the disk, and discovery then looks itself', async () => {
    // Every call counts as slow: the worker stops after the root's listing, before any project directory.
    const lookups = start({ slowCallMs: -1 })!;
    expect(await lookups.whenWalked()).toBe(false);
    for (const projectDir of await projectDirectories()) {
      const prefetched = await lookups.project(projectDir);
      expect(prefetched, projectDir).toBeUndefined();
      const { files, lstats } = counting();
      const result = await discover(root, { kind: 'dir', dir: projectDir }, files, prefetched);
      expect(sortedDiscovery(result)).toEqual(sortedDiscovery(await discover(root, { kind: 'dir', dir: projectDir })));
      expect(lstats.length).toBeGreaterThan(1);
    }
  });

  it('leave a project directory to discovery when its message is not one the worker writes', async () => {
    const odd = path.join(base, 'odd-worker.js');
    writeFileSync(
      odd,
      `const { parentPort } = require('node:worker_threads');
       parentPort.postMessage({ kind: 'root', projects: ['--p--', '--q--'] });
       parentPort.postMessage({ kind: 'project', project: '--p--', listed: true, names: 'a/', kinds: new Uint8Array([9]), leaves: new Uint8Array(0), identities: new Float64Array(0) });
       parentPort.postMessage({ kind: 'project', project: '--q--', listed: true, names: 'x/', kinds: new Uint8Array([2]), leaves: new Uint8Array([1, 0]), identities: new Float64Array(0) });
       parentPort.postMessage({ kind: 'done', complete: true });`,
    );
    const lookups = start({ file: odd })!;
    const [p, q] = [lookups.project('--p--'), lookups.project('--q--')];
    expect(await p).toBeUndefined();
    expect(await q).toBeUndefined();
    expect(await lookups.whenWalked()).toBe(true);
  });

  it('are not made without the worker file, and end with nothing when disposed', async () => {
    expect(start({ file: path.join(base, 'missing.js') })).toBeUndefined();
    const lookups = start()!;
    lookups.dispose();
    expect(await lookups.whenWalked()).toBe(false);
    expect(await lookups.project('--q--')).toBeUndefined();
  });
});

describe('a restart of the store', () => {
  async function listing(storeRoot: string, cacheDir: string, tuning: { lookupWorkerFile?: string; earlyLookupsCacheBytes?: number }) {
    const store = new DiskSessionStore({ root: storeRoot, cacheDir }, { lookupWorkerFile: undefined, cacheSaveDelayMs: 0, ...tuning });
    try {
      await store.whenIndexed();
      return await store.listSessions();
    } finally {
      store.dispose();
    }
  }

  it('of a large store looks up no transcript in the main thread, and lists what a restart without the worker lists', async () => {
    const storeRoot = path.join(base, 'restart');
    const cacheDir = path.join(base, 'restart-cache');
    for (const [id, lines] of [['demo-1', DEMO_1], ['demo-2', DEMO_2]] as const) writeTreeFile(storeRoot, relativeLogPath('/home/alice/proj', id, 'raw'), lines.join('\n') + '\n');
    const demo2 = path.join(storeRoot, relativeLogPath('/home/alice/proj', 'demo-2', 'raw'));
    // A first run writes the index cache; a transcript then changes before the restart.
    const first = new DiskSessionStore({ root: storeRoot, cacheDir }, { lookupWorkerFile: undefined, cacheSaveDelayMs: 0 });
    await first.whenIndexed();
    await pollUntil(() => (existsSync(cacheDir) && readdirSync(cacheDir).some((name) => name.endsWith('.jsonl'))) || undefined, 20_000, 'the index cache');
    first.dispose();
    appendFileSync(demo2, '{"type":"session/title","seq":17,"time":1767225900000,"data":{"title":"Renamed","messageSeqs":[],"source":{"kind":"user"}}}\n');

    /** The restart's listing, and the transcripts the main thread looked up for it. */
    async function restart(tuning: { lookupWorkerFile?: string; earlyLookupsCacheBytes?: number }) {
      const lstats: string[] = [];
      const lstatSync = nodeDirectoryFiles.lstatSync!;
      nodeDirectoryFiles.lstatSync = (entry) => (lstats.push(entry), lstatSync(entry));
      try {
        const sessions = await listing(storeRoot, cacheDir, tuning);
        const transcriptNames = new Set(Object.values(TRANSCRIPT_NAMES));
        return { sessions, transcriptLookups: lstats.filter((entry) => transcriptNames.has(path.basename(entry))) };
      } finally {
        nodeDirectoryFiles.lstatSync = lstatSync;
      }
    }
    // The store counts as large from a cache of 1 byte on.
    const early = await restart({ lookupWorkerFile: workerFile, earlyLookupsCacheBytes: 1 });
    expect(early.transcriptLookups).toEqual([]);
    expect(early.sessions.map((summary) => [summary.id, summary.title])).toEqual([
      ['demo-2', 'Renamed'],
      ['demo-1', 'Say hi'],
    ]);
    const alone = await restart({});
    expect(alone.transcriptLookups.length).toBeGreaterThan(0);
    expect(early.sessions).toEqual(alone.sessions);
    // A small cache (below the default size) is a small store: the main thread looks itself.
    const small = await restart({ lookupWorkerFile: workerFile });
    expect(small.transcriptLookups.length).toBe(alone.transcriptLookups.length);
    expect(small.sessions).toEqual(alone.sessions);
  });
});
