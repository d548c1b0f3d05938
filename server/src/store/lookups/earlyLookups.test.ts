import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../../test/support/conformance';
import { nodeDirectoryFiles, type DirectoryFiles } from '../directoryFiles';
import { discover, discoverRootLevel, TRANSCRIPT_FILE_NAMES, type DiscoveryResult } from '../discovery';
import { DiskSessionStore } from '../diskStore';
import { relativeLogPath, TRANSCRIPT_NAMES } from '../layout';
import { DEMO_1, DEMO_2 } from '../../testing/testLogs';
import { EarlyLookups } from './earlyLookups';

let base: string;
let root: string;
let workerFile: string;
const started: EarlyLookups[] = [];

function file(rel: string, content = 'x\n'): void {
  const full = path.join(root, rel);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, content);
}

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
  // Every kind of entry discovery tells apart, in two project directories and more.
  file('--p--/a/session.jsonl', 'a\n');
  // Every number of an identity told apart: a modification time unlike the change time.
  utimesSync(path.join(root, '--p--', 'a', 'session.jsonl'), new Date(2026, 0, 2), new Date(2026, 0, 1));
  file('--p--/b/session.jsonl.zstd', 'bb\n');
  file('--p--/b/session.jsonl.zstd.0123456789ab.tmp');
  file('--p--/c/notes.txt');
  file('--p--/both/session.jsonl');
  file('--p--/both/session.jsonl.zstd', 'longer\n');
  mkdirSync(path.join(root, '--p--', 'dir-named-like-a-transcript', 'session.jsonl'), { recursive: true });
  file('--p--/flat.jsonl');
  file('--p--/readme.md');
  mkdirSync(path.join(root, '--p--', 'empty-session'), { recursive: true });
  file('--q--/x/session.jsonl', 'x\n');
  file('.hidden/d/session.jsonl');
  file('stray-file.jsonl');
  file('../elsewhere/proj/f/session.jsonl');
  file('../elsewhere/g/session.jsonl');
  symlinkSync(path.join(base, 'elsewhere', 'proj'), path.join(root, '--linked-project--'));
  symlinkSync(path.join(base, 'elsewhere', 'g'), path.join(root, '--p--', 'linked-session'));
  mkdirSync(path.join(root, '--p--', 'h'));
  symlinkSync(path.join(base, 'elsewhere', 'g', 'session.jsonl'), path.join(root, '--p--', 'h', 'session.jsonl'));
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

/** A result with its lists in one order, to compare discoveries that may list in different orders. */
function sorted(result: DiscoveryResult): unknown {
  return {
    transcripts: [...result.transcripts].sort((x, y) => (x.key < y.key ? -1 : 1)),
    seen: [...result.seen].sort(([x], [y]) => (x < y ? -1 : 1)),
    problems: [...result.problems].sort((x, y) => (x.key < y.key ? -1 : 1)),
    directories: [...result.directories].sort(),
  };
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
      const scope = { kind: 'project', projectDir } as const;
      const prefetched = await lookups.project(projectDir);
      expect(prefetched, projectDir).toBeDefined();
      const early = await discover(root, scope, nodeDirectoryFiles, prefetched);
      expect(sorted(early), projectDir).toEqual(sorted(await discover(root, scope)));
    }
  });

  it('leave discovery no directory to list and no transcript to look up', async () => {
    const lookups = await walked();
    const { files, readdirs, lstats } = counting();
    const prefetched = await lookups.project('--p--');
    const result = await discover(root, { kind: 'project', projectDir: '--p--' }, files, prefetched);
    expect(result.seen.get('--p--/both/session.jsonl.zstd')).toMatchObject({ size: 'longer\n'.length });
    expect(result.seen.get('--p--/a/session.jsonl')).toMatchObject({ mtimeMs: new Date(2026, 0, 1).getTime() });
    expect(readdirs).toEqual([]);
    // Only the project directory itself, which a project scope always looks at first.
    expect(lstats).toEqual([path.join(root, '--p--')]);
    const { files: alone, readdirs: readdirsAlone, lstats: lstatsAlone } = counting();
    await discover(root, { kind: 'project', projectDir: '--p--' }, alone);
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
      const result = await discover(root, { kind: 'project', projectDir }, files, prefetched);
      expect(sorted(result)).toEqual(sorted(await discover(root, { kind: 'project', projectDir })));
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
  /** Polls until `condition` holds, failing after a generous deadline (no timing is asserted). */
  async function until(condition: () => boolean, deadlineMs = 20_000): Promise<void> {
    const started = Date.now();
    while (!condition()) {
      if (Date.now() - started > deadlineMs) throw new Error('condition not met before the deadline');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

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
    const demo2 = path.join(storeRoot, relativeLogPath('/home/alice/proj', 'demo-2', 'raw'));
    for (const [lines, file] of [[DEMO_1, path.join(storeRoot, relativeLogPath('/home/alice/proj', 'demo-1', 'raw'))], [DEMO_2, demo2]] as const) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, lines.join('\n') + '\n');
    }
    // A first run writes the index cache; a transcript then changes before the restart.
    const first = new DiskSessionStore({ root: storeRoot, cacheDir }, { lookupWorkerFile: undefined, cacheSaveDelayMs: 0 });
    await first.whenIndexed();
    await until(() => existsSync(cacheDir) && readdirSync(cacheDir).some((name) => name.endsWith('.jsonl')));
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
