/**
 * Test support for dsh logs: the one log writer (bench/src/generate/dshLog.ts: events, packed rows,
 * batches, raw and zstd transcripts), and the two worked examples of the store doc (§8).
 */
export * from '../../../bench/src/generate/dshLog';

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
