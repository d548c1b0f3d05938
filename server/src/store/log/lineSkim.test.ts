/**
 * Lines read without parsing (lineSkim.ts) against the full fold: whatever a skimmed line is
 * taken for is what `JSON.parse` and dsh's checks make of it, and summaries with and without
 * skimming are identical on valid logs and on logs with every kind of damage to their lines.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KNOWN_EVENT_TYPES, envelopeProblem } from './eventRules';
import { lineSkim, NO_RESET, RUN_END, skimLine, STEP_RESET, TURN_RESET, type SkimmedLine } from './lineSkim';
import { utf8Text } from './lines';
import { packedRowOf } from './rows';
import { SessionLogSummarizer } from './summarizer';
import { foldSurfaceEvent, emptySurface } from './surfaceFold';
import { emptyTurnState, requestToolCall, trackTurnEvent, type TurnState } from './closers';
import type { SessionHeaderRecord } from './header';
import { emptyFoldState, LogFold, type LogFoldState } from './logFold';
import { legacyRefusalOf, upgradeLegacyEvent } from './legacy';
import { DEMO_1, DEMO_2, concatBytes, ev, headerLine } from '../../testing/testLogs';

const encoder = new TextEncoder();
const bytesOf = (line: string) => encoder.encode(line);

/**
 * Long arrays the skim has quick paths for: rows' `dt` of many one- and two-digit gaps (zeros
 * among them, numbers split across 16-byte steps) and one with longer gaps; sourceEventSeqs of
 * consecutive seqs (through 9, 99 and 999 to one digit more) with gaps.
 */
const LONG_ARRAYS = [
  textRow('text-chunks', [0, 7, 10, 45, 99, 0, 3, 88, 12, 5, 60, 0, 0, 9, 31, 40, 2, 77, 6, 90, 11, 8, 0, 64, 19, 3, 50, 7, 22, 1, 99, 10, 4, 0, 38]),
  textRow('reasoning-chunks', [12, 34, 56, 78, 90, 21, 43, 65, 87, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]),
  textRow('text-chunks', [5, 120, 3, 40, 1, 0, 2, 12345, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]),
  sourcesMessage('assistant/message', [...range(5, 13), ...range(95, 104), 140, 141, ...range(996, 1003), 1500]),
  sourcesMessage('user/message', [0, 1, 2, 4, ...range(8, 30)]),
];

/**
 * Tool results the skim folds (at a seq after their sources: a log renumbers them, and then
 * refuses the sources), data with keys in any order, escapes JSON.stringify writes itself, nested
 * values; and ones it leaves to the parser: a string JSON.stringify would write otherwise (non-ASCII,
 * a \u escape), a fraction.
 */
const TOOL_RESULTS = [
  '{"type":"tool/result","seq":5000,"time":1767225600710,"data":{"turn":1,"step":3,"message":{"source":{"kind":"tool","callId":"call_1"},"content":[{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"out\\n日本語 \\u0041"}],"isError":false}],"role":"user","id":"t-9"},"error":null},"sourceEventSeqs":[12],"surfaceOp":"append"}',
  '{"type":"tool/result","seq":5000,"time":1767225600711,"data":{"message":{"id":"t-10","role":"user","content":[{"content":[],"toolCallId":"call_2","type":"tool-result","isError":true}],"source":{"callId":"call_2","kind":"tool","extra":[1,-2,{"z":0,"a":"b"}]}},"turn":2,"error":{"name":"ToolError","message":"bad \\"x\\"\\n\\ttab \\\\ \\b\\f\\r end","code":-3,"details":[true,{"b":false,"a":null,"A":[]}]},"step":1},"surfaceOp":"append","ignorable":true}',
  '{"type":"tool/result","seq":5000,"time":1767225600712,"data":{"turn":1,"message":{"id":"t-11","role":"user","source":{"kind":"tool","callId":"7"},"content":[{"type":"tool-result","toolCallId":"7","content":[]}]},"error":{"message":"café"}},"surfaceOp":"append","sourceEventSeqs":[1,2,3]}',
  '{"type":"tool/result","seq":5000,"time":1767225600713,"data":{"turn":1,"message":{"id":"t-12","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[]}]},"error":{"message":"\\u0041"}},"surfaceOp":"append"}',
  '{"type":"tool/result","seq":5000,"time":1767225600713,"data":{"turn":1,"message":{"id":"t-13","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[]}]},"error":{"path":"a\\/b"}},"surfaceOp":"append"}',
  '{"type":"tool/result","seq":5000,"time":1767225600713,"data":{"turn":1,"message":{"id":"t-14","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[]}]},"error":{"ms":1.5}},"surfaceOp":"append"}',
];

