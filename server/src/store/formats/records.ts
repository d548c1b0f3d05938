import type { SessionEventRecord } from '../../resolver/sessionStore';

/** One parsed JSONL line: its 0-based line number and the object it holds. */
export interface JsonlRecord {
  line: number;
  value: Record<string, unknown>;
}

/**
 * The objects of a JSONL text, defensively: a line that is not JSON, not an object, or torn (the
 * last line cut short by a writer still writing, or by a crash) is skipped, never fatal.
 */
export function parseJsonl(text: string): JsonlRecord[] {
  const records: JsonlRecord[] = [];
  let line = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const raw = text.slice(start, end).trim();
    if (raw !== '' && raw.charCodeAt(0) === 0x7b /* { */) {
      try {
        const value: unknown = JSON.parse(raw);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) records.push({ line, value: value as Record<string, unknown> });
      } catch {
        // A torn or foreign line: skipped.
      }
    }
    line++;
    start = end + 1;
  }
  return records;
}

/** `value` as a plain object, else undefined. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Epoch milliseconds of an ISO timestamp, else undefined. */
export function isoTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const time = Date.parse(value);
  return Number.isFinite(time) ? time : undefined;
}

/**
 * A label from a first prompt: whitespace runs collapsed, at most `max` characters (code points,
 * then `…`). Only as much of the text is read as the label needs (a prompt may be megabytes long).
 */
export function promptLabel(text: string, max = 100): string | undefined {
  const points: string[] = [];
  let space = false;
  for (const [token] of text.matchAll(/\s+|\S+/g)) {
    if (/^\s/.test(token)) {
      space = points.length > 0;
      continue;
    }
    if (space) points.push(' ');
    for (const point of token) {
      if (points.length > max) break;
      points.push(point);
    }
    if (points.length > max) return points.slice(0, max).join('') + '…';
  }
  return points.length === 0 ? undefined : points.join('');
}

/** A direct user prompt as a dsh-shaped surface event (so the shared projection takes it). */
export function userEvent(seq: number, text: string): SessionEventRecord {
  return { type: 'user/message', seq, data: { source: { kind: 'user' }, content: [{ type: 'text', text }] } };
}

/** A compaction checkpoint as a dsh-shaped surface event (never dropped by the byte budget). */
export function checkpointEvent(seq: number, text: string): SessionEventRecord {
  return { type: 'user/message', seq, data: { source: { kind: 'plugin', plugin: 'compact' }, content: [{ type: 'text', text }] } };
}

/** Assistant text blocks as a dsh-shaped surface event. */
export function assistantEvent(seq: number, texts: readonly string[]): SessionEventRecord {
  return { type: 'assistant/message', seq, data: { message: { role: 'assistant', content: texts.map((text) => ({ type: 'text', text })) } } };
}

/** The `text` of the content blocks of `content` whose type is in `types` (a string content counts as one block). */
export function blockTexts(content: unknown, types: readonly string[]): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const block of content) {
    const object = asObject(block);
    if (object !== undefined && typeof object.type === 'string' && types.includes(object.type) && typeof object.text === 'string') texts.push(object.text);
  }
  return texts;
}

/**
 * Builds a whole log (for a transcript "as the user saw it") in dsh's event shapes: each prompt and
 * answer appended to the surface, each compaction summary replacing everything on the surface before it.
 */
export class WholeLogBuilder {
  readonly events: SessionEventRecord[] = [];
  private surface: number[] = [];

  /** Append a prompt or answer (`seq` unique within the log). */
  append(event: SessionEventRecord, time: number | undefined): void {
    this.events.push({ ...event, ...(time === undefined ? {} : { time }), surfaceOp: 'append' });
    this.surface.push(event.seq);
  }

  /** A compaction summary: from here on the model sees it instead of everything before. */
  checkpoint(seq: number, text: string, time: number | undefined): void {
    const first = this.surface[0];
    const last = this.surface[this.surface.length - 1];
    const surfaceOp = first === undefined || last === undefined ? ('append' as const) : { op: 'replace' as const, start: first, end: last };
    this.events.push({ ...checkpointEvent(seq, text), ...(time === undefined ? {} : { time }), surfaceOp });
    this.surface = [seq];
  }
}
