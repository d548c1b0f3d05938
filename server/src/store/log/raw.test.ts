import { describe, expect, it } from 'vitest';
import { SessionReadError } from '../../resolver/sessionStore';
import { MAX_RECORD_BYTES, loadSessionLog } from './index';
import { DEMO_1, concatBytes, ev, headerLine, rawTranscript } from '../../testing/testLogs';

const encoder = new TextEncoder();

function loadError(bytes: Uint8Array, options: { maxRecordBytes?: number } = {}): SessionReadError {
  try {
    loadSessionLog(bytes, 'raw', options);
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return error as SessionReadError;
  }
  throw new Error('expected the load to fail');
}

describe('raw session.jsonl: torn tail and corruption (store doc §5.4)', () => {
  it('drops a final line without a newline even when it is valid JSON', () => {
    const bytes = rawTranscript(DEMO_1);
    const log = loadSessionLog(bytes.subarray(0, bytes.length - 1), 'raw');
    // seq 10 (turn/end) is gone, so the open turn gets an in-memory closer at seq 10.
    expect(log.events.slice(0, 10)).toEqual(loadSessionLog(bytes, 'raw').events.slice(0, 10));
    expect(log.events[10]).toEqual({
      type: 'turn/end',
      seq: 10,
      time: 1767225600514,
      data: { turn: 1, reason: { kind: 'interrupted' } },
    });
  });

  it('silently cuts garbage after the last turn/end', () => {
    const log = loadSessionLog(rawTranscript([...DEMO_1, 'garbage', '{"type":"x","seq":3}', '', ev.title(11, 'never')]), 'raw');
    expect(log.events).toHaveLength(11);
    expect(log.title).toBe('Say hi');
  });

  it('rejects a blank line in the middle of the log', () => {
    const lines = [...DEMO_1.slice(0, 5), '', ...DEMO_1.slice(5)];
    const error = loadError(rawTranscript(lines));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toMatch(/unparsable committed event at line 5.*turn\/end/);
  });

  it('rejects a defect (unparsable line, seq gap, malformed row) before a later turn/end', () => {
    for (const defect of ['{"type":', ev.stepStart(9), '{"type":"text-chunks","seq0":4,"time0":1,"data":{}}']) {
      const lines = [...DEMO_1.slice(0, 5), defect, ...DEMO_1.slice(6)];
      expect(loadError(rawTranscript(lines)).reason).toBe('corrupt');
    }
  });

  it('keeps the events before a defect when no turn/end follows it', () => {
    const lines = [...DEMO_1.slice(0, 4), ev.stepStart(7), DEMO_1[4]];
    const log = loadSessionLog(rawTranscript(lines), 'raw');
    expect(log.events.map((event) => event.type)).toEqual(['turn/start', 'step/start', 'user/message', 'step/end', 'turn/end']);
    expect(log.events.slice(3).map((event) => event.data)).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, reason: { kind: 'interrupted' } },
    ]);
  });

  it('a record that is a turn/end with the wrong seq is itself a defect before a turn/end', () => {
    expect(loadError(rawTranscript([...DEMO_1.slice(0, 4), ev.turnEnd(9)])).reason).toBe('corrupt');
  });

  it('rejects a null record anywhere (dsh cannot read it)', () => {
    expect(loadError(rawTranscript([...DEMO_1, 'null'])).message).toMatch(/null record/);
  });

  it('has no header without a first newline: "empty or header-less"', () => {
    expect(loadError(new Uint8Array(0)).message).toMatch(/empty or header-less/);
    expect(loadError(encoder.encode(DEMO_1[0])).message).toMatch(/empty or header-less/);
  });

  it('accepts CRLF line ends', () => {
    const bytes = encoder.encode(DEMO_1.map((line) => `${line}\r\n`).join(''));
    expect(loadSessionLog(bytes, 'raw')).toEqual(loadSessionLog(rawTranscript(DEMO_1), 'raw'));
  });

  it('a header-only log is empty: capturedThroughSeq null, no title, empty surface', () => {
    const log = loadSessionLog(rawTranscript([headerLine('h')]), 'raw');
    expect(log).toMatchObject({ events: [], surface: [], capturedThroughSeq: null });
    expect(log.title).toBeUndefined();
  });

  it('a complete record over the size limit is too-large; a torn one over it is just a torn tail', () => {
    const long = ev.title(0, 'x'.repeat(300));
    expect(loadError(rawTranscript([headerLine('big'), long]), { maxRecordBytes: 256 }).reason).toBe('too-large');
    const torn = concatBytes([rawTranscript([headerLine('big')]), encoder.encode(long)]);
    expect(loadSessionLog(torn, 'raw', { maxRecordBytes: 256 }).events).toEqual([]);
    expect(loadError(rawTranscript([headerLine('big', { agentPreset: 'p'.repeat(300) })]), { maxRecordBytes: 256 }).reason).toBe(
      'too-large',
    );
  });

  it('the real limit is 64 MiB per record', () => {
    const head = rawTranscript([headerLine('huge')]);
    const huge = new Uint8Array(MAX_RECORD_BYTES + 2).fill(0x61);
    huge[huge.length - 1] = 0x0a;
    expect(MAX_RECORD_BYTES).toBe(64 * 1024 * 1024);
    expect(loadError(concatBytes([head, huge])).reason).toBe('too-large');
  });
});
