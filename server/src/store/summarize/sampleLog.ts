/**
 * One small, well-formed session log that the server and the CLI summarize, from memory, right
 * before they make their V8 code cache (codeCache.ts, serverProcess.ts, cliProcess.ts). A code
 * cache holds only the functions the run that made it had compiled, and it is kept for as long as
 * the bundle is unchanged: a run answered from the index cache decodes no log, so without this its
 * cache left every later cold start compiling the whole read, decode and fold path lazily.
 * Summarizing this log, raw and zstd, through the index's own `summarizeTranscriptFile` compiles
 * that path first.
 *
 * The log is examples/store's hourly-forecast session (a tool call and its result, packed text
 * chunks, a fallback title and a provider title after `turn/end`). Its zstd form was written by the
 * `zstd` CLI 1.5.4 (`-19`, content checksums) as dsh writes a log: the header line in a frame of its
 * own, then one frame per append batch (lines 2–9, 10–15, 16).
 */
import type { Stats } from 'node:fs';
import type { OpenTranscript, TranscriptFiles } from '../transcriptFiles';
import { summarizeTranscriptFile, type SummarizeOutcome } from './summarizeFile';

/** The sample's lines (without their newlines). */
export const SAMPLE_LOG_LINES: readonly string[] = [
  '{"type":"session","version":0,"id":"0b6f3c1e-5a7d-4c2e-9f11-3d8e2a4b6c01","createdAt":1795169100000,"cwd":"/home/sam/weather-app","delegationDepth":0}',
  '{"type":"turn/start","seq":0,"time":1795169104010,"data":{"turn":1}}',
  '{"type":"step/start","seq":1,"time":1795169104011,"data":{"turn":1,"step":1}}',
  '{"type":"user/message","seq":2,"time":1795169104012,"data":{"content":[{"type":"text","text":"Add a GET /forecast/hourly endpoint that returns the next 24 hours for a city."}],"source":{"kind":"user"},"role":"user","id":"5f0c2a8e-1b3d-4e6f-8a9b-0c1d2e3f4a51"},"surfaceOp":"append"}',
  '{"type":"session/title","seq":3,"time":1795169104013,"data":{"title":"Add a GET /forecast/hourly endpoint","messageSeqs":[2],"source":{"kind":"fallback"}}}',
  '{"type":"assistant/message","seq":4,"time":1795169104713,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":"call_hourly_1","name":"read","arguments":"{\\"path\\":\\"src/routes/forecast.ts\\"}"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"5f0c2a8e-1b3d-4e6f-8a9b-0c1d2e3f4a52"}},"surfaceOp":"append"}',
  '{"type":"tool/call","seq":5,"time":1795169104714,"data":{"turn":1,"step":1,"callId":"call_hourly_1","name":"read","arguments":"{\\"path\\":\\"src/routes/forecast.ts\\"}"}}',
  '{"type":"tool/result","seq":6,"time":1795169104754,"data":{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"call_hourly_1"},"content":[{"type":"tool-result","toolCallId":"call_hourly_1","content":[{"type":"text","text":"import { Router } from \'express\';\\nexport const forecast = Router();\\nforecast.get(\'/daily\', dailyHandler);\\n"}],"isError":false}],"role":"user","id":"5f0c2a8e-1b3d-4e6f-8a9b-0c1d2e3f4a53"}},"sourceEventSeqs":[5],"surfaceOp":"append"}',
  '{"type":"step/end","seq":7,"time":1795169104755,"data":{"turn":1,"step":1}}',
  '{"type":"step/start","seq":8,"time":1795169104756,"data":{"turn":1,"step":2}}',
  '{"type":"text-chunks","seq0":9,"time0":1795169105356,"data":{"turn":1,"step":2,"index":0,"dt":[23,30,37],"texts":["Added `forecast.get(\'/hourly\', hourlyHandler)` in src/routes/forecast.ts."," It calls OpenWeather\'s /forecast/hourly,"," keeps the first 24 entries"," and maps them to { time, tempC, precipitationMm }."]}}',
  '{"type":"assistant/chunk","seq":13,"time":1795169105447,"data":{"turn":1,"step":2,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}',
  '{"type":"assistant/message","seq":14,"time":1795169105448,"data":{"turn":1,"step":2,"message":{"role":"assistant","content":[{"type":"text","text":"Added `forecast.get(\'/hourly\', hourlyHandler)` in src/routes/forecast.ts. It calls OpenWeather\'s /forecast/hourly, keeps the first 24 entries and maps them to { time, tempC, precipitationMm }."}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"5f0c2a8e-1b3d-4e6f-8a9b-0c1d2e3f4a54"}},"sourceEventSeqs":[9,10,11,12,13],"surfaceOp":"append"}',
  '{"type":"step/end","seq":15,"time":1795169105449,"data":{"turn":1,"step":2}}',
  '{"type":"turn/end","seq":16,"time":1795169105450,"data":{"turn":1,"reason":{"kind":"completed"}}}',
  '{"type":"session/title","seq":17,"time":1795169105451,"data":{"title":"Hourly forecast endpoint","messageSeqs":[2],"source":{"kind":"provider","provider":"deepseek-official"}}}',
];