/** Event lines of every kind: the demos' bodies and chunk, row and bookkeeping lines as dsh writes them. */
const TEMPLATES: string[] = [
  ...DEMO_1.slice(1),
  ...DEMO_2.slice(1),
  '{"type":"assistant/chunk","seq":0,"time":1767225600513,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":" caf\u00e9 \\u00e9\\n"}}}',
  '{"type":"assistant/chunk","seq":0,"time":1767225600513,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":12,"outputTokens":3.5e2,"x":[true,false,null,-0.25E-3]}}}}',
  '{"type":"request/context","seq":0,"time":-5,"data":null,"ignorable":true}',
  '{"type":"reasoning-chunks","seq0":0,"time0":1767225600500,"data":{"turn":1,"step":1,"index":1,"dt":[],"texts":["think"]}}',
  '{"type":"tool-call-chunks","seq0":0,"time0":1767225600500,"data":{"turn":1,"step":1,"index":0,"id":"call_1","name":"read","dt":[3,-1],"args":["{\\"pa","th\\":","1}"]}}',
  '{"type":"tool-call-chunks","seq0":0,"time0":1767225600500,"data":{"turn":1,"step":1,"index":0,"id":"call_1","dt":[0],"args":["a","b"]}}',
  '{"type":"todo/write","seq":0,"time":1767225600600,"data":{"todos":[{"id":"1","text":"日本語","done":false}]}}',
  // Surface messages as dsh writes them, and near misses: tool calls, provenance, legacy shapes, escapes.
  '{"type":"assistant/message","seq":0,"time":1767225600700,"data":{"turn":1,"step":3,"message":{"role":"assistant","content":[{"type":"reasoning","text":"hm\\n \\"q\\" caf\u00e9"},{"type":"tool-call","id":"call_1","name":"read","arguments":"{}"},{"type":"tool-call","id":"call_2","name":"x","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a-1"},"usage":{"inputTokens":1}},"sourceEventSeqs":[0],"surfaceOp":"append"}',
  '{"type":"assistant/message","seq":0,"time":1767225600700,"data":{"message":{"id":"a-2","role":"assistant","source":{"model":"m","provider":"p","kind":"model"},"content":[{"id":{"n":[1]},"type":"tool-call"},{"type":"tool-call"},{"type":"tool-call","id":"call_1"}]},"step":"s"},"surfaceOp":"append","sourceEventSeqs":[]}',
  '{"type":"assistant/message","seq":0,"time":1767225600700,"data":{"content":[{"type":"text","text":"old"}],"provenance":{"provider":"p","model":"m"}},"surfaceOp":"append"}',
  '{"type":"assistant/message","seq":0,"time":1767225600700,"data":{"turn":1,"message":{"role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m","extra":[null]},"id":"a-3"}},"surfaceOp":"append","ignorable":true}',
  '{"type":"user/message","seq":0,"time":1767225600701,"data":{"content":[{"type":"text","text":"日本語 \\u0000"}],"source":{"kind":"user"},"role":"user","id":"u-1"},"sourceEventSeqs":[0,1],"surfaceOp":"append"}',
  '{"type":"user/message","seq":0,"time":1767225600701,"data":{"content":[{"type":"text","text":"legacy"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
  '{"type":"user/message","seq":0,"time":1767225600701,"data":{"id":"u-2","role":"user","source":{"kind":"plugin","plugin":"compact"},"content":[],"message":1},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[0]}',
  '{"type":"tool/result","seq":0,"time":1767225600710,"data":{"turn":1,"step":3,"message":{"source":{"kind":"tool","callId":"call_1"},"content":[{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"out\\n\\"x\\" 日本語"},{"n":[1,{"content":[]}]}],"isError":false}],"role":"user","id":"t-1"},"error":null},"sourceEventSeqs":[0],"surfaceOp":"append"}',
  '{"type":"tool/result","seq":0,"time":1767225600711,"data":{"message":{"id":"t-2","role":"user","content":[{"content":[],"toolCallId":"call_2","type":"tool-result"},{"content":[1]}],"source":{"callId":"call_2","kind":"tool"}}},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[0]}',
  '{"type":"tool/result","seq":0,"time":1767225600713,"data":{"message":{"id":"t-3","role":"user","content":[{"type":"tool-result","toolCallId":"c","content":"not an array"}],"source":{"callId":"c","kind":"tool"}}},"surfaceOp":"append"}',
  '{"type":"tool/result","seq":0,"time":1767225600714,"data":{"message":{"id":"t-4","role":"user","content":[{"type":"tool-result","toolCallId":"c","content":{"0":1}}],"source":{"callId":"c","kind":"tool"}}},"surfaceOp":"append"}',
  '{"type":"tool/result","seq":0,"time":1767225600712,"data":{"callId":"call_1","content":[{"type":"text","text":"legacy"}],"isError":false},"surfaceOp":"append"}',
  '{"type":"tool/call","seq":0,"time":1767225600702,"data":{"turn":1,"step":3,"callId":"call_1","name":"read","arguments":"{}"}}',
  '{"type":"turn/start","seq":0,"time":1767225600703,"data":{"turn":2}}',
  '{"type":"step/start","seq":0,"time":1767225600703,"data":{"turn":2,"step":1}}',
  // The kinds the closers track, as dsh writes them, and near misses: legacy forms, other reasons, odd values.
  '{"type":"turn/start","seq":0,"time":1767225600703,"data":{"turn":3,"trigger":{"kind":"user"}}}',
  '{"type":"turn/start","seq":0,"time":1767225600703,"data":{"turn":{"n":[1,"x"]},"mode":"plan"}}',
  '{"type":"turn/start","seq":0,"time":1767225600703,"data":{}}',
  '{"type":"step/start","seq":0,"time":1767225600704,"data":{"turn":2,"step":"s-\u00e9"}}',
  '{"type":"step/end","seq":0,"time":1767225600705,"data":{"turn":2,"step":1,"usage":{"inputTokens":3}}}',
  '{"type":"step/end","seq":0,"time":1767225600705,"data":null}',
  '{"type":"turn/end","seq":0,"time":1767225600706,"data":{"turn":2,"reason":{"kind":"completed"}}}',
  '{"type":"turn/end","seq":0,"time":1767225600706,"data":{"reason":{"kind":"max-tokens"},"turn":1}}',
  '{"type":"turn/end","seq":0,"time":1767225600706,"data":{"turn":2,"reason":{"kind":"aborted"}}}',
  '{"type":"turn/end","seq":0,"time":1767225600706,"data":{"turn":2,"reason":{"kind":"error","step":1,"message":"m"}}}',
  '{"type":"turn/end","seq":0,"time":1767225600706,"data":{"turn":2,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}',
  '{"type":"turn/end","seq":0,"time":1767225600706,"data":{"turn":0,"reason":{"kind":"completed"}}}',
  '{"type":"tool/call","seq":0,"time":1767225600702,"data":{"callId":"call_2"}}',
  '{"type":"tool/call","seq":0,"time":1767225600702,"data":{"turn":1,"name":"x"}}',
  '{"type":"tool/call","seq":0,"time":1767225600702,"data":{"callId":7,"arguments":"{\\"a\\":1}"}}',
  ...LONG_ARRAYS,
  ...TOOL_RESULTS,
];

