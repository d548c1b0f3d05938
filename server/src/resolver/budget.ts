import {
  SessionReferenceError,
  stringifyTagSafeJson,
  type ProjectedMessage,
  type ReferencedSessionData,
} from '@dsh-session-ls/shared';
import type { ProjectedSession } from './projection';

/** What the budget did to one source; field order as in the `source.references` record. */
export interface ReferenceRetentionStats {
  /** Some projected message is a compaction checkpoint. */
  compacted: boolean;
  /** Projected messages (empty ones already dropped). */
  originalMessages: number;
  /** Messages left after dropping. */
  retainedMessages: number;
  /** Messages dropped whole. */
  omittedMessages: number;
  /** Bytes of dropped messages plus the final omission count of every cut message. */
  omittedBytes: number;
  truncated: boolean;
}

/** One source fitted into its byte budget. */
export interface RetainedSession {
  data: ReferencedSessionData;
  stats: ReferenceRetentionStats;
}

/** The message of the BUDGET_EXCEEDED error (dsh's wording). */
export const BUDGET_EXCEEDED_MESSAGE = 'referenced session snapshot cannot fit the configured byte budget';

/**
 * UTF-8 length of a JS string as dsh measures it (`Buffer.byteLength`, same as `TextEncoder`),
 * counted without Node's Buffer so the language service stays free of Node:
 * a lone surrogate counts 3 bytes, the size of the U+FFFD that encoding substitutes for it.
 */
