/**
 * A synthetic dsh store of N sessions in the canonical layout, written outside the repository
 * (under the OS temp dir) and reused by later runs with the same seed and size.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { relativeLogPath } from 'dsh-session-ls/dist/store/layout';
import { listTranscripts } from '../baselines/floor';
import { Corpus } from './corpus';
import { Random } from './random';
import { generateSessionLog, type SessionSpec } from './sessionLog';
import { FrameCompressor } from './frameCompressor';

/** Bump when the generated content changes, so that old stores are not reused. */
export const GENERATOR_VERSION = 2;

/** A generated store and what a correct reader must find in it. */
export interface GeneratedStore {
  generatorVersion: number;
  seed: number;
  sessions: number;
  /** The sessions root to hand to the server. */
  root: string;
  /** Expected label of every session (its latest title, else its id), keyed by id. */
  labelsFile: string;
  /** The distinct cwds the sessions were spread over. */
  cwds: string[];
  /** Ids of the logs used for `prepare`, by nominal uncompressed size. */
  prepare: { '1MB': string[]; '10MB': string[] };
  /** Transcript paths of the prepare sessions, same order. */
  preparePaths: { '1MB': string[]; '10MB': string[] };
  encodings: { zstd: number; raw: number };
  projectDirs: number;
  untitled: number;
  renamed: number;
  compacted: number;
  openTails: number;
  frames: number;
  /** How the transcripts' modification times were set ({@link MODIFICATION_TIMES}); absent in a store made before. */
  modificationTimes?: string;
  events: number;
  bytes: { uncompressed: number; onDisk: number };
  logBytes: { median: number; p90: number; p99: number; max: number };
  compression: string;
  generatedMs: number;
}

/** Options for `ensureStore`. */
export interface StoreOptions {
  sessions: number;
  seed: number;
  /** Share of sessions written as zstd (the rest raw). */
  zstdShare?: number;
  baseDir?: string;
  /** Include the 3 logs of ~1 MB and 3 of ~10 MB used by the prepare figures (default true). */
  prepareLogs?: boolean;
  log?: (message: string) => void;
}

const DAY = 86_400_000;
const EPOCH = Date.UTC(2025, 6, 1);
const BATCH_SESSIONS = 1500;

/**
 * The transcripts' modification times: the generator's epoch plus one second per transcript in
 * key order. A user's store holds sessions last written days to months ago, none being written
 * while dsh is not running; the store's age (when it was generated) must not change what the
 * server does with it (a recently written transcript keeps the state an append resumes from).
 */
export const MODIFICATION_TIMES = 'epoch-plus-key-order';

/**
 * The transcripts of a root in key order (project, then session directory, then file name, each
 * compared as a string), as {@link MODIFICATION_TIMES} numbers them.
 */
export function transcriptsInKeyOrder(root: string): string[] {
  const keyed = listTranscripts(root).map((file) => ({ file: file.path, segments: path.relative(root, file.path).split(path.sep) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
      if (a.segments[i] !== b.segments[i]) return a.segments[i] < b.segments[i] ? -1 : 1;
    }
    return a.segments.length - b.segments.length;
  });
  return keyed.map(({ file }) => file);
}

/** Sets every transcript's modification time as {@link MODIFICATION_TIMES} says. */
function setModificationTimes(root: string): void {
  transcriptsInKeyOrder(root).forEach((file, i) => {
    const seconds = EPOCH / 1000 + i;
    utimesSync(file, seconds, seconds);
  });
}

/** Where the store for these options lives. */
export function storeDir(options: StoreOptions): string {
  const suffix = `${options.zstdShare === undefined ? '' : `-z${Math.round(options.zstdShare * 100)}`}${options.prepareLogs === false ? '-noprep' : ''}`;
  return path.join(options.baseDir ?? os.tmpdir(), `dsh-bench-v${GENERATOR_VERSION}-s${options.seed}-n${options.sessions}${suffix}`);
}

