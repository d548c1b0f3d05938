/**
 * Test support for dsh logs: the one log writer (bench/src/generate/dshLog.ts: events, packed rows,
 * batches, raw and zstd transcripts) with the conveniences tests write by hand (messages, tool
 * results, checkpoints, titles, the bytes of either encoding), lines with explicit seqs for odd
 * logs, and the two worked examples of the store doc (§8).
 */
import { execFileSync } from 'node:child_process';
import {
  DshLog as LogWriter,
  MODEL_SOURCE,
  ZSTD_CLI_ARGS,
  builtinZstdCompressor,
  eventRecord,
  headerRecord,
  likeDshFrame,
  type Clock,
  type HeaderFields,
  type SurfaceOp,
} from '../../../bench/src/generate/dshLog';

export * from '../../../bench/src/generate/dshLog';

/** One decoded event as a log holds it (structurally the server's `SessionEventRecord`). */
export interface EventRecord {
  type: string;
  seq: number;
  time?: number;
  data: any; // any payload, as the server's record
  surfaceOp?: SurfaceOp;
  sourceEventSeqs?: number[];
}

const encoder = new TextEncoder();

/** A plain `session.jsonl`: each line followed by `\n`. */
export function rawTranscript(lines: readonly string[]): Uint8Array {
  return encoder.encode(lines.map((line) => `${line}\n`).join(''));
}

/** Byte arrays joined. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const builtin = builtinZstdCompressor();

/** One zstd frame of any bytes, as dsh writes it (node:zlib when it has zstd, else the `zstd` command). */
export function zstdFrameOf(bytes: Uint8Array): Uint8Array {
  if (builtin !== undefined) return new Uint8Array(builtin(bytes));
  return likeDshFrame(new Uint8Array(execFileSync('zstd', ZSTD_CLI_ARGS, { input: bytes, maxBuffer: 1 << 30 })));
}

/** One zstd frame holding the given lines. */
export function zstdFrame(lines: readonly string[]): Uint8Array {
  return zstdFrameOf(rawTranscript(lines));
}

/** A `session.jsonl.zstd`: one frame per part (the header line alone in the first part). */
export function zstdTranscript(parts: readonly (readonly string[])[]): Uint8Array {
  return concatBytes(parts.map(zstdFrame));
}

/** The content of a message: a string is one text block. */
export type Content = string | unknown[];

const blocks = (content: Content): unknown[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : content);

/** The bench's log writer, with what tests write by hand; every event goes through the writer's `event`. */
export class DshLog extends LogWriter {
  private readonly headerText: string | undefined;

  constructor(options: { header?: HeaderFields; clock?: Clock } = {}) {
    super(options);
    this.headerText = options.header === undefined ? undefined : JSON.stringify(headerRecord(options.header));
  }

  /** Set a writer-driven clock. */
  at(time: number): this {
    return this.tick(time - this.time);
  }

  /** A `user/message` appended to the surface; the default source is a direct prompt `{kind:'user'}`. */
  user(content: Content, source: Record<string, unknown> = { kind: 'user' }): number {
    return this.event('user/message', { id: `u-${this.seq}`, role: 'user', content: blocks(content), source }, { surfaceOp: 'append' });
  }

  /** An `assistant/message` appended to the surface (turn 1, step 1 unless given). */
  assistant(content: Content, where: { turn?: number; step?: number; source?: unknown } = {}): number {
    const message = { id: `a-${this.seq}`, role: 'assistant', content: blocks(content), source: where.source ?? { kind: 'model', provider: 'p', model: 'm' } };
    return this.event('assistant/message', { turn: where.turn ?? 1, step: where.step ?? 1, message }, { surfaceOp: 'append' });
  }

