import { SessionReferenceError, stringifyTagSafeJson, type ProjectedMessage, type ReferencedSessionData } from '@dsh-session-ls/shared';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { omissionNotice, retainWithinBudget, smallestFittingBudget, tagSafeJsonByteLength, truncateWithOmissionNotice, utf8ByteLength } from './budget';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz'.repeat(4); // 104 ASCII bytes

function dataWith(conversation: ProjectedMessage[], label = 'label'): ReferencedSessionData {
  return { sessionId: 'src', label, cwd: '/w', capturedThroughSeq: 9, conversation };
}

/** The size §9 budgets: UTF-8 bytes of the tag-safe JSON of one data object. */
const sizeOf = (data: ReferencedSessionData): number => utf8ByteLength(stringifyTagSafeJson(data));

const user = (text: string): ProjectedMessage => ({ role: 'user', text });
const assistant = (text: string): ProjectedMessage => ({ role: 'assistant', text });

function budgetError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('utf8ByteLength', () => {
  it('counts UTF-8 bytes, a surrogate pair as 4 and a lone surrogate as 3 (its U+FFFD replacement)', () => {
    expect(utf8ByteLength('a')).toBe(1);
    expect(utf8ByteLength('é')).toBe(2);
    expect(utf8ByteLength('…')).toBe(3);
    expect(utf8ByteLength('😀')).toBe(4);
    expect(utf8ByteLength('\uD800')).toBe(3);
    expect(utf8ByteLength('\uDC00x')).toBe(4);
    expect(utf8ByteLength('\uD800')).toBe(new TextEncoder().encode('\uD800').length);
  });

  it("is Node's Buffer.byteLength for any string, lone surrogates and a byte order mark included", () => {
    const units = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfeff, 0x7f, 0x80, 0x7ff, 0x800));
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.array(units).map((codes) => String.fromCharCode(...codes)));
    fc.assert(fc.property(text, (value) => utf8ByteLength(value) === Buffer.byteLength(value, 'utf8')), { numRuns: 2000 });
  });
});

describe('truncateWithOmissionNotice against Buffer', () => {
  it("decodes any bytes as Node's Buffer does (a byte order mark kept, invalid sequences as U+FFFD)", () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.string({ unit: 'binary', maxLength: 40 }).map((text) => Buffer.from(`\ufeff${text}`, 'utf8')),
    );
    fc.assert(
      fc.property(bytes, (input) => truncateWithOmissionNotice(input, input.length).text === Buffer.from(input).toString('utf8')),
      { numRuns: 3000 },
    );
  });
});

describe('omissionNotice', () => {
  it('is exactly \\n[… omitted N UTF-8 bytes …] with U+2026 ellipses', () => {
    expect(omissionNotice(97)).toBe('\n[\u2026 omitted 97 UTF-8 bytes \u2026]');
    expect(utf8ByteLength(omissionNotice(97))).toBe(33);
  });
});

describe('truncateWithOmissionNotice', () => {
  it('keeps the largest head ⌈r/2⌉ + tail ⌊r/2⌋ that fits with the notice', () => {
    // r + 31 + digits(104 - r) <= 40 holds up to r = 7: head 4, tail 3, 97 omitted.
    expect(truncateWithOmissionNotice(ALPHABET, 40)).toEqual({ text: 'abcdxyz\n[… omitted 97 UTF-8 bytes …]', omittedBytes: 97 });
  });

  it('cuts each side back to whole UTF-8 characters', () => {
    // r = 7: head 4 bytes = "éé", tail 3 bytes cut back to 2 = "é"; 6 kept, 94 omitted, 39 bytes in all.
    expect(truncateWithOmissionNotice('é'.repeat(50), 40)).toEqual({ text: 'ééé\n[… omitted 94 UTF-8 bytes …]', omittedBytes: 94 });
    // Surrogate pairs are 4-byte characters and are never split: r = 7 keeps one head emoji and no tail.
    expect(truncateWithOmissionNotice('😀'.repeat(25), 40)).toEqual({ text: '😀\n[… omitted 96 UTF-8 bytes …]', omittedBytes: 96 });
  });

  it('measures a lone surrogate as 3 bytes and, as dsh cuts encoded bytes, returns it as U+FFFD', () => {
    // 40 lone surrogates = 120 bytes; r = 10 keeps one 3-byte character at each end.
    expect(truncateWithOmissionNotice('\uD800'.repeat(40), 40)).toEqual({
      text: '\uFFFD\uFFFD\n[… omitted 114 UTF-8 bytes …]',
      omittedBytes: 114,
    });
  });

  it('becomes "" with every byte omitted when even the notice does not fit', () => {
    expect(truncateWithOmissionNotice(ALPHABET, 32)).toEqual({ text: '', omittedBytes: 104 });
    expect(truncateWithOmissionNotice(ALPHABET, 0)).toEqual({ text: '', omittedBytes: 104 });
    // 34 bytes is the first target where the bare notice fits (r = 0, 104 omitted).
    expect(truncateWithOmissionNotice(ALPHABET, 34)).toEqual({ text: '\n[… omitted 104 UTF-8 bytes …]', omittedBytes: 104 });
  });

  it('returns a text that already fits unchanged', () => {
    expect(truncateWithOmissionNotice('short', 5)).toEqual({ text: 'short', omittedBytes: 0 });
  });
});