/** Return the store for these options, generating it first unless a complete one already exists. */
export async function ensureStore(options: StoreOptions): Promise<GeneratedStore & { reused: boolean }> {
  const dir = storeDir(options);
  const manifestFile = path.join(dir, 'manifest.json');
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as GeneratedStore;
    if (manifest.generatorVersion === GENERATOR_VERSION && manifest.sessions === options.sessions && manifest.seed === options.seed) {
      // A store generated before the modification times were set gets them now.
      if (manifest.modificationTimes !== MODIFICATION_TIMES) writeManifest(manifestFile, withModificationTimes(manifest));
      return { ...manifest, modificationTimes: MODIFICATION_TIMES, reused: true };
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const manifest = withModificationTimes(await generateStore(dir, options));
  writeManifest(manifestFile, manifest);
  return { ...manifest, reused: false };
}

function withModificationTimes(manifest: GeneratedStore): GeneratedStore {
  setModificationTimes(manifest.root);
  return { ...manifest, modificationTimes: MODIFICATION_TIMES };
}

function writeManifest(manifestFile: string, manifest: GeneratedStore): void {
  writeFileSync(manifestFile + '.tmp', JSON.stringify(manifest, null, 2));
  renameSync(manifestFile + '.tmp', manifestFile);
}

/** Read the expected labels of a generated store. */
export function readExpectedLabels(store: GeneratedStore): Map<string, string> {
  return new Map(JSON.parse(readFileSync(store.labelsFile, 'utf8')) as [string, string][]);
}

function makeCwds(random: Random, count: number, corpusTopics: () => string): string[] {
  const users = ['alice', 'bob', 'dev', 'mei', 'ana'];
  const areas = ['src', 'work', 'code', 'projects', 'repos/github.com/acme'];
  const cwds = new Set<string>();
  const unusual = [
    '/srv/work space/日本',
    '/home/ana/Área de trabalho/app',
    '/',
    '/home/dev/trailing/',
    '/a//b/c-d',
    '/-x/y z',
    `/home/dev/${'deep/'.repeat(60)}project`,
    '/home/mei/😀-emoji',
    '/opt/tilde~dir/x',
  ];
  for (const cwd of unusual) if (cwds.size < count) cwds.add(cwd);
  while (cwds.size < count) {
    const name = corpusTopics().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'app';
    const sub = random.chance(0.3) ? `/${random.pick(['server', 'client', 'packages/core', 'docs', 'infra'])}` : '';
    cwds.add(`/home/${random.pick(users)}/${random.pick(areas)}/${name}-${random.int(1, 999)}${sub}`);
  }
  return [...cwds];
}

function sessionId(random: Random, index: number): string {
  // Real ids are UUIDv4; a few odd ones exercise the directory-name escaping.
  if (random.chance(0.003)) return random.pick([`session-${index}`, `x~y-${index}`, `{{sessionId}}-${index}`, `a b:${index}`, `Ünï-${index}`]);
  return random.uuid();
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function generateStore(dir: string, options: StoreOptions): Promise<GeneratedStore> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const random = new Random(options.seed * 7919 + options.sessions);
  const corpus = new Corpus(options.seed);
  const root = path.join(dir, 'sessions');
  mkdirSync(root, { recursive: true });
  const cwds = makeCwds(random, Math.max(12, Math.round(options.sessions / 25)), () => corpus.topic(random));
  const zstdShare = options.zstdShare ?? 0.9;
  const compressor = new FrameCompressor();
  const labels: [string, string][] = [];
  const sizes: number[] = [];
  const madeDirs = new Set<string>();
  const projectDirs = new Set<string>();
  const prepare: GeneratedStore['prepare'] = { '1MB': [], '10MB': [] };
  const preparePaths: GeneratedStore['preparePaths'] = { '1MB': [], '10MB': [] };
  const stats = { zstd: 0, raw: 0, untitled: 0, renamed: 0, compacted: 0, openTails: 0, frames: 0, events: 0, uncompressed: 0, onDisk: 0 };
  const ids: string[] = [];
  const usedIds = new Set<string>();
  let pending: Promise<void> = Promise.resolve();

  for (let first = 0; first < options.sessions; first += BATCH_SESSIONS) {
    const count = Math.min(BATCH_SESSIONS, options.sessions - first);
    const zstdLogs: { file: string; parts: Buffer[] }[] = [];
    const rawLogs: { file: string; data: Buffer }[] = [];
    for (let i = first; i < first + count; i++) {
      const prepareSize = options.prepareLogs === false ? undefined : i < 3 ? '1MB' : i < 6 ? '10MB' : undefined;
      let id = sessionId(random, i);
      while (usedIds.has(id)) id = random.uuid();
      usedIds.add(id);
      const tail = random.chance(0.001);
      const targetBytes = prepareSize === '1MB' ? 1_000_000 : prepareSize === '10MB' ? 10_000_000
        : tail ? random.int(1_000_000, 8_000_000) : Math.round(Math.min(6_000_000, Math.max(2_000, random.logNormal(40_000, 0.8))));
      const spec: SessionSpec = {
        id,
        cwd: random.chance(0.01) && !prepareSize ? undefined : cwds[random.zipfIndex(cwds.length)],
        // A few sessions share a createdAt so that the id tie-break matters.
        createdAt: random.chance(0.01) && ids.length > 0 ? EPOCH : EPOCH + random.int(0, 540 * DAY),
        targetBytes,
        parentSession: random.chance(0.05) && ids.length > 0 ? random.pick(ids) : undefined,
        openTail: !prepareSize && random.chance(0.01),
        untitled: !prepareSize && random.chance(0.02),
      };
      ids.push(id);
      const generated = generateSessionLog(spec, random, corpus);
      const label = generated.title ?? id;
      labels.push([id, label]);
      if (generated.title === undefined) stats.untitled += 1;
      if (generated.batches.some((b) => b.includes('"source":{"kind":"user"}}'))) stats.renamed += 1;
      if (generated.batches.some((b) => b.includes('"plugin":"compact"'))) stats.compacted += 1;
      if (spec.openTail) stats.openTails += 1;
      stats.events += generated.events;
      const encoding = prepareSize || random.chance(zstdShare) ? 'zstd' : 'raw';
      const file = path.join(root, relativeLogPath(spec.cwd, id, encoding));
      if (prepareSize) {
        prepare[prepareSize].push(id);
        preparePaths[prepareSize].push(file);
      }
      projectDirs.add(path.basename(path.dirname(path.dirname(file))));
      const parts = [Buffer.from(generated.header), ...generated.batches.map((b) => Buffer.from(b))];
      const bytes = parts.reduce((n, p) => n + p.length, 0);
      sizes.push(bytes);
      stats.uncompressed += bytes;
      if (encoding === 'zstd') {
        stats.zstd += 1;
        stats.frames += parts.length;
        zstdLogs.push({ file, parts });
      } else {
        stats.raw += 1;
        rawLogs.push({ file, data: Buffer.concat(parts) });
      }
    }
    // Compress this batch (in the zstd process) while the next one is generated.
    await pending;
    pending = (async () => {
      const frames = await compressor.compress(zstdLogs.flatMap((l) => l.parts));
      let next = 0;
      for (const entry of zstdLogs) {
        const data = Buffer.concat(frames.slice(next, next + entry.parts.length));
        next += entry.parts.length;
        writeLog(entry.file, data, madeDirs);
        stats.onDisk += data.length;
      }
      for (const entry of rawLogs) {
        writeLog(entry.file, entry.data, madeDirs);
        stats.onDisk += entry.data.length;
      }
    })();
    log(`  generated ${Math.min(first + count, options.sessions)}/${options.sessions} sessions (${(stats.uncompressed / 1e6).toFixed(0)} MB)`);
  }
  await pending;
  compressor.dispose();
  const labelsFile = path.join(dir, 'labels.json');
  writeFileSync(labelsFile, JSON.stringify(labels));
  sizes.sort((a, b) => a - b);
  return {
    generatorVersion: GENERATOR_VERSION,
    seed: options.seed,
    sessions: options.sessions,
    root,
    labelsFile,
    cwds,
    prepare,
    preparePaths,
    encodings: { zstd: stats.zstd, raw: stats.raw },
    projectDirs: projectDirs.size,
    untitled: stats.untitled,
    renamed: stats.renamed,
    compacted: stats.compacted,
    openTails: stats.openTails,
    frames: stats.frames,
    events: stats.events,
    bytes: { uncompressed: stats.uncompressed, onDisk: stats.onDisk },
    logBytes: { median: percentile(sizes, 50), p90: percentile(sizes, 90), p99: percentile(sizes, 99), max: sizes[sizes.length - 1] },
    compression: compressor.method,
    generatedMs: Date.now() - started,
  };
}

function writeLog(file: string, data: Buffer, madeDirs: Set<string>): void {
  const dir = path.dirname(file);
  if (!madeDirs.has(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    madeDirs.add(dir);
  }
  writeFileSync(file, data, { mode: 0o600 });
}