/** `from` up to `to` (exclusive). */
function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/** A packed text row with these gaps (one text more than gaps). */
function textRow(type: string, dt: number[]): string {
  const texts = dt.map((_, i) => ` t${i}`).concat([' end']);
  return JSON.stringify({ type, seq0: 0, time0: 1767225600500, data: { turn: 1, step: 1, index: 0, dt, texts } });
}

/** An appended message with these sources, at a seq after them (a log renumbers it, and then refuses the sources). */
function sourcesMessage(type: 'assistant/message' | 'user/message', sources: number[]): string {
  const message =
    type === 'assistant/message'
      ? { turn: 1, step: 1, message: { id: 'a-9', role: 'assistant', source: { kind: 'model', provider: 'p', model: 'm' }, content: [] } }
      : { id: 'u-9', role: 'user', source: { kind: 'user' }, content: [] };
  return JSON.stringify({ type, seq: 5000, time: 1767225600720, data: message, sourceEventSeqs: sources, surfaceOp: 'append' });
}

type Json = Record<string, unknown>;

/** Lines with their seqs renumbered to follow one another from 0 (a packed row takes one per member). */
function renumbered(templates: readonly string[]): string[] {
  let seq = 0;
  return templates.map((line) => {
    const value = JSON.parse(line) as Json;
    if ('seq0' in value) {
      value.seq0 = seq;
      seq += (((value.data as Json).texts ?? (value.data as Json).args) as unknown[]).length;
    } else {
      value.seq = seq++;
    }
    return JSON.stringify(value);
  });
}