describe('retainWithinBudget', () => {
  it('changes nothing when the source fits', () => {
    const data = dataWith([user('hello'), assistant('hi')]);
    const result = retainWithinBudget({ data, checkpoints: [false, false] }, sizeOf(data));
    expect(result.data).toEqual(data);
    expect(result.stats).toEqual({
      compacted: false,
      originalMessages: 2,
      retainedMessages: 2,
      omittedMessages: 0,
      omittedBytes: 0,
      truncated: false,
    });
    expect(Object.keys(result.stats)).toEqual(['compacted', 'originalMessages', 'retainedMessages', 'omittedMessages', 'omittedBytes', 'truncated']);
  });

  it('drops the oldest non-checkpoint messages first, keeps checkpoints and the last message, counts raw text bytes', () => {
    const checkpoint = user('<compacted-summary>old</compacted-summary>');
    const first = user('première <question>'); // 20 raw bytes (é is 2), more once JSON-escaped
    const second = assistant('réponse'); // 8 raw bytes
    const third = user('next');
    const last = assistant('final');
    const data = dataWith([checkpoint, first, second, third, last]);
    const budget = sizeOf(dataWith([checkpoint, third, last]));
    const result = retainWithinBudget({ data, checkpoints: [true, false, false, false, false] }, budget);
    expect(result.data.conversation).toEqual([checkpoint, third, last]);
    expect(result.stats).toEqual({
      compacted: true,
      originalMessages: 5,
      retainedMessages: 3,
      omittedMessages: 2,
      omittedBytes: 20 + 8,
      truncated: true,
    });
    // One byte more room and the second message survives: dropping stops as soon as it fits.
    const roomier = retainWithinBudget({ data, checkpoints: [true, false, false, false, false] }, sizeOf(dataWith([checkpoint, second, third, last])));
    expect(roomier.data.conversation).toEqual([checkpoint, second, third, last]);
    expect(roomier.stats.omittedMessages).toBe(1);
  });

  it('never drops the last message, even when it is not a checkpoint: it is cut instead', () => {
    const data = dataWith([user('question'), assistant(ALPHABET)]);
    const budget = sizeOf(dataWith([assistant('abcdxyz\n[… omitted 97 UTF-8 bytes …]')])) - 1;
    const result = retainWithinBudget({ data, checkpoints: [false, false] }, budget);
    expect(result.data.conversation).toHaveLength(1);
    expect(result.data.conversation[0]!.role).toBe('assistant');
    expect(result.data.conversation[0]!.text).toMatch(/\n\[… omitted \d+ UTF-8 bytes …\]$/);
    expect(sizeOf(result.data)).toBeLessThanOrEqual(budget);
  });

  it('cuts the longest current text with head, tail and the exact notice', () => {
    const data = dataWith([user(ALPHABET)]);
    // The cut text is 39 raw bytes and 40 JSON bytes (the notice's \n is escaped): budget leaves exactly that room.
    const budget = sizeOf(data) - 104 + 40;
    const result = retainWithinBudget({ data, checkpoints: [false] }, budget);
    expect(result.data.conversation).toEqual([user('abcxyz\n[… omitted 98 UTF-8 bytes …]')]);
    expect(sizeOf(result.data)).toBe(budget);
  });

  it('re-cuts a message from its ORIGINAL text, its new N replacing the earlier one', () => {
    const data = dataWith([user(ALPHABET)]);
    // First cut: target 104 - 64 = 40 gives "abcdxyz…97…" (40 raw bytes), whose escaped \n overflows by one byte;
    // the second cut, from the original, targets 39: "abcxyz…98…". omittedBytes is 98, not 97 + 98.
    const budget = sizeOf(data) - 64;
    const result = retainWithinBudget({ data, checkpoints: [false] }, budget);
    expect(result.data.conversation).toEqual([user('abcxyz\n[… omitted 98 UTF-8 bytes …]')]);
    expect(result.stats).toMatchObject({ omittedMessages: 0, omittedBytes: 98, truncated: true, retainedMessages: 1 });
  });

  it('picks the first message on a tie of current text bytes, checkpoints included', () => {
    // Two 100-byte texts of 2-byte characters; overflow 20 gives target 80, and an even number of kept bytes
    // (79 raw, 80 JSON bytes) fits with one cut, so only the first message is cut.
    const data = dataWith([user('é'.repeat(50)), assistant('ê'.repeat(50))]);
    const result = retainWithinBudget({ data, checkpoints: [true, false] }, sizeOf(data) - 20);
    expect(result.data.conversation).toEqual([user('é'.repeat(23) + '\n[… omitted 54 UTF-8 bytes …]'), assistant('ê'.repeat(50))]);
    expect(result.stats.omittedBytes).toBe(54);
  });

  it('empties texts whose notice cannot fit, counting all their bytes, down to the fixed fields', () => {
    const data = dataWith([user('<'.repeat(10)), assistant('done')]);
    const minimal = sizeOf(dataWith([user(''), assistant('')]));
    const result = retainWithinBudget({ data, checkpoints: [true, false] }, minimal);
    expect(result.data.conversation).toEqual([user(''), assistant('')]);
    expect(result.stats).toEqual({
      compacted: true,
      originalMessages: 2,
      retainedMessages: 2,
      omittedMessages: 0,
      omittedBytes: 10 + 4,
      truncated: true,
    });
  });

  it('throws BUDGET_EXCEEDED when nothing is left to shorten', () => {
    const data = dataWith([user('<'.repeat(10)), assistant('done')]);
    const minimal = sizeOf(dataWith([user(''), assistant('')]));
    const error = budgetError(() => retainWithinBudget({ data, checkpoints: [true, false] }, minimal - 1));
    expect(error).toBeInstanceOf(SessionReferenceError);
    expect(error).toMatchObject({
      code: 'SESSION_REFERENCE_BUDGET_EXCEEDED',
      message: 'referenced session snapshot cannot fit the configured byte budget',
    });
  });

  it('throws BUDGET_EXCEEDED when the fixed fields alone do not fit, even with no conversation', () => {
    const empty = dataWith([], 'a long label that alone is over budget');
    expect(budgetError(() => retainWithinBudget({ data: empty, checkpoints: [] }, sizeOf(empty) - 1))).toMatchObject({
      code: 'SESSION_REFERENCE_BUDGET_EXCEEDED',
    });
    expect(retainWithinBudget({ data: empty, checkpoints: [] }, sizeOf(empty)).data).toEqual(empty);
  });

  it('keeps the data object keys in dsh order', () => {
    const data = dataWith([user(ALPHABET)]);
    const result = retainWithinBudget({ data, checkpoints: [false] }, sizeOf(data) - 50);
    expect(Object.keys(result.data)).toEqual(['sessionId', 'label', 'cwd', 'capturedThroughSeq', 'conversation']);
    expect(Object.keys(result.data.conversation[0]!)).toEqual(['role', 'text']);
  });
});

