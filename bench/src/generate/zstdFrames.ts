/**
 * Compress many small parts into independent zstd frames with checksums (store doc §5.1), fast on
 * Node 20 where `node:zlib` has no zstd: thousands of parts go through ONE `zstd` CLI run
 * (`-c` concatenates one frame per input file), and the output is split back into frames.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const FRAME_MAGIC = 0xfd2fb528;

/** Byte offsets where each complete frame of `data` ends (§5.2); throws on a torn or invalid frame. */
export function frameEnds(data: Uint8Array): number[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const ends: number[] = [];
  let at = 0;
  const need = (n: number): void => {
    if (at + n > data.length) throw new Error(`torn zstd frame at ${ends.length > 0 ? ends[ends.length - 1] : 0}`);
  };
  while (at < data.length) {
    need(5);
    if (view.getUint32(at, true) !== FRAME_MAGIC) throw new Error(`invalid frame magic at ${at}`);
    const descriptor = data[at + 4];
    if (descriptor & 0x18) throw new Error(`reserved descriptor bits at ${at}`);
    const sizeFlag = descriptor >> 6;
    const singleSegment = (descriptor & 0x20) !== 0;
    const dictionaryBytes = [0, 1, 2, 4][descriptor & 3];
    const sizeBytes = sizeFlag === 0 ? (singleSegment ? 1 : 0) : 1 << sizeFlag;
    at += 5 + (singleSegment ? 0 : 1) + dictionaryBytes + sizeBytes;
    for (;;) {
      need(3);
      const header = data[at] | (data[at + 1] << 8) | (data[at + 2] << 16);
      const type = (header >> 1) & 3;
      if (type === 3) throw new Error(`reserved block type at ${at}`);
      at += 3 + (type === 1 ? 1 : header >>> 3);
      need(0);
      if (header & 1) break;
    }
    if (descriptor & 0x04) at += 4;
    need(0);
    ends.push(at);
  }
  return ends;
}

type ZstdCompressSync = (data: Buffer, options?: { params?: Record<number, number> }) => Buffer;

/** Node ≥ 22.15 has zstd in zlib; its typings on Node 20 do not, hence the probe. */
function builtinCompressor(): ((part: Buffer) => Buffer) | undefined {
  const z = zlib as unknown as { zstdCompressSync?: ZstdCompressSync; constants: Record<string, number> };
  const checksumFlag = z.constants.ZSTD_c_checksumFlag;
  if (typeof z.zstdCompressSync !== 'function' || checksumFlag === undefined) return undefined;
  const compress = z.zstdCompressSync;
  return (part) => compress(part, { params: { [checksumFlag]: 1 } });
}

/** Turns parts into frames, one frame per part, in order. */
export class FrameCompressor {
  private readonly builtin = builtinCompressor();
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
      const output = await runZstd(['-q', '--check', '-c', '--filelist', list]);
      const ends = frameEnds(output);
      if (ends.length !== parts.length) throw new Error(`zstd produced ${ends.length} frames for ${parts.length} parts`);
      return ends.map((end, i) => output.subarray(i === 0 ? 0 : ends[i - 1], end));
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