  /** A `tool/result` appended to the surface. */
  toolResult(callId: string, text: string): number {
    const content = [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError: false }];
    const message = { id: `t-${this.seq}`, role: 'user', content, source: { kind: 'tool', callId } };
    return this.event('tool/result', { turn: 1, step: 1, message }, { surfaceOp: 'append' });
  }

  /**
   * A compaction checkpoint replacing the surface nodes from seq `start` through seq `end`; its
   * `sourceEventSeqs` are `sources` (e.g. the bracket's compaction/start and summary) and then
   * every node it shadows, as dsh writes them.
   */
  checkpoint(content: Content, start: number, end: number, sources: readonly number[] = []): number {
    const source = { kind: 'plugin', plugin: 'compact', compactionId: `c-${this.seq}` };
    const sourceEventSeqs = [...sources, ...this.shadowed(start, end)];
    return this.event('user/message', { id: `c-${this.seq}`, role: 'user', content: blocks(content), source }, { sourceEventSeqs, surfaceOp: { op: 'replace', start, end } });
  }

  /** A `session/title` event (log-only); the default source is a user rename. */
  title(title: string, messageSeqs: number[] = [], source: unknown = { kind: 'user' }): number {
    return this.event('session/title', { title, messageSeqs, source });
  }

  /** Every line, header first. */
  lines(): string[] {
    return this.batches().flat();
  }

  /** The header line, if the log has one. */
  headerLine(): string | undefined {
    return this.headerText;
  }

  /** The events written so far (packed rows as written, not expanded), without the header. */
  events(): EventRecord[] {
    const lines = this.lines();
    return (this.headerText === undefined ? lines : lines.slice(1)).map((line) => JSON.parse(line) as EventRecord);
  }

  /** The `session.jsonl` bytes. */
  raw(): Uint8Array {
    return rawTranscript(this.lines());
  }

  /** The `session.jsonl.zstd` bytes: one frame per batch. */
  zstd(): Uint8Array {
    return zstdTranscript(this.batches());
  }
}

/** A header line for a hand-made session (cwd /home/alice/proj unless `extra` says otherwise). */
export function headerLine(id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...headerRecord({ id, createdAt: 1767225600000, cwd: '/home/alice/proj' }), ...extra });
}

const at = (seq: number): number => 1767300000000 + seq;
const line = (type: string, seq: number, data: unknown, extra?: Record<string, unknown>): string => JSON.stringify(eventRecord(type, seq, at(seq), data, extra));

/**
 * Event lines with explicit seqs (time derived from the seq), for hand-made and deliberately odd
 * logs; `extra` (any keys and values, odd ones included) replaces the default envelope keys after `data`.
 */
export const ev = {
  /** Any event. */
  of: (type: string, seq: number, data: unknown, extra: Record<string, unknown> = {}) => line(type, seq, data, extra),
  turnStart: (seq: number, turn = 1) => line('turn/start', seq, { turn }),
  turnEnd: (seq: number, turn = 1) => line('turn/end', seq, { turn, reason: { kind: 'completed' } }),
  stepStart: (seq: number, step = 1, turn = 1) => line('step/start', seq, { turn, step }),
  stepEnd: (seq: number, step = 1, turn = 1) => line('step/end', seq, { turn, step }),
  user: (seq: number, text: string, extra: Record<string, unknown> = { surfaceOp: 'append' }, source: unknown = { kind: 'user' }) =>
    line('user/message', seq, { content: [{ type: 'text', text }], source, role: 'user', id: `u-${seq}` }, extra),
  assistant: (seq: number, content: unknown[], extra: Record<string, unknown> = { surfaceOp: 'append' }) =>
    line('assistant/message', seq, { turn: 1, step: 1, message: { role: 'assistant', content, source: MODEL_SOURCE, id: `a-${seq}` } }, extra),
  toolCall: (seq: number, callId: string) => line('tool/call', seq, { turn: 1, step: 1, callId, name: 'read', arguments: '{}' }),
  toolResult: (seq: number, callId: string, text: string, extra: Record<string, unknown> = { surfaceOp: 'append' }, id = `t-${seq}`) =>
    line(
      'tool/result',
      seq,
      {
        turn: 1,
        step: 1,
        message: {
          source: { kind: 'tool', callId },
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError: false }],
          role: 'user',
          id,
        },
      },
      extra,
    ),
  title: (seq: number, title: string) => line('session/title', seq, { title, messageSeqs: [], source: { kind: 'user' } }),
};

/** A tool-call content block. */
export function toolCallBlock(id: string): Record<string, unknown> {
  return { type: 'tool-call', id, name: 'read', arguments: '{}' };
}

/** store doc §8, demo-1: one turn, a packed text row, a fallback title. */
export const DEMO_1 = [
  '{"type":"session","version":0,"id":"demo-1","createdAt":1767225600000,"cwd":"/home/alice/proj","delegationDepth":0}',
  '{"type":"turn/start","seq":0,"time":1767225600010,"data":{"turn":1}}',
  '{"type":"step/start","seq":1,"time":1767225600011,"data":{"turn":1,"step":1}}',
  '{"type":"user/message","seq":2,"time":1767225600012,"data":{"content":[{"type":"text","text":"Say hi"}],"source":{"kind":"user"},"role":"user","id":"11111111-1111-4111-8111-111111111111"},"surfaceOp":"append"}',
  '{"type":"session/title","seq":3,"time":1767225600013,"data":{"title":"Say hi","messageSeqs":[2],"source":{"kind":"fallback"}}}',
  '{"type":"text-chunks","seq0":4,"time0":1767225600500,"data":{"turn":1,"step":1,"index":0,"dt":[5,7],"texts":["Hi","!"," How can I help?"]}}',
  '{"type":"assistant/chunk","seq":7,"time":1767225600513,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}',
  '{"type":"assistant/message","seq":8,"time":1767225600514,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"Hi! How can I help?"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"22222222-2222-4222-8222-222222222222"}},"sourceEventSeqs":[4,5,6,7],"surfaceOp":"append"}',
  '{"type":"step/end","seq":9,"time":1767225600514,"data":{"turn":1,"step":1}}',
  '{"type":"turn/end","seq":10,"time":1767225600514,"data":{"turn":1,"reason":{"kind":"completed"}}}',
];