describe('tagSafeJsonByteLength', () => {
  it('equals the UTF-8 length of the tag-safe JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
        expect(tagSafeJsonByteLength(value)).toBe(utf8ByteLength(stringifyTagSafeJson(value)));
        const entry = { role: 'user', text: `<${text}<` };
        expect(tagSafeJsonByteLength(entry)).toBe(utf8ByteLength(stringifyTagSafeJson(entry)));
      }),
    );
  });

  it('raises the shared TypeError for a value JSON cannot serialise', () => {
    expect(() => tagSafeJsonByteLength(10n)).toThrow('session-reference data is not JSON-serializable');
    expect(() => tagSafeJsonByteLength(undefined)).toThrow('session-reference data is not JSON-serializable');
  });
});

describe('retainWithinBudget, property', () => {
  const NOTICE = /\n\[… omitted (\d+) UTF-8 bytes …\]$/;
  const tricky = fc.constantFrom('a', 'Z', ' ', '<', '>', '"', '\\', '\n', 'é', '…', '日', '😀', '\uD800', '\uDC00', '\u2028', '\u0000');
  const text = fc.oneof(fc.string({ unit: tricky, minLength: 1, maxLength: 60 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }));
  const budgetPermille = fc.integer({ min: 0, max: 1200 });
  const message = fc.record({ role: fc.constantFrom<'user' | 'assistant'>('user', 'assistant'), text, checkpoint: fc.boolean() });

  /** Check that `kept` is `original` with its middle cut out: a byte prefix plus a byte suffix of its UTF-8. */
  function isHeadPlusTail(original: string, kept: string): boolean {
    const whole = Buffer.from(original, 'utf8');
    const part = Buffer.from(kept, 'utf8');
    for (let head = 0; head <= part.length; head++) {
      const tail = part.length - head;
      if (part.subarray(0, head).equals(whole.subarray(0, head)) && part.subarray(head).equals(whole.subarray(whole.length - tail))) return true;
    }
    return false;
  }

  it('fits the budget or throws BUDGET_EXCEEDED exactly when even the bare minimum is over; results are well formed', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.string({ unit: tricky, maxLength: 12 }), budgetPermille, (messages, label, permille) => {
        const data = dataWith(messages.map(({ role, text }) => ({ role, text })), label);
        const checkpoints = messages.map((entry) => entry.checkpoint);
        const budget = Math.max(1, Math.floor((sizeOf(data) * permille) / 1000));
        const mandatory = messages.filter((entry, index) => entry.checkpoint || index === messages.length - 1);
        const minimal = sizeOf(dataWith(mandatory.map(({ role }) => ({ role, text: '' })), label));

        let result;
        try {
          result = retainWithinBudget({ data, checkpoints }, budget);
        } catch (error) {
          expect(error).toMatchObject({ code: 'SESSION_REFERENCE_BUDGET_EXCEEDED' });
          expect(minimal).toBeGreaterThan(budget);
          return;
        }
        expect(sizeOf(result.data)).toBeLessThanOrEqual(budget);
        expect(JSON.parse(stringifyTagSafeJson(result.data))).toEqual(result.data);

        // Dropping removes the oldest droppable messages (neither a checkpoint nor the last), so the number
        // dropped determines exactly which originals the retained entries are.
        const droppable = messages.map((_, index) => index).filter((index) => !messages[index]!.checkpoint && index !== messages.length - 1);
        const dropped = new Set(droppable.slice(0, messages.length - result.data.conversation.length));
        const keptIndices = messages.map((_, index) => index).filter((index) => !dropped.has(index));
        expect(keptIndices).toHaveLength(result.data.conversation.length);
        let omittedBytes = 0;
        for (const index of dropped) omittedBytes += utf8ByteLength(messages[index]!.text);
        for (const [position, index] of keptIndices.entries()) {
          const original = messages[index]!;
          const kept = result.data.conversation[position]!;
          expect(kept.role).toBe(original.role);
          if (kept.text === original.text) continue;
          if (kept.text === '') {
            omittedBytes += utf8ByteLength(original.text);
            continue;
          }
          const notice = NOTICE.exec(kept.text);
          expect(notice).not.toBeNull();
          const omitted = Number(notice![1]);
          const body = kept.text.slice(0, kept.text.length - omissionNotice(omitted).length);
          expect(omitted).toBe(utf8ByteLength(original.text) - utf8ByteLength(body));
          expect(isHeadPlusTail(original.text, body)).toBe(true);
          omittedBytes += omitted;
        }
        const omittedMessages = messages.length - result.data.conversation.length;
        expect(result.stats).toEqual({
          compacted: checkpoints.some(Boolean),
          originalMessages: messages.length,
          retainedMessages: result.data.conversation.length,
          omittedMessages,
          omittedBytes,
          truncated: omittedMessages > 0 || omittedBytes > 0,
        });
      }),
      { numRuns: 500 },
    );
  });
});

