/**
 * What a load that keeps only the current surface holds while folding: each surface event as a
 * copy of its line, packed into one buffer per fold (outside the JS heap). Most surface events
 * are shadowed before the log ends, so only the survivors are parsed again at the end; the
 * parsed objects of the others never outlive their line, and the bytes of shadowed lines are
 * reclaimed by compacting the buffer, not left for the garbage collector: memory follows the
 * largest surface, not the log.
 */
import type { SessionEventRecord } from '../../resolver/sessionStore';
import { utf8Text } from './lines';

/** A surface event kept as its line's bytes in a {@link LineArena}. */
export class StoredLine {
  constructor(
    readonly seq: number,
    readonly arena: LineArena,
    /** Where the bytes are in the arena's buffer (compaction moves them). */
    public offset: number,
    readonly length: number,
  ) {}

  /** The event as the line parses (an event stored this way needed no legacy upgrade). */
  event(): SessionEventRecord {
    return JSON.parse(utf8Text(this.arena.bytes.subarray(this.offset, this.offset + this.length))) as SessionEventRecord;
  }
}

/** A collected event: the event itself, or its line (see {@link StoredLine}). */
export type KeptEvent = SessionEventRecord | StoredLine;

/** The event a {@link KeptEvent} stands for. */
export function keptEvent(kept: KeptEvent): SessionEventRecord {
  return kept instanceof StoredLine ? kept.event() : kept;
}

const MIN_CAPACITY = 64 * 1024;
const EMPTY = new Uint8Array(0);

/**
 * Buffers of finished arenas, reused by the next ones: loads run one after another (and a few at
 * once), so their buffers are taken again at once instead of piling up until a garbage collection.
 */
const spareBuffers: Uint8Array[] = [];
const MAX_SPARE_BUFFERS = 4;
const MAX_SPARE_BYTES = 8 * 1024 * 1024;

/** A spare buffer of at least `size` bytes (the smallest that fits), or a new one. */
function takeBuffer(size: number): Uint8Array {
  let best = -1;
  for (let i = 0; i < spareBuffers.length; i++) {
    if (spareBuffers[i].length >= size && (best === -1 || spareBuffers[i].length < spareBuffers[best].length)) best = i;
  }
  return best === -1 ? new Uint8Array(size) : spareBuffers.splice(best, 1)[0];
}

function giveBack(buffer: Uint8Array): void {
  if (buffer.length === 0 || buffer.length > MAX_SPARE_BYTES) return;
  spareBuffers.push(buffer);
  // Keep the largest few.
  if (spareBuffers.length > MAX_SPARE_BUFFERS) spareBuffers.sort((a, b) => b.length - a.length).pop();
}

/**
 * The line copies of one fold, in log order. Bytes of lines let go are counted as dead and
 * squeezed out (the live ones moved to the front) before the buffer would grow, or once they
 * are half of it, so the buffer stays within a small multiple of the live lines' bytes.
 */
export class LineArena {
  private buffer: Uint8Array = EMPTY;
  private used = 0;
  private dead = 0;

  /** The buffer the stored lines point into. */
  get bytes(): Uint8Array {
    return this.buffer;
  }

  /** Copies `line` (valid only during the call) in; `live` lists every line of this arena still kept, in log order. */
  store(seq: number, line: Uint8Array, live: readonly KeptEvent[]): StoredLine {
    if (this.used + line.length > this.buffer.length) {
      if (this.dead > 0) this.compact(live);
      if (this.used + line.length > this.buffer.length) this.grow(this.used + line.length);
    }
    this.buffer.set(line, this.used);
    const stored = new StoredLine(seq, this, this.used, line.length);
    this.used += line.length;
    return stored;
  }

  /** Counts the lines of this arena among `dropped` as dead; compacts once half the bytes are dead. */
  release(dropped: readonly KeptEvent[], live: readonly KeptEvent[]): void {
    for (const kept of dropped) {
      if (kept instanceof StoredLine && kept.arena === this) this.dead += kept.length;
    }
    if (this.dead * 2 > this.used) this.compact(live);
  }

  /** Moves the live lines of this arena to the front, in order (each only ever moves towards the start). */
  private compact(live: readonly KeptEvent[]): void {
    let end = 0;
    for (const kept of live) {
      if (!(kept instanceof StoredLine) || kept.arena !== this) continue;
      if (kept.offset !== end) this.buffer.copyWithin(end, kept.offset, kept.offset + kept.length);
      kept.offset = end;
      end += kept.length;
    }
    this.used = end;
    this.dead = 0;
  }

  /**
   * Hands the buffer on to later arenas. Only once every stored line of this arena has been read
   * for the last time: they point into it.
   */
  recycle(): void {
    giveBack(this.buffer);
    this.buffer = EMPTY;
    this.used = this.dead = 0;
  }

  private grow(needed: number): void {
    const next = takeBuffer(Math.max(needed, this.buffer.length * 2, MIN_CAPACITY));
    next.set(this.buffer.subarray(0, this.used));
    giveBack(this.buffer); // the lines read the arena's current buffer, never this one again
    this.buffer = next;
  }
}