/** The same log as `session.jsonl.zstd` (base64 of 1431 bytes, four frames). */
export const SAMPLE_LOG_ZSTD_BASE64 = [
  'KLUv/SSX7QMA4ogcGWB3DqMdO6gsq7JtQVBAjVoeR73ZLIKUgAjABuOfSnuZKKiy01HPu1PKr+qncmOBxFbQEvUEj5+YvIObGFsk',
  'x8ZXZXblruTdF0qDIVhoZA5vt0leC5J48+Di9cqhMRj4+AndwVj1dfeJgiyrrcc3zeq1AgCEG1Gv0gTPrBgdKLUv/WSUBbUSAKZf',
  'XiQQcdwQYDBRtJeiMsxn34I1u5JCN4aLeVnjt9bNFEwSAIAiAARSAFQAUgCxqRlh3jfinhKzJhga1q73FNQx/QlTOH3JL2fkOIyx',
  '7ixhmp1irU38DlBVzWnF6f4+ZU1rnqYdEDTooKA5ZQl8ZY1TDXZl+r3vjGzq1SlPlNdK0J31SZ6mVacTBEcrNeUN2kd6sPNa1CwX',
  'B2uwSAT8LO9x0RY2WCdqJAgq4zhbWaVPwgyOmpqurKLSAcrDaO3qKS1fj7N+wnKxc6/fyK+XcE5P8qIEzE+dNj+4MXviNyWVQvwH',
  'nJ+azUTtCnEKifxOCqmoU3/JEgqjV5m+5daVyrRZWMS40RLnZPpoBc/LfYfuW2lGtBcxruRQOHUNllCmj0d8+IycAVAB9JI3GB7s',
  'cSWnPbsZHDbHJ9dhMQclwn2MI+AZQyAgYa33CUsIgsOde5qwY0lmS6taHbEq63tOErhQKUTwkXLuhwdiKnUqjfhGaXk2FkZQkuaS',
  'wexTW6BhwVFGRkZKCkoKUuhgJBAqqvUE5h66Gs7hxcC8A5rlWLJADqpw1JD1DsmxhesnSqxMlPMuShENwa3ke3kCR4A15tK0fqOR',
  'h4CRBeaaRmQHrUUaxInZidGbHqm2TrgaQYg6B7E0A1QfPpYErBdiRwmC0H+m1txiS+usTn71qASlEhgCs/EGKxcB3fUDyjrBgNkP',
  'LMrB7PQWXxHLPXfUpru3ywI8cDc2porHtf7a2Ke3vd9iAdk8Z07ARqwtIdD1c4IqDepyz+bRetJLhM6zrVnSytIh0Udr26vWcy7j',
  'KLUv/WTYAzUQABYeWiAwkR7DImQ7irSMsWY7IO2KwzIKmWu1b6/lTJlrYJDiEFEAUABOAC5lovGbHKYHTW+SJFe/7AddvXFJZ7+p',
  'gqyrIXyhmSw+v/EH5Cxd/ejNfHeuhg9lP0N1oKDIMkSVdYiu9m1+P8TVGMf9+i98XLD+uK92y/nuBO+e67j6boObwz7vU3eU5B7f',
  'iTnP3mHrfnkOB65nDz1C3T4c1jQY3TdcvybgL2D/TL2FeLGj01EG1zVJIcO9AEe7mZoVAoJ3C+ExjH4rRnEyLq/LqanX9mvNZd08',
  '3kzF/Sb5ek39aY39WqsXQbkFYuxbzm3rY0nnhVYM/fbrDE86setAUdUUFZ7CxxNjOGlCdpuD1vnwp53Rr3VPYTcPgJxzS3/X7FYj',
  'VBmsCpBbUrfWPjxC7Gam6EnRi6IHRc/COOSpaxY5N1VBCptcklGEnooFEQ9mcOqRUyV6HAGlCGHV7Jc7w1DDHkoDZ5wYVp+LBz4g',
  'UCJBDA5vwZQAz1jC0M5+BnGFPFeUG8jbhTWwkHDTYA7F+4/K4jfwD1PrvxgKCATmuS1mAO5udMY5w7wQpAvBsX90xRgi2YV0ghPu',
  'BhigWAZlDihjjLYVUwyAaEPtKDJkAEcwBLOJl76QdAFFBDuAWkMchh4AgzFeg2xm4EJxZFoGyAOxQEz+GrBGbcT0IBLDR6nyvO4D',
  '4EEBVjjDiSi1L/0ksUUEAKIJHhlQtQ4jgZC6AGP2ahnqNKIpR1DiyXNmys0awLZtn+J8JgRVQWJuyywP3S2WE6uWPbykU7oGz0/f',
  'OUUD3xUzHMVupu5+6axWUg5ux4etCgXZZF11ObwGH2+Ud+8wDuIpyDsUpua9Sx58xX13nu68A62zm/vwbLN7LQQAXbYGUAE4qmFu',
  'UJ60pBP+',
].join('');

