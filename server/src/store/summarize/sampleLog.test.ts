import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { initZstdSupport } from '../log';
import { availableZstdDecoders } from '../../testing/zstdDecoders';
import { scanZstdFrame } from '../log/zstdFrames';
import { SAMPLE_LOG_LINES, sampleLogBytes, summarizeSampleLogs } from './sampleLog';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/store/--home-sam-weather-app--/0b6f3c1e-5a7d-4c2e-9f11-3d8e2a4b6c01/session.jsonl');

describe('the sample log summarized before a code cache is made', () => {
  it('is the example session, and its zstd form holds the same bytes in four frames', async () => {
    expect(Buffer.from(sampleLogBytes('raw')).equals(readFileSync(EXAMPLE))).toBe(true);
    expect(SAMPLE_LOG_LINES).toHaveLength(16);
    await initZstdSupport();
    const bytes = sampleLogBytes('zstd');
    for (const decoder of availableZstdDecoders()) {
      const frames: string[] = [];
      for (let at = 0; at < bytes.length; ) {
        const scan = scanZstdFrame(bytes, at);
        if (!('frame' in scan)) throw new Error(`no complete frame at ${at}`);
        expect(scan.frame.checksum).toBe(true);
        const pieces: Buffer[] = [];
        decoder.decodeFrame(bytes.subarray(at, scan.frame.end), scan.frame, (piece) => pieces.push(Buffer.from(piece)));
        frames.push(Buffer.concat(pieces).toString('utf8'));
        at = scan.frame.end;
      }
      const lines = (from: number, to: number) => SAMPLE_LOG_LINES.slice(from, to).map((line) => line + '\n').join('');
      expect(frames, decoder.name).toEqual([lines(0, 1), lines(1, 9), lines(9, 15), lines(15, 16)]);
    }
  });

  it('summarizes cleanly, raw and zstd alike, through the index path', async () => {
    const [raw, zstd] = await summarizeSampleLogs();
    for (const outcome of [raw, zstd]) {
      expect(outcome).toMatchObject({ kind: 'summary', resumed: false });
      if (outcome?.kind !== 'summary') continue;
      expect(outcome.position).toBe(outcome.opened.size);
      expect(outcome.summary).toEqual({
        header: { id: '0b6f3c1e-5a7d-4c2e-9f11-3d8e2a4b6c01', createdAt: 1795169100000, cwd: '/home/sam/weather-app' },
        capturedThroughSeq: 17,
        surfaceCounts: { user: 1, assistant: 2, tool: 1 },
        eventCount: 18,
        title: 'Hourly forecast endpoint',
      });
    }
  });
});