/** store doc §8, demo-2: a tool call, a manual compaction checkpoint, then a user rename. */
export const DEMO_2 = [
  '{"type":"session","version":0,"id":"demo-2","createdAt":1767225700000,"cwd":"/home/alice/proj","delegationDepth":0}',
  '{"type":"turn/start","seq":0,"time":1767225700010,"data":{"turn":1}}',
  '{"type":"step/start","seq":1,"time":1767225700011,"data":{"turn":1,"step":1}}',
  '{"type":"user/message","seq":2,"time":1767225700012,"data":{"content":[{"type":"text","text":"Read a.txt"}],"source":{"kind":"user"},"role":"user","id":"33333333-3333-4333-8333-333333333333"},"surfaceOp":"append"}',
  '{"type":"session/title","seq":3,"time":1767225700013,"data":{"title":"Read a.txt","messageSeqs":[2],"source":{"kind":"fallback"}}}',
  '{"type":"assistant/message","seq":4,"time":1767225700400,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"call_1","name":"read","arguments":"{\\"path\\":\\"a.txt\\"}"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"44444444-4444-4444-8444-444444444444"}},"surfaceOp":"append"}',
  '{"type":"tool/call","seq":5,"time":1767225700401,"data":{"turn":1,"step":1,"callId":"call_1","name":"read","arguments":"{\\"path\\":\\"a.txt\\"}"}}',
  '{"type":"tool/result","seq":6,"time":1767225700420,"data":{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"call_1"},"content":[{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"alpha\\n"}],"isError":false}],"role":"user","id":"55555555-5555-4555-8555-555555555555"}},"sourceEventSeqs":[5],"surfaceOp":"append"}',
  '{"type":"step/end","seq":7,"time":1767225700421,"data":{"turn":1,"step":1}}',
  '{"type":"step/start","seq":8,"time":1767225700422,"data":{"turn":1,"step":2}}',
  '{"type":"assistant/message","seq":9,"time":1767225700800,"data":{"turn":1,"step":2,"message":{"role":"assistant","content":[{"type":"text","text":"a.txt contains: alpha"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"66666666-6666-4666-8666-666666666666"}},"surfaceOp":"append"}',
  '{"type":"step/end","seq":10,"time":1767225700801,"data":{"turn":1,"step":2}}',
  '{"type":"turn/end","seq":11,"time":1767225700801,"data":{"turn":1,"reason":{"kind":"completed"}}}',
  '{"type":"compaction/start","seq":12,"time":1767225800000,"data":{"compactionId":"c-1","turn":null}}',
  '{"type":"compaction/summary","seq":13,"time":1767225801000,"data":{"compactionId":"c-1","summary":[{"type":"text","text":"User asked to read a.txt; it contains alpha."}],"shadowedRange":{"start":2,"end":6},"shadowedSeqs":[2,4,6],"shadowedTokenCount":40,"provider":"deepseek-official","model":"deepseek-v4-flash"}}',
  '{"type":"user/message","seq":14,"time":1767225801000,"data":{"content":[{"type":"text","text":"<compacted-summary>"},{"type":"text","text":"User asked to read a.txt; it contains alpha."},{"type":"text","text":"</compacted-summary>"}],"source":{"kind":"plugin","plugin":"compact","compactionId":"c-1"},"role":"user","id":"77777777-7777-4777-8777-777777777777"},"sourceEventSeqs":[12,13,2,4,6],"surfaceOp":{"op":"replace","start":2,"end":6}}',
  '{"type":"compaction/end","seq":15,"time":1767225801000,"data":{"compactionId":"c-1","turn":null}}',
  '{"type":"session/title","seq":16,"time":1767225802000,"data":{"title":"Alpha file check","messageSeqs":[],"source":{"kind":"user"}}}',
];
