import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findProgram } from '../../../test/support/conformance';
import { builtinZstdCompressor } from '../generate/dshLog';
import { FrameCompressor } from '../generate/frameCompressor';
import { initFrameDecoding } from '../zstd/frames';
import { runFloor, WholeFileReader } from './floor';

// Without node:zlib's zstd (Node 20), frames are made by the zstd CLI.
const zstdFrames = builtinZstdCompressor() === undefined ? findProgram('zstd') : { found: true };

describe('the floor', () => {
  const compressor = new FrameCompressor();
  let dir: string;
  beforeAll(async () => {
    await initFrameDecoding();
    dir = mkdtempSync(path.join(os.tmpdir(), 'floor-test-'));
  });
  afterAll(() => {
    compressor.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads each whole file into one buffer, grown for a file larger than it', () => {
    const sizes = [0, 10, 3 * 1024 * 1024 + 7, 1024 * 1024, 5];
    const files = sizes.map((size, i) => {
      const file = path.join(dir, `file-${i}`);
      writeFileSync(file, Buffer.alloc(size, 97 + i));
      return file;
    });
    const reader = new WholeFileReader();
    for (const file of files) expect(Buffer.from(reader.read(file)).equals(readFileSync(file))).toBe(true);
  });

  it.skipIf(!zstdFrames.found)(`counts every byte of raw transcripts and the plaintext of zstd ones ${zstdFrames.reason ?? ''}`, async () => {
    const root = path.join(dir, 'sessions');
    const raw = Buffer.from('{"type":"session"}\n{"type":"turn/start","seq":0}\n');
    const plaintext = [Buffer.from('{"type":"session"}\n'), Buffer.from('{"a":1}\n'.repeat(1000))];
    const zstd = Buffer.concat(await compressor.compress(plaintext));
    mkdirSync(path.join(root, 'p', 'a'), { recursive: true });
    mkdirSync(path.join(root, 'p', 'b'), { recursive: true });
    writeFileSync(path.join(root, 'p', 'a', 'session.jsonl'), raw);
    writeFileSync(path.join(root, 'p', 'b', 'session.jsonl.zstd'), zstd);
    const floor = runFloor(root);
    expect(floor.transcripts).toBe(2);
    expect(floor.bytesOnDisk).toBe(raw.length + zstd.length);
    expect(floor.plaintextBytes).toBe(raw.length + plaintext[0].length + plaintext[1].length);
  });
});