/** Damage of the kinds that matter to a byte reader, each applied to a line's text or bytes. */
const damageArbitrary: fc.Arbitrary<(line: string) => Uint8Array> = fc.oneof(
  fc.constant((line: string) => bytesOf(line)),
  fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }).map(({ at, byte }) => (line: string) => {
    const bytes = bytesOf(line);
    bytes[at % bytes.length] = byte;
    return bytes;
  }),
  fc.record({ at: fc.nat(), insert: fc.constantFrom(' ', '\t', '\r', '\u00a0', '\ufeff', '\\', '"', ',', '}', '0', '\u0001', '-', '.5', 'e3') }).map(
    ({ at, insert }) =>
      (line: string) => {
        const cut = at % (line.length + 1);
        return bytesOf(line.slice(0, cut) + insert + line.slice(cut));
      },
  ),
  fc.record({ at: fc.nat(), invalid: fc.constantFrom([0xff], [0xc3], [0xe6, 0x97], [0xc0, 0x80], [0xed, 0xa0, 0x80]) }).map(({ at, invalid }) => (line: string) => {
    const bytes = bytesOf(line);
    const cut = at % (bytes.length + 1);
    return concatBytes([bytes.subarray(0, cut), Uint8Array.from(invalid), bytes.subarray(cut)]);
  }),
  fc.nat().map((at) => (line: string) => bytesOf(line.slice(0, at % line.length))),
  fc
    .constantFrom<[RegExp, string]>(
      [/"seq":(\d+)/, '"seq":$1.0'],
      [/"seq":(\d+)/, '"seq":$1e0'],
      [/"seq":(\d+)/, '"seq":-0'],
      [/"seq":(\d+)/, '"seq":"$1"'],
      [/"seq0":(\d+)/, '"seq0":$11'],
      [/"time0?":(\d+)/, '"time":1e3'],
      [/"time0?":(\d+)/, '"time":12345678901234567'],
      [/"time":(\d+)/, '"time":null'],
      [/"dt":\[/, '"dt":[1.5,'],
      [/"dt":\[/, '"dt":[9007199254740991,'],
      [/"texts":\[/, '"texts":[1,'],
      [/"dt":\[/, '"dt":[7,'],
      [/"texts":\[/, '"texts":["x",'],
      [/"args":\[/, '"args":["x",'],
      [/"dt":\[[^\]]*\]/, '"dt":[]'],
      [/"dt":\[(\d+),(\d+),/, '"dt":[$1,0$2,'],
      [/"dt":\[(\d+),(\d+),/, '"dt":[$1$2,1,'],
      [/"dt":\[(\d+),(\d+),/, '"dt":[$1,,$2,'],
      [/,(\d+)\],"texts"/, ',$1 ],"texts"'],
      [/,(\d+)\],"texts"/, ',-$1],"texts"'],
      [/,(\d)(\d),(\d+)\],"texts"/, ',$1,$2$3],"texts"'],
      [/"sourceEventSeqs":\[(\d+),(\d+),/, '"sourceEventSeqs":[$1,$1,'],
      [/"sourceEventSeqs":\[(\d+),(\d+),/, '"sourceEventSeqs":[$2,$1,'],
      [/,(\d+),(\d+)\],"surfaceOp"/, ',$1,0$2],"surfaceOp"'],
      [/,(\d+),(\d+)\],"surfaceOp"/, ',$2,$1],"surfaceOp"'],
      [/,(\d+),(\d+)\],"surfaceOp"/, ',$1,$2.0],"surfaceOp"'],
      [/,(\d+)(\d),(\d+)\],"surfaceOp"/, ',$1,$2$3],"surfaceOp"'],
      [/"texts":\["[^"]*"\]/, '"texts":[]'],
      [/"args":\[/, '"args":[null,'],
      [/"type":"([^"]+)"/, '"type":"$1","type":"user/message"'],
      [/"type":"([^"]+)"/, '"type":"$1","type":"$1"'],
      [/^\{"type":"([^"]+)",/, '{"data":{},"type":"$1",'],
      [/"type":"assistant\/chunk"/, '"type":"assistant\\/chunk"'],
      [/"type":"([^"]+)"/, '"\\u0074ype":"$1"'],
      [/"type":"([^"]+)"/, '"type":"turn/end"'],
      [/"type":"([^"]+)"/, '"type":"made/up"'],
      [/"type":"([^"]+)"/, '"type":"mode/set"'],
      [/\}$/, ',"ignorable":false}'],
      [/\}$/, ',"ignorable":true}'],
      [/\}$/, ',"surfaceOp":"append"}'],
      [/\}$/, ',"sourceEventSeqs":[1]}'],
      [/\}$/, ',"extra":1}'],
      [/,"data":/, ',"dat":'],
      [/\}$/, '} '],
      [/\}$/, '}}'],
      [/"index":(\d+)/, '"index":"$1"'],
      [/"index":(\d+)/, '"index":-1.5E+2'],
      [/"id":"call_1",/, ''],
      [/"data":\{/, '"data":{"__proto__":1,'],
      [/"chunk":\{/, `"chunk":${'['.repeat(70)}1${']'.repeat(70)},"c2":{`],
      [/"role":"(\w+)"/, '"role":"\\u0061ssistant"'],
      [/"role":"(\w+)"/, '"role":"user"'],
      [/"role":"(\w+)"/, '"role":"assistant"'],
      [/"role":"(\w+)"/, '"role":"$1","role":"$1"'],
      [/"kind":"(\w+)"/, '"kind":""'],
      [/"kind":"(\w+)"/, '"kind":"user"'],
      [/"kind":"(\w+)"/, '"kind":"\\u006dodel"'],
      [/"kind":"(\w+)"/, '"kind":7'],
      [/"provider":"(\w+)"/, '"provider":""'],
      [/"provider":"(\w+)"/, '"provider":"\\u00e9"'],
      [/"model":"(\w+)"/, '"model":null'],
      [/"id":"([^"]+)"/, '"id":""'],
      [/"id":"([^"]+)"/, '"id":"\\n"'],
      [/"id":"([^"]+)"/, '"id":5'],
      [/"id":"([^"]+)"/, '"id":"$1","id":"x"'],
      [/"id":"([^"]+)"/, '"i\\u0064":"$1"'],
      [/,"id":"([^"]+)"\}/, '}'],
      [/"type":"tool-call"/, '"type":"tool-\\u0063all"'],
      [/"type":"tool-call"/, '"type":"tool-call","type":"text"'],
      [/"type":"tool-call"/, '"type":"tool-call","type":5'],
      [/"type":"text"/, '"type":"tool-call"'],
      [/"content":\[/, '"content":[null,'],
      [/"content":\[/, '"content":["x",'],
      [/"content":\[/, '"content":{"0":'],
      [/"content":\[[^\]]*\]/, '"content":7'],
      [/"message":\{/, '"message":[],"message":{'],
      [/"message":\{/, '"message":{"message":1,'],
      [/"message":\{/, '"mess\\u0061ge":{'],
      [/"step":(\d+)/, '"step":$1,"step":2'],
      [/"step":(\d+)/, '"step":-0.5e1'],
      [/"step":(\d+)/, '"st":$1'],
      [/"source":\{/, '"source":{"kind":"tool",'],
      [/"source":\{/, '"source":[],"x":{'],
      [/"provenance":/, '"message":{"id":"m"},"provenance":'],
      [/"surfaceOp":"append"/, '"surfaceOp":"Append"'],
      [/"surfaceOp":"append"/, '"surfaceOp":"\\u0061ppend"'],
      [/"surfaceOp":"append"/, '"surfaceOp":{"op":"replace","start":0,"end":0}'],
      [/,"surfaceOp":"append"/, ''],
      [/"sourceEventSeqs":\[/, '"sourceEventSeqs":[0,'],
      [/"sourceEventSeqs":\[/, '"sourceEventSeqs":[-0,'],
      [/"sourceEventSeqs":\[/, '"sourceEventSeqs":[1e0,'],
      [/"sourceEventSeqs":\[[^\]]*\]/, '"sourceEventSeqs":[]'],
      [/"sourceEventSeqs":\[[^\]]*\]/, '"sourceEventSeqs":[99]'],
      [/"sourceEventSeqs":\[[^\]]*\]/, '"sourceEventSeqs":[1,0]'],
      [/"sourceEventSeqs":\[[^\]]*\]/, '"sourceEventSeqs":{}'],
      [/"seq":(\d+)/, '"seq":$1,"sourceEventSeqs":[0]'],
      [/"seq":(\d+)/, '"seq":50'],
      [/"sourceEventSeqs":\[[^\]]*\]/, '"sourceEventSeqs":[3,3]'],
      [/"sourceEventSeqs":\[[^\]]*\]/, '"sourceEventSeqs":[ 3 , 7 ]'],
      [/\}$/, ',"surfaceOp":"append","sourceEventSeqs":[0]}'],
      [/"type":"([^"]+)"/, '"type":"assistant/message"'],
      [/"type":"([^"]+)"/, '"type":"tool/result"'],
      [/"content":\[\{"type":"text"/, '"content":{"0":{"type":"text"'],
      [/"content":\[\{"type":"tool-result"/, '"content":[{"content":1,"type":"tool-result"'],
      [/"content":\[\{"type":"tool-result"/, '"content":[{"content":[],"type":"tool-result"'],
      [/"content":\[\{"type":"tool-result"/, '"content":[{"cont\\u0065nt":[9],"type":"tool-result"'],
      [/"content":\[\{"type":"tool-result"/, '"content":[7,{"type":"tool-result"'],
      [/"content":\[\{"type":"tool-result"/, '"content":[],"content":[{"type":"tool-result"'],
      [/"toolCallId":"(\w+)"/, '"toolCallId":"x"'],
      [/"turn":(\d+)/, '"turn":$1,"turn":2'],
      [/"turn":(\d+)/, '"turn":"$1"'],
      [/"turn":(\d+)/, '"turn":$1.0'],
      [/"turn":(\d+)/, '"t\\u0075rn":$1'],
      [/"data":\{/, '"data":{"trigger":{"kind":"user"},'],
      [/"data":\{/, '"data":{"tr\\u0069gger":1,'],
      [/"data":\{[^{}]*\}/, '"data":null'],
      [/"data":\{[^{}]*\}/, '"data":[]'],
      [/"data":\{[^{}]*\}/, '"data":"x"'],
      [/"kind":"completed"/, '"kind":"disposed"'],
      [/"kind":"completed"/, '"kind":"completed","kind":"blocked"'],
      [/"kind":"completed"/, '"kind":"completed","x":1'],
      [/"reason":\{/, '"reason":{"kind":"blocked"},"reason":{'],
      [/"callId":"(\w+)"/, '"callId":"$1","callId":"call_2"'],
      [/"callId":"(\w+)"/, '"callId":null'],
      [/"type":"([^"]+)"/, '"type":"turn/start"'],
      [/"type":"([^"]+)"/, '"type":"step/end"'],
      [/"type":"([^"]+)"/, '"type":"tool/call"'],
    )
    .map(([pattern, replacement]) => (line: string) => bytesOf(line.replace(pattern, replacement))),
);

/** What the full path makes of a line the skim accepted: it must be exactly what the skim said. */
function expectSkimSound(bytes: Uint8Array): SkimmedLine | undefined {
  const skimmed = skimLine(bytes);
  if (skimmed === undefined) return undefined;
  const value = JSON.parse(utf8Text(bytes)) as Json;
  expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
  if (!skimmed.row && skimmed.surface === 't') {
    // Only the tool's output may be read as [] instead: it was an array, and nothing else differs.
    const [start, end] = skimmed.content;
    const blanked = JSON.parse(`${utf8Text(bytes.subarray(0, start))}[]${utf8Text(bytes.subarray(end))}`) as Json;
    expect(value.type).toBe('tool/result');
    const block = ((value.data as Json).message as { content: Json[] }).content[0];
    expect(Array.isArray(block.content)).toBe(true);
    block.content = [];
    expect(blanked).toEqual(value);
    return skimmed;
  }
  const row = packedRowOf(value);
  if (skimmed.row) {
    expect(row && { seq: row.seq0, count: row.count, lastTime: row.lastTime }).toEqual({ seq: skimmed.seq, count: skimmed.count, lastTime: skimmed.lastTime });
  } else {
    expect(row).toBeUndefined();
    expect({ seq: value.seq, time: value.time }).toEqual({ seq: skimmed.seq, time: skimmed.time });
    expect(KNOWN_EVENT_TYPES.has(value.type as string)).toBe(true);
    // No legacy upgrade applies: the event is folded as it was stored.
    expect(legacyRefusalOf(value)).toBeUndefined();
    expect(upgradeLegacyEvent(value, 's', () => 'm')).toBe(value);
    expect(envelopeProblem(value, skimmed.seq)).toBeUndefined();
    const surface = emptySurface();
    // An append's sources only need to be earlier events (none is shadowed).
    expect(foldSurfaceEvent(surface, value, skimmed.seq)).toBeUndefined();
    const turns = emptyTurnState();
    expect(trackTurnEvent(turns, value, skimmed.seq)).toBeUndefined();
    if (skimmed.track !== undefined) {
      expect(value.type).toBe(skimmed.track);
      expect(surface).toEqual(emptySurface());
    } else if (skimmed.surface === 'tool') {
      // Folded by the skim: the node it adds is the one the fold adds, rewrite key and message id alike.
      expect(value.type).toBe('tool/result');
      expect(surface.tools).toEqual([[skimmed.seq, skimmed.key, skimmed.messageId]]);
      expect(surface.kinds).toBe('t');
      expect((((value.data as Json).message as Json).source as Json).callId).toBe(skimmed.callId);
    } else if (skimmed.surface === undefined) {
      expect(surface).toEqual(emptySurface());
      expect(turns).toEqual(emptyTurnState());
      expect(value.type === 'assistant/message' || value.type === 'user/message').toBe(false);
    } else {
      expect(surface.kinds).toBe(skimmed.surface);
      expect(value.type).toBe(skimmed.surface === 'a' ? 'assistant/message' : 'user/message');
      const replayed = emptyTurnState();
      for (const [callId, step] of skimmed.calls) requestToolCall(replayed, callId, step);
      expect(turns).toEqual(replayed);
    }
    expectFoldedAlike(value, skimmed);
  }
  return skimmed;
}

const HEADER: SessionHeaderRecord = { type: 'session', version: 1, id: 's', createdAt: 0, delegationDepth: 0 };

/** A fold at `seq` in the middle of a turn: a step open, calls pending (one started), one of them without an id. */
function midTurn(seq: number): LogFoldState {
  const pending: TurnState['pending'] = [['call_1', 2, null], ['call_2', 2, 4], [undefined, 2, null], [7, 1, null]];
  return { ...emptyFoldState(), eventCount: seq, lastTime: 5, turns: { turnOpen: true, turn: 1, stepOpen: true, step: 2, pending } };
}

/** Folded in the middle of a turn, the skimmed line leaves the fold exactly as its parsed event does. */
function expectFoldedAlike(value: Json, skimmed: SkimmedLine): void {
  const parsed = new LogFold(HEADER, midTurn(skimmed.seq));
  parsed.accept(value);
  const read = new LogFold(HEADER, midTurn(skimmed.seq));
  expect(read.acceptSkimmed(skimmed)).toBe(true);
  expect(read.state).toEqual(parsed.state);
}

function summarize(log: Uint8Array, skimLines: boolean, pieces: number[], maxRecordBytes?: number): unknown {
  const summarizer = new SessionLogSummarizer('raw', { skimLines, maxRecordBytes });
  let at = 0;
  for (const size of pieces) {
    summarizer.push(log.subarray(at, Math.min(log.length, at + size)));
    at = Math.min(log.length, at + size);
  }
  summarizer.push(log.subarray(at));
  return { summary: summarizer.summary(), state: summarizer.toJSON() };
}

describe('reading lines without parsing them', () => {
  it('runs here: the skim (WebAssembly with SIMD) loads on every Node this project supports', () => {
    // Without it every line would be parsed: correct, but the index would be several times slower.
    expect(lineSkim()).not.toBeNull();
  });

  it('skims the chunk, row, bookkeeping, tracked and appended message lines of the demos, and parses the rest', () => {
    const skimmed = renumbered(DEMO_2.slice(1)).filter((line) => skimLine(bytesOf(line)) !== undefined);
    expect(skimmed.map((line) => (JSON.parse(line) as Json).type)).toEqual([
      'turn/start',
      'step/start',
      'user/message',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
      'compaction/start',
      'compaction/summary',
      'compaction/end',
    ]);
    // What the closers' tracking reads of each: the value under its one key.
    expect(skimLine(bytesOf(DEMO_2[1]))).toEqual({ row: false, seq: 0, time: 1767225700010, track: 'turn/start', value: 1 });
    expect(skimLine(bytesOf(DEMO_2[6]))).toEqual({ row: false, seq: 5, time: 1767225700401, track: 'tool/call', value: 'call_1' });
    expect(skimLine(bytesOf(DEMO_2[12]))).toEqual({ row: false, seq: 11, time: 1767225700801, track: 'turn/end', value: undefined });
    // The compacted summary's sources are not ascending (a set is needed to find repeats): parsed.
    expect(skimLine(bytesOf(DEMO_2[15]))).toBeUndefined();
    // The tool result is folded: its surface node is the one the fold makes of the parsed line.
    const result = JSON.parse(DEMO_2[7]) as Json;
    const surface = emptySurface();
    expect(foldSurfaceEvent(surface, result, 6)).toBeUndefined();
    const [[, key, messageId]] = surface.tools;
    expect(skimLine(bytesOf(DEMO_2[7]))).toEqual({ row: false, seq: 6, time: 1767225700420, surface: 'tool', key, messageId, callId: 'call_1' });
    // One whose data is not in canonical form (a fraction): its output, `[{"type":"text","text":"alpha\\n"}]`, is found (to be parsed as []).
    const fraction = DEMO_2[7].replace('"turn":1', '"turn":1.5');
    const output = '[{"type":"text","text":"alpha\\n"}]';
    const at = fraction.indexOf(output);
    expect(skimLine(bytesOf(fraction))).toEqual({ row: false, seq: 6, time: 1767225700420, surface: 't', content: [at, at + output.length] });
    expect(skimLine(bytesOf(DEMO_2[5]))).toEqual({ row: false, seq: 4, time: 1767225700400, surface: 'a', calls: [['call_1', 1]] });
    const demo1 = renumbered(DEMO_1.slice(1));
    expect(skimLine(bytesOf(demo1[4]))).toEqual({ row: true, seq: 4, count: 3, lastTime: 1767225600512 });
    expect(skimLine(bytesOf(demo1[5]))).toEqual({ row: false, seq: 7, time: 1767225600513 });
  });

  it('a run reads through turn/end and step/end lines and says which reset of the tracking they make', () => {
    const skim = lineSkim()!;
    const run = (lines: string[], expected = 0) => {
      const chunk = bytesOf(lines.map((line) => `${line}\n`).join(''));
      expect(skim.stage(chunk)).toBe(true);
      const found = skim.run(0, chunk.length, expected, 1 << 20);
      return { lines: found.lines, eventCount: found.eventCount, stop: found.stop, reset: found.reset };
    };
    const chunk = (seq: number) => ev.of('assistant/chunk', seq, { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } });
    expect(run([chunk(0), chunk(1)])).toEqual({ lines: 2, eventCount: 2, stop: RUN_END, reset: NO_RESET });
    expect(run([chunk(0), ev.stepEnd(1), chunk(2)])).toEqual({ lines: 3, eventCount: 3, stop: RUN_END, reset: STEP_RESET });
    expect(run([ev.stepEnd(0), ev.turnEnd(1)])).toMatchObject({ lines: 2, reset: TURN_RESET });
    // A step/end after a turn/end leaves what the turn/end left.
    expect(run([ev.turnEnd(0), ev.stepEnd(1), chunk(2)])).toMatchObject({ lines: 3, reset: TURN_RESET });
    // The lines that set the tracking's values stop the run, as before.
    const stopped = run([ev.stepEnd(0), ev.stepStart(1, 2), ev.stepEnd(2)]);
    expect(stopped).toMatchObject({ lines: 1, eventCount: 1, reset: STEP_RESET });
    expect(stopped.stop).toBeGreaterThan(0);
    // So does one that does not continue the seqs.
    expect(run([ev.turnEnd(5)], 4)).toMatchObject({ lines: 0, eventCount: 4, reset: NO_RESET });
  });

  it('tool results in canonical form are folded by the skim, rewrite key and all; the others are parsed', () => {
    const kinds = TOOL_RESULTS.map((line) => {
      const skimmed = expectSkimSound(bytesOf(line));
      return skimmed?.row === false ? skimmed.surface : undefined;
    });
    // Non-ASCII, a \\u escape, an escaped slash, a fraction: JSON.stringify writes each otherwise.
    expect(kinds).toEqual(['tool', 'tool', 't', 't', 't', 't']);
  });

  it('long dt and sourceEventSeqs arrays are skimmed, on the quick paths or not, as JSON.parse reads them', () => {
    for (const line of LONG_ARRAYS) expect(expectSkimSound(bytesOf(line))).toBeDefined();
    // Near misses, each where a quick path could go wrong: every one is skimmed only as JSON.parse and dsh's checks read it.
    const row = textRow('text-chunks', range(1, 31));
    const head = range(1, 30).join(',');
    const dts = [`[${head},05]`, `[${head},100]`, `[${head},-1]`, `[${head},,8]`, `[${head},9 ]`, `[${head},7,]`];
    const rows = dts.filter((dt) => expectSkimSound(bytesOf(row.replace(/"dt":\[[^\]]*\]/, `"dt":${dt}`))) !== undefined);
    // A longer, a negative gap and a space are valid: the general path reads them.
    expect(rows).toEqual([`[${head},100]`, `[${head},-1]`, `[${head},9 ]`]);
    const message = sourcesMessage('user/message', [0]);
    const sources = ['[5,5,6]', '[5,6,7,7,8]', '[5,6,8,7]', '[5,6,07]', '[5,6}', '[9,10,11,1]', '[99,100,100]', '[998,999,1000,1001]', '[8,9,10,110]'];
    const skimmed = sources.filter((list) => expectSkimSound(bytesOf(message.replace(/"sourceEventSeqs":\[[^\]]*\]/, `"sourceEventSeqs":${list}`))) !== undefined);
    expect(skimmed).toEqual(['[998,999,1000,1001]', '[8,9,10,110]']);
    // The last source decides against the seq: one past 99 read as 100, 200 or 1000 must be what it is.
    const at150 = message.replace('"seq":5000', '"seq":150');
    const near = ['[98,99,100]', '[98,99,200]', '[98,99,1000]'];
    expect(near.filter((list) => expectSkimSound(bytesOf(at150.replace(/"sourceEventSeqs":\[[^\]]*\]/, `"sourceEventSeqs":${list}`))) !== undefined)).toEqual(['[98,99,100]']);
  });

  it('a skimmed line is exactly what JSON.parse and dsh’s checks make of it, whatever the damage', () => {
    let skimmed = 0;
    let messages = 0;
    let calls = 0;
    let results = 0;
    let folded = 0;
    let tracked = 0;
    fc.assert(
      fc.property(fc.constantFrom(...TEMPLATES), fc.array(damageArbitrary, { maxLength: 3 }), (template, damages) => {
        let bytes: Uint8Array = bytesOf(template);
        for (const damage of damages) bytes = damage(utf8Text(bytes));
        const line = expectSkimSound(bytes);
        if (line !== undefined) skimmed++;
        if (line?.row === false && line.track !== undefined) tracked++;
        if (line?.row === false && line.surface === 't') results++;
        else if (line?.row === false && line.surface === 'tool') folded++;
        else if (line?.row === false && line.surface !== undefined) {
          messages++;
          if (line.calls.length > 0) calls++;
        }
      }),
      { numRuns: 30_000 },
    );
    expect(skimmed).toBeGreaterThan(2_000);
    expect(messages).toBeGreaterThan(1_000);
    expect(calls).toBeGreaterThan(200);
    expect(results).toBeGreaterThan(200);
    expect(folded).toBeGreaterThan(200);
    expect(tracked).toBeGreaterThan(1_000);
  });

  it('random bytes around a line’s key parts are never skimmed into something JSON.parse disagrees with', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (before, after) => {
        expectSkimSound(concatBytes([bytesOf('{"type":"assistant/chunk","seq":0,"time":1,"data":'), before, bytesOf('}'), after]));
        expectSkimSound(concatBytes([before, bytesOf('{"type":"request/context","seq":0,"time":1,"data":1}'), after]));
      }),
      { numRuns: 5_000 },
    );
  });

  it('summaries and saved states are identical with and without skimming, on valid and damaged logs, however pushed', () => {
    const templates = fc.array(fc.constantFrom(...TEMPLATES), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(
        templates,
        fc.array(fc.tuple(fc.nat(40), damageArbitrary), { maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 8 }),
        fc.boolean(),
        (picked, damages, pieces, terminated) => {
          const lines: Uint8Array[] = renumbered(picked).map(bytesOf);
          for (const [at, damage] of damages) lines[at % lines.length] = damage(utf8Text(lines[at % lines.length]));
          const body = lines.flatMap((line) => [line, bytesOf('\n')]);
          if (!terminated) body.pop();
          const log = concatBytes([bytesOf(`${headerLine('s-1')}\n`), ...body]);
          expect(summarize(log, true, pieces)).toEqual(summarize(log, false, pieces));
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('a line over the record limit amid skimmed lines fails the log as it does without skimming', () => {
    const lines = renumbered([...TEMPLATES.slice(0, 12), ...TEMPLATES.slice(0, 12)]).map(bytesOf);
    const longest = Math.max(...lines.map((line) => line.length));
    const log = concatBytes([bytesOf(`${headerLine('s-1')}\n`), ...lines.flatMap((line) => [line, bytesOf('\n')])]);
    for (const limit of [longest - 1, longest, 400]) {
      for (const pieces of [[], [17], [300, 5, 900]]) {
        const skimmed = summarize(log, true, pieces, limit) as { summary: { error?: unknown } };
        expect(skimmed).toEqual(summarize(log, false, pieces, limit));
        if (limit < longest) expect(JSON.stringify(skimmed.summary)).toContain('"reason":"too-large"');
      }
    }
  });
});
