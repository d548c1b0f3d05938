/** The zstd decoders of store/log/zstdDecoder.ts, for tests that compare them. */
import { fzstdDecoder, wasmZstdDecoder, type ZstdFrameDecoder } from '../store/log/zstdDecoder';

/** Every decoder this runtime can use. */
export function availableZstdDecoders(): ZstdFrameDecoder[] {
  return [wasmZstdDecoder(), fzstdDecoder()].filter((decoder): decoder is ZstdFrameDecoder => decoder !== undefined);
}