/** The sample's bytes in `encoding`. */
export function sampleLogBytes(encoding: 'raw' | 'zstd'): Uint8Array {
  return encoding === 'raw' ? new TextEncoder().encode(SAMPLE_LOG_LINES.join('\n') + '\n') : new Uint8Array(Buffer.from(SAMPLE_LOG_ZSTD_BASE64, 'base64'));
}

/** File access that serves `bytes` as every file: enough for `summarizeTranscriptFile`. */
function filesOf(bytes: Uint8Array): TranscriptFiles {
  const stats = { size: bytes.length, mtimeMs: 0, ctimeMs: 0, ino: 0, dev: 0, isFile: () => true } as unknown as Stats;
  const open: OpenTranscript = {
    stat: () => Promise.resolve(stats),
    read(buffer, offset, length, position) {
      const piece = bytes.subarray(position, position + length);
      buffer.set(piece, offset);
      return Promise.resolve({ bytesRead: piece.length });
    },
    readFile: () => Promise.resolve(bytes.slice()),
    close: () => Promise.resolve(),
  };
  return { lstat: () => Promise.resolve(stats), stat: () => Promise.resolve(stats), open: () => Promise.resolve(open) };
}

/** Summarizes the sample, raw then zstd, as the index would (see the module comment). */
export async function summarizeSampleLogs(): Promise<SummarizeOutcome[]> {
  const outcomes: SummarizeOutcome[] = [];
  for (const encoding of ['raw', 'zstd'] as const) {
    const file = encoding === 'raw' ? 'sample/session.jsonl' : 'sample/session.jsonl.zstd';
    outcomes.push(await summarizeTranscriptFile({ file, encoding }, filesOf(sampleLogBytes(encoding))));
  }
  return outcomes;
}

/** Off only in the bench's variant build without the sample (server/esbuild.mjs `SPEED_DEVICES`). */
declare const DSH_DEVICE_SAMPLE_LOG: boolean | undefined;
const SAMPLE_ON = typeof DSH_DEVICE_SAMPLE_LOG === 'undefined' || DSH_DEVICE_SAMPLE_LOG;

/** Runs `run` (making a code cache) once the sample is summarized, whether or not that succeeded. */
export async function afterSampleLogs(run: () => void): Promise<void> {
  if (SAMPLE_ON) await summarizeSampleLogs().catch(() => undefined);
  run();
}