describe('smallestFittingBudget', () => {
  const text = fc.string({ unit: fc.constantFrom('a', '<', '"', 'é', '😀', '\n'), minLength: 1, maxLength: 30 });
  const message = fc.record({ role: fc.constantFrom<'user' | 'assistant'>('user', 'assistant'), text, checkpoint: fc.boolean() });

  it('is the least budget retainWithinBudget fits the source into: one byte less throws BUDGET_EXCEEDED', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.string({ maxLength: 12 }), (messages, label) => {
        const projection = { data: dataWith(messages.map(({ role, text: value }) => ({ role, text: value })), label), checkpoints: messages.map((entry) => entry.checkpoint) };
        const least = smallestFittingBudget(projection);
        expect(sizeOf(retainWithinBudget(projection, least).data)).toBeLessThanOrEqual(least);
        expect(budgetError(() => retainWithinBudget(projection, least - 1))).toMatchObject({ code: 'SESSION_REFERENCE_BUDGET_EXCEEDED' });
      }),
      { numRuns: 500 },
    );
  });

  it('counts the fixed fields and an emptied entry for each checkpoint and the last message', () => {
    const projection = { data: dataWith([user('a'.repeat(50)), assistant('checkpoint text'), user('b'.repeat(40)), assistant('last')]), checkpoints: [false, true, false, false] };
    const expected = sizeOf(dataWith([assistant(''), assistant('')]));
    expect(smallestFittingBudget(projection)).toBe(expected);
  });
});