export function utf8ByteLength(text: string): number {
  const firstNonAscii = text.search(NON_ASCII);
  if (firstNonAscii === -1) return text.length;
  let bytes = firstNonAscii;
  for (let i = firstNonAscii; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

const NON_ASCII = /[^\x00-\x7f]/;
const encoder = new TextEncoder();
/** Decodes as Node's Buffer does: a byte order mark is text, not a signature to drop. */
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** The notice that ends a cut message: `\n[… omitted N UTF-8 bytes …]` (U+2026 ellipses). */
export function omissionNotice(omittedBytes: number): string {
  return `\n[\u2026 omitted ${omittedBytes} UTF-8 bytes \u2026]`;
}

const isContinuationByte = (byte: number): boolean => (byte & 0xc0) === 0x80;

/** Bytes of the longest prefix of `bytes` that is at most `limit` bytes and ends on a character boundary. */
function headLength(bytes: Uint8Array, limit: number): number {
  if (limit >= bytes.length) return bytes.length;
  let end = limit;
  while (end > 0 && isContinuationByte(bytes[end]!)) end--;
  return end;
}

/** Start offset of the longest suffix of `bytes` that is at most `limit` bytes and starts on a character boundary. */
function tailStart(bytes: Uint8Array, limit: number): number {
  let start = Math.max(0, bytes.length - limit);
  while (start < bytes.length && isContinuationByte(bytes[start]!)) start++;
  return start;
}

/** A cut message: its new text and how many bytes of its original text it no longer holds. */
export interface TruncatedText {
  text: string;
  omittedBytes: number;
}

/**
 * Cut `original` to at most `maxBytes` UTF-8 bytes (§9 step 2): the largest r (binary search on
 * 0..maxBytes) such that its head ⌈r/2⌉ and tail ⌊r/2⌋ bytes, each cut back to whole characters,
 * plus the omission notice fit; `""` (all bytes omitted) when even the notice does not fit.
 * A text that already fits is returned unchanged. Lone surrogates in a cut text come back as U+FFFD,
 * because the cut works on the UTF-8 encoding as dsh's does.
 */
export function truncateWithOmissionNotice(original: string | Uint8Array, maxBytes: number): TruncatedText {
  const bytes = typeof original === 'string' ? encoder.encode(original) : original;
  const total = bytes.length;
  if (total <= maxBytes) return { text: decoder.decode(bytes), omittedBytes: 0 };
  let best: TruncatedText = { text: '', omittedBytes: total };
  let low = 0;
  let high = maxBytes;
  // Kept bytes grow with r and the notice shrinks by at most as much, so "fits" is monotone in r.
  while (low <= high) {
    const retained = Math.floor((low + high) / 2);
    const head = headLength(bytes, Math.ceil(retained / 2));
    const tail = tailStart(bytes, Math.floor(retained / 2));
    const kept = head + (total - tail);
    const notice = omissionNotice(total - kept);
    if (kept + utf8ByteLength(notice) <= maxBytes) {
      best = { text: decoder.decode(bytes.subarray(0, head)) + decoder.decode(bytes.subarray(tail)) + notice, omittedBytes: total - kept };
      low = retained + 1;
    } else {
      high = retained - 1;
    }
  }
  return best;
}

/**
 * UTF-8 bytes of `stringifyTagSafeJson(value)` without building it: each `<` (only ever inside a JSON
 * string) becomes the 6-byte `\u003c`, 5 bytes more than itself.
 */
export function tagSafeJsonByteLength(value: unknown): number {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  // Not serialisable: let the shared serialiser raise its TypeError.
  if (typeof json !== 'string') return utf8ByteLength(stringifyTagSafeJson(value));
  let angles = 0;
  for (let at = json.indexOf('<'); at !== -1; at = json.indexOf('<', at + 1)) angles++;
  return utf8ByteLength(json) + 5 * angles;
}

/** Serialised bytes of one conversation entry inside the data object's JSON. */
function entryBytes(role: ProjectedMessage['role'], text: string): number {
  return tagSafeJsonByteLength({ role, text });
}

function dataObject(data: ReferencedSessionData, conversation: ProjectedMessage[]): ReferencedSessionData {
  // Keys in dsh's order: they are bytes the model sees (another agent's source names it first; dsh's never does).
  return {
    ...(data.agent === undefined ? {} : { agent: data.agent }),
    sessionId: data.sessionId,
    label: data.label,
    cwd: data.cwd,
    capturedThroughSeq: data.capturedThroughSeq,
    conversation,
  };
}

interface Slot {
  role: ProjectedMessage['role'];
  original: string;
  originalBytes: Uint8Array | undefined;
  text: string;
  textBytes: number;
  jsonBytes: number;
  omittedBytes: number;
}

/**
 * The smallest `maxReferenceBytes` that {@link retainWithinBudget} fits this source into: its size once
 * every message it may drop is dropped and every text it keeps is cut to nothing (each larger budget
 * fits too). For telling a user how much budget a session needs when it does not fit.
 */
export function smallestFittingBudget(projection: ProjectedSession): number {
  const { data, checkpoints } = projection;
  const messages = data.conversation;
  // Kept whatever the budget: the checkpoints and the last message.
  const kept = messages.filter((_, index) => checkpoints[index] === true || index === messages.length - 1);
  const entries = kept.reduce((sum, { role }) => sum + entryBytes(role, ''), 0);
  return tagSafeJsonByteLength(dataObject(data, [])) + entries + Math.max(0, kept.length - 1);
}

/**
 * Fit one projected source into `maxReferenceBytes` UTF-8 bytes of tag-safe JSON (§9): drop the oldest
 * messages that are neither checkpoints nor the last one, then cut the longest texts with an omission
 * notice. Throws BUDGET_EXCEEDED when nothing is left to shorten and it still does not fit.
 */
export function retainWithinBudget(projection: ProjectedSession, maxReferenceBytes: number): RetainedSession {
  const { data, checkpoints } = projection;
  const messages = data.conversation;
  // The JSON of the data object is its fixed part plus each entry plus the commas between entries,
  // so the size is kept as a running sum instead of re-serialising after every step.
  const fixedBytes = tagSafeJsonByteLength(dataObject(data, []));
  const slots: Slot[] = messages.map(({ role, text }) => {
    const textBytes = utf8ByteLength(text);
    return { role, original: text, originalBytes: undefined, text, textBytes, jsonBytes: entryBytes(role, text), omittedBytes: 0 };
  });
  let entriesBytes = slots.reduce((sum, slot) => sum + slot.jsonBytes, 0);
  let count = slots.length;
  const size = (): number => fixedBytes + entriesBytes + Math.max(0, count - 1);

  // Step 1: the last message is never dropped, so the drop order is simply the non-checkpoints before it.
  const dropped = new Array<boolean>(slots.length).fill(false);
  let omittedMessages = 0;
  let droppedBytes = 0;
  for (let index = 0; index < slots.length - 1 && size() > maxReferenceBytes; index++) {
    if (checkpoints[index] === true) continue;
    const slot = slots[index]!;
    dropped[index] = true;
    entriesBytes -= slot.jsonBytes;
    count -= 1;
    omittedMessages += 1;
    droppedBytes += slot.textBytes;
  }
  const retained = slots.filter((_, index) => !dropped[index]);

  // Step 2: cut the message whose current text is longest (first on a tie), always from its original text.
  while (size() > maxReferenceBytes) {
    let longest: Slot | undefined;
    for (const slot of retained) {
      if (slot.textBytes > (longest?.textBytes ?? 0)) longest = slot;
    }
    if (longest === undefined) throw new SessionReferenceError('SESSION_REFERENCE_BUDGET_EXCEEDED', BUDGET_EXCEEDED_MESSAGE);
    const target = Math.max(0, longest.textBytes - (size() - maxReferenceBytes));
    longest.originalBytes ??= encoder.encode(longest.original);
    const cut = truncateWithOmissionNotice(longest.originalBytes, target);
    // A strictly smaller target always changes the text; this only guards termination.
    if (cut.text === longest.text) throw new SessionReferenceError('SESSION_REFERENCE_BUDGET_EXCEEDED', BUDGET_EXCEEDED_MESSAGE);
    const jsonBytes = entryBytes(longest.role, cut.text);
    entriesBytes += jsonBytes - longest.jsonBytes;
    longest.text = cut.text;
    longest.textBytes = utf8ByteLength(cut.text);
    longest.jsonBytes = jsonBytes;
    longest.omittedBytes = cut.omittedBytes;
  }

  const omittedBytes = retained.reduce((sum, slot) => sum + slot.omittedBytes, droppedBytes);
  return {
    data: dataObject(
      data,
      retained.map(({ role, text }) => ({ role, text })),
    ),
    stats: {
      compacted: checkpoints.some((checkpoint) => checkpoint),
      originalMessages: slots.length,
      retainedMessages: retained.length,
      omittedMessages,
      omittedBytes,
      truncated: omittedMessages > 0 || omittedBytes > 0,
    },
  };
}
