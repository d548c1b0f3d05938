/**
 * Compress many small parts into independent zstd frames shaped as dsh writes them (dshLog.ts,
 * store doc §5.1), fast on Node 20 where `node:zlib` has no zstd: thousands of parts go through
 * ONE `zstd` CLI run (`-c` concatenates one frame per input file), and the output is split back
 * into frames.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { frameEnds } from '../zstd/frames';
import { builtinZstdCompressor, likeDshFrame, ZSTD_CLI_ARGS } from './dshLog';

/** Turns parts into frames, one frame per part, in order. */
export class FrameCompressor {
  private readonly builtin = builtinZstdCompressor();
  private readonly workRoot: string;
  private runs = 0;

  constructor() {
    // Part files are many and short-lived: keep them in memory-backed storage when there is one.
    const shm = '/dev/shm';
    const base = existsSync(shm) ? shm : os.tmpdir();
    this.workRoot = mkdtempSync(path.join(base, 'dsh-bench-parts-'));
  }

  /** How frames are made, for the results. */
  get method(): string {
    return this.builtin ? 'node:zlib zstdCompressSync (checksum on)' : '`zstd -q --check` CLI, batched';
  }

  /** One zstd frame (with content checksum) per part, in the same order. */
  async compress(parts: readonly Buffer[]): Promise<Buffer[]> {
    if (parts.length === 0) return [];
    if (this.builtin) return parts.map(this.builtin);
    const dir = path.join(this.workRoot, String(this.runs++));
    mkdirSync(dir);
    try {
      const names: string[] = [];
      parts.forEach((part, i) => {
        const name = path.join(dir, String(i).padStart(8, '0'));
        writeFileSync(name, part);
        names.push(name);
      });
      const list = path.join(dir, 'list');
      writeFileSync(list, names.join('\n') + '\n');
      const output = await runZstd([...ZSTD_CLI_ARGS, '--filelist', list]);
      const ends = frameEnds(output);
      if (ends.length !== parts.length) throw new Error(`zstd produced ${ends.length} frames for ${parts.length} parts`);
      return ends.map((end, i) => likeDshFrame(output.subarray(i === 0 ? 0 : ends[i - 1], end)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Remove the scratch directory. */
  dispose(): void {
    rmSync(this.workRoot, { recursive: true, force: true });
  }
}

function runZstd(args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('zstd', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(`zstd exited with ${code}: ${err.trim()}`));
    });
  });
}
