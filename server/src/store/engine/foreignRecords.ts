/**
 * Another agent's file read as JSONL records through bounded lines (`foreignLines.ts`), never as one
 * text: a session file for its surface or whole log, the agent's title index for its titles. Lines
 * are numbered as `parseJsonl` numbers them (a line skipped as too big to hold keeps its number).
 *
 * What the process's read budget (`../memoryBudget.ts`) counts here: a line longer than a piece
 * while it is put together, and a compressed file while it is decoded (one {@link BigBufferGrant}
 * of the line limit, given back when the line ends or the read is done). Not counted: the pieces
 * (1 MiB each), and the records a {@link RecordCollector} keeps, which live as long as the caller
 * keeps them: the first 1 MiB of lines parsed, the rest as their bytes, up to the file's size (at
 * most the foreign read limit, 64 MiB, plus one partly filled 4 MiB block). A surface read of a
 * big file thus holds up to about its size after its grant went back, as a dsh surface holds its events.
 */
import type { FileHandle } from 'node:fs/promises';
import { MAX_FOREIGN_FILE_BYTES } from '../formats/adapter';
import { decodeZstdPieces, PlaintextTooLarge } from '../formats/compressed';
import { parseJsonlLine } from '../formats/lineFold';
import type { JsonlRecord } from '../formats/records';
import { openRegularFile } from '../regularFile';
import { BigBufferGrant, BoundedLines, takeLineBuffer, type ForeignLineSink } from './foreignLines';
import { pushWithGrant, readRange, streamRange, type ForeignFileHandle } from './foreignRead';

const NEWLINE = 0x0a;

/** Lines kept parsed for a surface, up to this many bytes of them; the others are kept as bytes and parsed when read. */
export const PARSED_RECORD_BYTES = 1024 * 1024;

/** Bytes of one block of kept lines (a longer line has a block of its own). */
const BLOCK_BYTES = 4 * 1024 * 1024;

/** Hands each line's object (as `parseJsonl` reads it) to `onRecord`, with its line number. */
export class JsonlRecordLines implements ForeignLineSink {
  private line = 0;

  constructor(private readonly onRecord: (line: number, value: Record<string, unknown>, bytes: Buffer, start: number, end: number, owned: boolean) => void) {}

  lines(bytes: Buffer, start: number, end: number, owned = false): void {
    let position = start;
    while (position < end) {
      let lineEnd = bytes.indexOf(NEWLINE, position);
      if (lineEnd < 0 || lineEnd >= end) lineEnd = end;
      const value = parseJsonlLine(bytes, position, lineEnd);
      if (value !== undefined) this.onRecord(this.line, value, bytes, position, lineEnd, owned);
      this.line++;
      position = lineEnd + 1;
    }
  }

  skipped(): void {
    this.line++;
  }
}

/** Line bytes packed into blocks, outside the JS heap. */
class LineBlocks {
  private block: Buffer = Buffer.alloc(0);
  private used = 0;

  /** A copy of `bytes[start, end)`: the block holding it and where. */
  store(bytes: Buffer, start: number, end: number): { block: Buffer; offset: number } {
    const length = end - start;
    if (this.used + length > this.block.length) {
      this.block = takeLineBuffer(Math.max(length, BLOCK_BYTES));
      this.used = 0;
    }
    const offset = this.used;
    bytes.copy(this.block, offset, start, end);
    this.used += length;
    return { block: this.block, offset };
  }
}

/** A record kept as its line's bytes: its object parsed again at each read of `value`. */
class StoredRecord implements JsonlRecord {
  constructor(
    readonly line: number,
    private readonly block: Buffer,
    private readonly offset: number,
    private readonly length: number,
  ) {}

  get value(): Record<string, unknown> {
    return parseJsonlLine(this.block, this.offset, this.offset + this.length)!;
  }
}

/**
 * The records of a file, as `parseJsonl` gives them, kept within a bound: the first
 * {@link PARSED_RECORD_BYTES} of lines as objects, the rest as their bytes (parsed again when read),
 * so a file costs about its size, however its lines parse.
 */
export class RecordCollector extends JsonlRecordLines {
  readonly records: JsonlRecord[] = [];
  private parsedBytes = 0;
  private readonly blocks = new LineBlocks();

  constructor() {
    super((line, value, bytes, start, end, owned) => {
      if (this.parsedBytes + (end - start) <= PARSED_RECORD_BYTES) {
        this.parsedBytes += end - start;
        this.records.push({ line, value });
        return;
      }
      // A line put together on its own is kept where it is.
      const { block, offset } = owned ? { block: bytes, offset: start } : this.blocks.store(bytes, start, end);
      this.records.push(new StoredRecord(line, block, offset, end - start));
    });
  }
}

/** `handle` as the positioned reads of the engine's readers. */
function positioned(handle: FileHandle): ForeignFileHandle {
  return { read: async (buffer, offset, length, position) => (await handle.read(buffer, offset, length, position)).bytesRead, close: () => handle.close() };
}

/**
 * Streams a regular file (a `.zst` one decoded whole, `PlaintextTooLarge` past the read limit) through
 * bounded lines into `sink`, the torn last line included; aborted between pieces by `signal`. Throws
 * what the file system throws (`NotRegularFileError` for anything but a regular file).
 */
export async function streamForeignFile(file: string, sink: ForeignLineSink, signal?: AbortSignal): Promise<void> {
  const handle = await openRegularFile(file);
  const grant = new BigBufferGrant(signal);
  try {
    const size = (await handle.stat()).size;
    const lines = new BoundedLines(sink);
    if (file.endsWith('.zst')) {
      if (size > MAX_FOREIGN_FILE_BYTES) throw new PlaintextTooLarge(`a compressed file of ${size} bytes`);
      await grant.hold(true);
      for (const piece of await decodeZstdPieces(await readRange(positioned(handle), 0, size), MAX_FOREIGN_FILE_BYTES)) lines.push(piece);
    } else {
      await streamRange(positioned(handle), 0, size, (piece) => {
        signal?.throwIfAborted();
        return pushWithGrant(lines, piece, grant);
      });
    }
    lines.end();
  } finally {
    grant.release();
    await handle.close().catch(() => undefined);
  }
}

/** The records of a session file (see {@link RecordCollector} and {@link streamForeignFile}). */
export async function readForeignRecords(file: string, signal?: AbortSignal): Promise<JsonlRecord[]> {
  const collector = new RecordCollector();
  await streamForeignFile(file, collector, signal);
  return collector.records;
}
