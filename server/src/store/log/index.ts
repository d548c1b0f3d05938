/**
 * The dsh transcript decoder: the bytes of one `session.jsonl` or `session.jsonl.zstd` into
 * exactly what dsh's read-only `inspect()` / `readSurface` sees. Pure (no file access).
 *
 * zstd needs `await initZstdSupport()` once per process; every read is synchronous afterwards.
 *
 * Where things live (store doc sections in brackets):
 * - `load.ts` full load (one-shot or streamed) and header-only read; `summarizer.ts` the
 *   index's incremental view;
 * - `sessionLogReader.ts` bytes → lines for both encodings, torn tails, state save/restore (§5.3, §5.4);
 * - `zstdFrames.ts` frame splitting (§5.2); `zstdDecoder.ts` libzstd in wasm (`zstdWasm.ts`)
 *   or fzstd (one call per frame, else streamed) + XXH64, in pieces (§5.6);
 * - `lines.ts` byte-level line splitting and the 64 MiB record limit;
 * - `lineSkim.ts` the lines no stage looks into (chunks, packed rows, bookkeeping), read from
 *   their bytes without decoding or parsing them;
 * - `recordScanner.ts` dsh's keep/cut/corrupt rules per line; `rows.ts` packed rows (§4);
 * - `logFold.ts` the per-event stages in dsh's order; `header.ts` (§2); `legacy.ts` (§3.7);
 *   `eventRules.ts` known types, envelope and message checks (§3); `surfaceFold.ts` (§6.1);
 *   `closers.ts` crash-repair closers (§6.5).
 * Transcript builders and the §8 demos for tests are in `src/testing/`.
 */
export { parseSessionHeaderLine, type SessionHeaderRecord } from './header';
export {
  createSessionLogLoader,
  loadSessionLog,
  readSessionHeader,
  type LoadSessionLogOptions,
  type LoadedSessionLog,
  type SessionLogLoader,
} from './load';
export { MAX_RECORD_BYTES } from './lines';
export type { TranscriptEncoding } from './sessionLogReader';
export {
  SessionLogSummarizer,
  type LogSummary,
  type SessionLogSummarizerJSON,
  type SessionLogSummarizerOptions,
} from './summarizer';
export type { SurfaceCounts } from './surfaceFold';
export { initZstdSupport, type PlaintextSink, type ZstdFrameDecoder } from './zstdDecoder';
