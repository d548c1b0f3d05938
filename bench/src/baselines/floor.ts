/**
 * The floor: list the transcripts and read every byte of each once, zstd-decompressing the
 * zstd ones, with no line splitting or parsing (bench/README.md). An index that labels every
 * session cannot build faster. Two decoders, reported side by side: the project's own frame
 * decoder in this process (checksums verified), and the native `zstd` CLI (the physical
 * reference: libzstd compiled for this machine). The budget is against the faster.
 *
 * Files are read into one buffer that grows as needed, and the plaintext is counted where the
 * decoder leaves it, not copied out: `readFileSync` per file, and the copies, made the raw floor
 * about twice as slow as reading is (bench/ANALYSIS.md, "Cold index").
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { decodedLength, decompressFrames } from '../zstd/frames';

/** One transcript found by a walk of the root. */
export interface TranscriptFile {
  path: string;
  encoding: 'raw' | 'zstd';
}

/** Every `<root>/<project>/<session>/session.jsonl[.zstd]`, directories only, in walk order. */
export function listTranscripts(root: string): TranscriptFile[] {
  const found: TranscriptFile[] = [];
  for (const project of readdirSync(root, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    const projectDir = path.join(root, project.name);
    for (const session of readdirSync(projectDir, { withFileTypes: true })) {
      if (!session.isDirectory()) continue;
      const sessionDir = path.join(projectDir, session.name);
      for (const name of readdirSync(sessionDir)) {
        if (name === 'session.jsonl.zstd') found.push({ path: path.join(sessionDir, name), encoding: 'zstd' });
        else if (name === 'session.jsonl') found.push({ path: path.join(sessionDir, name), encoding: 'raw' });
      }
    }
  }
  return found;
}

/** The whole plaintext of one transcript (all frames of a zstd one). */
export function readPlaintext(file: TranscriptFile): Uint8Array {
  const bytes = readFileSync(file.path);
  return file.encoding === 'zstd' ? decompressFrames(bytes) : bytes;
}

/** What one floor pass did. */
export interface FloorResult {
  ms: number;
  transcripts: number;
  bytesOnDisk: number;
  plaintextBytes: number;
}

/** Reads whole files, each into the same buffer, grown when a file does not fit. */
export class WholeFileReader {
  private buffer = new Uint8Array(1024 * 1024);

  /** All of `file`'s bytes, as a view valid until the next read. */
  read(file: string): Uint8Array {
    const fd = openSync(file, 'r');
    try {
      let length = 0;
      // The size is a hint: a file that grows while it is read is read to its end.
      this.ensure(fstatSync(fd).size + 1, 0);
      for (;;) {
        if (length === this.buffer.length) this.ensure(2 * this.buffer.length, length);
        const bytesRead = readSync(fd, this.buffer, length, this.buffer.length - length, length);
        if (bytesRead === 0) return this.buffer.subarray(0, length);
        length += bytesRead;
      }
    } finally {
      closeSync(fd);
    }
  }

  /** At least `capacity` bytes of buffer, its first `keep` bytes kept. */
  private ensure(capacity: number, keep: number): void {
    if (capacity <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(capacity, 2 * this.buffer.length));
    grown.set(this.buffer.subarray(0, keep));
    this.buffer = grown;
  }
}

/** One timed floor pass over a root. */
export function runFloor(root: string): FloorResult {
  const started = performance.now();
  const files = listTranscripts(root);
  const reader = new WholeFileReader();
  let bytesOnDisk = 0;
  let plaintextBytes = 0;
  for (const file of files) {
    const bytes = reader.read(file.path);
    bytesOnDisk += bytes.length;
    plaintextBytes += file.encoding === 'zstd' ? decodedLength(bytes) : bytes.length;
  }
  return { ms: performance.now() - started, transcripts: files.length, bytesOnDisk, plaintextBytes };
}

/** What one native floor pass did. */
export interface NativeFloorResult extends FloorResult {
  /** `zstd --version`'s first line. */
  tool: string;
}

/** Paths handed to one `zstd -d` call (well under any command-line limit). */
const NATIVE_BATCH = 256;

/** The `zstd` CLI's version line, or undefined when it is not on PATH. */
export function nativeZstdVersion(): string | undefined {
  try {
    return execFileSync('zstd', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n')[0];
  } catch {
    return undefined;
  }
}

/** Decompresses `paths` with one `zstd -d` call; resolves to the plaintext bytes it wrote. */
function nativeDecompress(paths: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('zstd', ['-d', '-c', '-q', '--', ...paths], { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`zstd -d exited with ${code}: ${stderr.trim()}`))));
  });
}

/**
 * One timed native floor pass: the walk and the raw transcripts' reads in this process, the zstd
 * ones read and decompressed by the `zstd` CLI (checksums verified), 256 files a call, its
 * output counted here. Requires {@link nativeZstdVersion}.
 */
export async function runNativeFloor(root: string, tool: string): Promise<NativeFloorResult> {
  const started = performance.now();
  const files = listTranscripts(root);
  const reader = new WholeFileReader();
  let bytesOnDisk = 0;
  let plaintextBytes = 0;
  const zstd: string[] = [];
  for (const file of files) {
    if (file.encoding === 'zstd') {
      zstd.push(file.path);
      continue;
    }
    const bytes = reader.read(file.path);
    bytesOnDisk += bytes.length;
    plaintextBytes += bytes.length;
  }
  for (let at = 0; at < zstd.length; at += NATIVE_BATCH) plaintextBytes += await nativeDecompress(zstd.slice(at, at + NATIVE_BATCH));
  const ms = performance.now() - started;
  // On-disk bytes of the zstd files, outside the timing (the CLI read them).
  for (const file of zstd) bytesOnDisk += readFileSync(file).length;
  return { ms, transcripts: files.length, bytesOnDisk, plaintextBytes, tool };
}
