/**
 * The one dsh log writer (bench/src/generate/dshLog.ts) against the store's own reader: what it
 * writes is a log dsh would load, in both encodings, with the surface it says it wrote.
 */
import { describe, expect, it } from 'vitest';
import { initZstdSupport, loadSessionLog } from '../store/log';
import { scanZstdFrame, type ZstdFrame } from '../store/log/zstdFrames';
import { DshLog, NODE_WINDOW_DESCRIPTOR } from './testLogs';

await initZstdSupport();

/** A session with a packed row, a tool round trip, a title, a compaction and an open last turn. */
function sampleLog(): DshLog {
  const log = new DshLog({ header: { id: 'sample', createdAt: 1767225600000, cwd: '/home/alice/proj' }, clock: { start: 1767225600010 } });
  log.event('turn/start', { turn: 1 });
  log.event('step/start', { turn: 1, step: 1 });
  const prompt = log.user('Read a.txt');
  log.title('Read a.txt', [prompt], { kind: 'fallback' });
  log.flush();
  const chunks = log.row('text-chunks', { turn: 1, step: 1, index: 0, dt: [5, 7], texts: ['Let', ' me', ' look'] }, 3, [5, 7]);
  const call = { type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' };
  log.event('assistant/message', { turn: 1, step: 1, message: { id: 'a-1', role: 'assistant', content: [{ type: 'text', text: 'Let me look' }, call], source: { kind: 'model', provider: 'p', model: 'm' } } }, { sourceEventSeqs: chunks, surfaceOp: 'append' });
  log.event('tool/call', { turn: 1, step: 1, callId: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' });
  log.flush();
  log.tick(20).toolResult('call_1', 'alpha\n');
  log.event('step/end', { turn: 1, step: 1 });
  log.event('turn/end', { turn: 1, reason: { kind: 'completed' } });
  log.flush();
  const start = log.event('compaction/start', { compactionId: 'c-1', turn: null });
  const surface = log.surface();
  const summary = log.event('compaction/summary', { compactionId: 'c-1', summary: [{ type: 'text', text: 'read a.txt' }], shadowedRange: { start: surface[0], end: surface[surface.length - 1] }, shadowedSeqs: [...surface], shadowedTokenCount: 9, provider: 'p', model: 'm' });
  log.checkpoint('summary: a.txt holds alpha', surface[0]!, surface[surface.length - 1]!, [start, summary]);
  log.event('compaction/end', { compactionId: 'c-1', turn: null });
  log.flush();
  log.event('turn/start', { turn: 2 });
  log.event('step/start', { turn: 2, step: 1 });
  log.user('and b.txt?');
  return log;
}

function frames(bytes: Uint8Array): ZstdFrame[] {
  const found: ZstdFrame[] = [];
  for (let at = 0; at < bytes.length; ) {
    const scan = scanZstdFrame(bytes, at);
    if (!('frame' in scan)) throw new Error(`not a complete frame at ${at}`);
    found.push(scan.frame);
    at = scan.frame.end;
  }
  return found;
}

describe('DshLog', () => {
  it('writes a log the store loads, raw and zstd alike, with the surface and title it wrote', () => {
    const log = sampleLog();
    const raw = loadSessionLog(log.raw(), 'raw', { expectedId: 'sample' });
    const zstd = loadSessionLog(log.zstd(), 'zstd', { expectedId: 'sample' });
    expect(raw.surface.map((event) => event.seq)).toEqual(log.surface());
    expect(raw.title).toBe('Read a.txt');
    expect(raw.header).toMatchObject({ id: 'sample', createdAt: 1767225600000, cwd: '/home/alice/proj' });
    // Rows expand to one event per member; the open turn gets dsh's closers (step/end, turn/end).
    expect(raw.events.slice(0, log.seq).map((event) => event.seq)).toEqual([...Array(log.seq).keys()]);
    expect(raw.capturedThroughSeq).toBe(log.seq + 1);
    expect(zstd).toEqual(raw);
  });

  it('writes one zstd frame per batch, shaped as dsh writes them: checksum, no content size, a 2 MiB window', () => {
    const log = sampleLog();
    const written = frames(log.zstd());
    expect(written).toHaveLength(log.batches().length);
    for (const frame of written) {
      expect(frame.checksum).toBe(true);
      expect(frame.contentSize).toBeUndefined();
      expect(frame.windowSize).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    }
    expect(log.zstd()[5]).toBeGreaterThanOrEqual(NODE_WINDOW_DESCRIPTOR);
  });

  it('numbers events from seq 0 with the default clock at epoch + seq, and gives back what it wrote', () => {
    const log = new DshLog();
    const u = log.user('hi');
    const a = log.assistant('hello');
    expect([u, a]).toEqual([0, 1]);
    expect(log.events()).toEqual([
      { type: 'user/message', seq: 0, time: 1_700_000_000_000, data: { id: 'u-0', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }, surfaceOp: 'append' },
      { type: 'assistant/message', seq: 1, time: 1_700_000_000_001, data: { turn: 1, step: 1, message: { id: 'a-1', role: 'assistant', content: [{ type: 'text', text: 'hello' }], source: { kind: 'model', provider: 'p', model: 'm' } } }, surfaceOp: 'append' },
    ]);
    expect(log.headerLine()).toBeUndefined();
    expect(log.lines()).toHaveLength(2);
  });
});
