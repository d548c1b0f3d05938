/** The prepare baseline: read + decode + `JSON.parse` every line of some logs (bench/README.md). */
import { readPlaintext, type TranscriptFile } from './floor';
import { median } from '../stats';

/** Every run's time and the median. */
export interface DecodeParseResult {
  runs: number[];
  median: number;
  lines: number;
}

/** Read, decode and parse every line of `files`, `runs` times. */
export function measureDecodeParse(files: readonly TranscriptFile[], runs: number): DecodeParseResult {
  const times: number[] = [];
  let lines = 0;
  const decoder = new TextDecoder();
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    lines = 0;
    for (const file of files) {
      const text = decoder.decode(readPlaintext(file));
      let at = 0;
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', at)) {
        JSON.parse(text.slice(at, end));
        lines += 1;
        at = end + 1;
      }
    }
    times.push(performance.now() - started);
  }
  return { runs: times, median: median(times), lines };
}
