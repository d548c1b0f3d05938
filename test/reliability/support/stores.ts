/**
 * Real-format dsh stores in temporary directories for the reliability tests: sessions written where
 * dsh puts them (raw or zstd), tree hashes to prove a store was never written, and polling.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { relativeLogPath, type TranscriptEncoding } from '../../../server/src/store/layout';
import { DshLog, MODEL_SOURCE, rawTranscript, zstdTranscript } from '../../../server/src/testing/testLogs';

/** A session to write: a header, then turns (each one append batch = one zstd frame). */
export interface SessionSpec {
  id: string;
  cwd?: string;
  createdAt: number;
  turns: Array<{ prompt: string; answer?: string; title?: string }>;
}

/** The JSONL lines of a session, grouped by batch: the header alone first, then one batch per turn. */
export function sessionBatches(spec: SessionSpec): string[][] {
  // Event times follow the seqs from createdAt + 1.
  const log = new DshLog({ header: { id: spec.id, createdAt: spec.createdAt, cwd: spec.cwd }, clock: { epoch: spec.createdAt + 1 } });
  spec.turns.forEach((turnSpec, index) => {
    const turn = index + 1;
    log.event('turn/start', { turn });
    const user = log.user(turnSpec.prompt);
    if (turnSpec.title !== undefined) log.title(turnSpec.title, [user], { kind: 'fallback' });
    if (turnSpec.answer !== undefined) log.assistant(turnSpec.answer, { turn, source: MODEL_SOURCE });
    log.event('turn/end', { turn, reason: { kind: 'completed' } });
    log.flush();
  });
  return log.batches();
}

/** The transcript bytes of some batches in an encoding (zstd: one frame per batch, as dsh writes them). */
export function encodeBatches(batches: readonly (readonly string[])[], encoding: TranscriptEncoding): Uint8Array {
  return encoding === 'raw' ? rawTranscript(batches.flat()) : zstdTranscript(batches);
}

/** Where dsh keeps a session's transcript under `root`. */
export function transcriptPath(root: string, spec: Pick<SessionSpec, 'id' | 'cwd'>, encoding: TranscriptEncoding): string {
  return path.join(root, relativeLogPath(spec.cwd, spec.id, encoding));
}

/** Write a whole session where dsh would; returns the transcript path. */
export function writeSession(root: string, spec: SessionSpec, encoding: TranscriptEncoding): string {
  const file = transcriptPath(root, spec, encoding);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, encodeBatches(sessionBatches(spec), encoding));
  return file;
}

/** Temporary directories, removed by `removeAll` (call it from afterAll/afterEach). */
export class TemporaryDirectories {
  private readonly dirs: string[] = [];

  /** A fresh directory under the OS temp dir. */
  make(prefix = 'rel'): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), `dsh-reliability-${prefix}-`));
    this.dirs.push(dir);
    return dir;
  }

  removeAll(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A hash of everything under `dir` without following links: names, types, modes, sizes, mtimes,
 * file bytes and link targets. Equal hashes before and after = nothing was written, moved or touched.
 */
export function treeHash(dir: string): string {
  const hash = createHash('sha256');
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      const full = path.join(dir, child);
      const stats = lstatSync(full);
      hash.update(`${child}\0${stats.mode}\0${stats.size}\0${stats.mtimeMs}\0`);
      if (stats.isSymbolicLink()) hash.update(`->${readlinkSync(full)}\0`);
      else if (stats.isDirectory()) walk(child);
      else if (stats.isFile()) hash.update(readFileSync(full));
    }
  };
  walk('');
  return hash.digest('hex');
}

/** Poll `check` until it stops throwing, up to a generous deadline (never a timing claim). */
export async function eventually<T>(check: () => Promise<T> | T, deadlineMs = 20_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
