/**
 * The dsh transcript decoder: the bytes of one `session.jsonl` or `session.jsonl.zstd` into
 * exactly what dsh's read-only `inspect()` / `readSurface` sees. Pure (no file access).
 *
 * zstd needs `await initZstdSupport()` once per process; every read is synchronous afterwards.
 */
export { parseSessionHeaderLine, type SessionHeaderRecord } from './header';
export { loadSessionLog, readSessionHeader, type LoadSessionLogOptions, type LoadedSessionLog } from './load';
export { MAX_RECORD_BYTES } from './lines';
export type { TranscriptEncoding } from './sessionLogReader';
export {
  SessionLogSummarizer,
  type LogSummary,
  type SessionLogSummarizerJSON,
  type SessionLogSummarizerOptions,
} from './summarizer';
export type { SurfaceCounts } from './surfaceFold';
export { availableZstdDecoders, initZstdSupport, type ZstdFrameDecoder } from './zstdDecoder';
