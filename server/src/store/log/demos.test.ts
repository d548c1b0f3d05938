import { describe, expect, it } from 'vitest';
import { findProgram } from '../../../../test/support/conformance';
import { initZstdSupport, loadSessionLog } from './index';
import { availableZstdDecoders } from '../../testing/zstdDecoders';
import { DEMO_1, DEMO_2, rawTranscript, zstdTranscript } from '../../testing/testLogs';

const zstdCli = findProgram('zstd');
await initZstdSupport();

describe('demo-1 (store doc §8): one turn, a packed text row, a fallback title', () => {
  const loaded = () => loadSessionLog(rawTranscript(DEMO_1), 'raw', { expectedId: 'demo-1' });

  it('expands the text row to seqs 4, 5, 6 at times …500, …505, …512, one delta per member', () => {
    const { events } = loaded();
    expect(events).toHaveLength(11);
    expect(events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(events.slice(4, 7)).toEqual([
      { type: 'assistant/chunk', seq: 4, time: 1767225600500, data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Hi' } } },
      { type: 'assistant/chunk', seq: 5, time: 1767225600505, data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: '!' } } },
      { type: 'assistant/chunk', seq: 6, time: 1767225600512, data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: ' How can I help?' } } },
    ]);
  });

  it('has surface [2, 8], title "Say hi" and capturedThroughSeq 10', () => {
    const log = loaded();
    expect(log.surface.map((event) => event.seq)).toEqual([2, 8]);
    expect(log.surface[1]).toBe(log.events[8]);
    expect(log.title).toBe('Say hi');
    expect(log.capturedThroughSeq).toBe(10);
    expect(log.surfaceCounts).toEqual({ user: 1, assistant: 1, tool: 0 });
    expect(log.header).toEqual({
      type: 'session',
      version: 0,
      id: 'demo-1',
      createdAt: 1767225600000,
      cwd: '/home/alice/proj',
      delegationDepth: 0,
    });
  });
});

describe('demo-2 (store doc §8): a tool call, a compaction checkpoint, a user rename', () => {
  it('has 17 events, surface [14, 9], the latest title and capturedThroughSeq 16', () => {
    const log = loadSessionLog(rawTranscript(DEMO_2), 'raw');
    expect(log.events).toHaveLength(17);
    expect(log.surface.map((event) => event.seq)).toEqual([14, 9]);
    expect(log.surface[0].data.source).toEqual({ kind: 'plugin', plugin: 'compact', compactionId: 'c-1' });
    expect(log.title).toBe('Alpha file check');
    expect(log.capturedThroughSeq).toBe(16);
    expect(log.surfaceCounts).toEqual({ user: 1, assistant: 1, tool: 0 });
  });

  it('raw: dropping only the final newline loses seq 16 and the title reverts', () => {
    const bytes = rawTranscript(DEMO_2);
    const log = loadSessionLog(bytes.subarray(0, bytes.length - 1), 'raw');
    expect(log.events).toHaveLength(16);
    expect(log.title).toBe('Read a.txt');
    expect(log.capturedThroughSeq).toBe(15);
  });
});

describe.skipIf(!zstdCli.found)('demo-2 as 3 zstd frames (header, seqs 0–11, seqs 12–16)', () => {
  const parts = [DEMO_2.slice(0, 1), DEMO_2.slice(1, 13), DEMO_2.slice(13)];
  const lastFrameLength = () => zstdTranscript(parts.slice(2)).length;

  for (const decoder of availableZstdDecoders()) {
    describe(`with ${decoder.name}`, () => {
      it('loads the same 17 events as the raw form', () => {
        const raw = loadSessionLog(rawTranscript(DEMO_2), 'raw');
        const zstd = loadSessionLog(zstdTranscript(parts), 'zstd', { zstdDecoder: decoder });
        expect(zstd).toEqual(raw);
      });

      it('cut halfway through frame 3: 12 events and the title reverts to "Read a.txt"', () => {
        const bytes = zstdTranscript(parts);
        const log = loadSessionLog(bytes.subarray(0, bytes.length - Math.ceil(lastFrameLength() / 2)), 'zstd', {
          zstdDecoder: decoder,
        });
        expect(log.events).toHaveLength(12);
        expect(log.title).toBe('Read a.txt');
        expect(log.capturedThroughSeq).toBe(11);
      });

      it('cut 2 bytes short (inside the checksum): all 17 events', () => {
        const bytes = zstdTranscript(parts);
        const log = loadSessionLog(bytes.subarray(0, bytes.length - 2), 'zstd', { zstdDecoder: decoder });
        expect(log.events).toHaveLength(17);
        expect(log.title).toBe('Alpha file check');
      });
    });
  }
});
