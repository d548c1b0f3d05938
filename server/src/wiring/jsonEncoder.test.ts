import { describe, expect, it, vi } from 'vitest';
import { PassThrough } from 'node:stream';
import { foregroundRequests } from '../store/concurrency';
import { encodedMessage, SLICED_ARRAY_LENGTH, SlicedStreamMessageWriter } from './jsonEncoder';
import type { JsonSink } from '../resolver/jsonSink';
import { JsonByteCount, JsonBytes } from './jsonBytes';

const whole = (msg: unknown): Buffer => Buffer.from(JSON.stringify(msg), 'utf-8');

/** The message as one Buffer: every chunk the writer would send after the header. */
const encodeMessage = (msg: Parameters<typeof encodedMessage>[0], keptSliceBytes?: number): Buffer =>
  Buffer.concat([...encodedMessage(msg, keptSliceBytes).chunks()]);

function rows(count: number): unknown[] {
  const titles = ['plain', 'é accent', '日本語のタイトル', 'emoji 🎉 "quoted" \\ back', 'line\nbreak\u2028', '\ud800 lone surrogate'];
  return Array.from({ length: count }, (_, i) =>
    i % 7 === 3
      ? { sessionId: `s-${i}`, label: titles[i % titles.length], createdAt: i * 1000 }
      : { sessionId: `s-${i}`, label: titles[i % titles.length], cwd: `/home/u/p${i % 13}`, createdAt: i * 1000, mention: `@[${titles[i % titles.length]}](s-${i})` },
  );
}

describe('encodeMessage', () => {
  it('writes exactly the bytes of JSON.stringify for long and short arrays', () => {
    for (const count of [0, 1, SLICED_ARRAY_LENGTH - 1, SLICED_ARRAY_LENGTH, SLICED_ARRAY_LENGTH + 1, 5 * 1024 + 17]) {
      const response = { jsonrpc: '2.0', id: 7, result: rows(count) };
      expect(encodeMessage(response as never).equals(whole(response))).toBe(true);
      const notification = { jsonrpc: '2.0', method: 'x/y', params: rows(count) };
      expect(encodeMessage(notification as never).equals(whole(notification))).toBe(true);
    }
  });

  it('writes the same bytes whether the sizing pass keeps the slices or the array is stringified again', () => {
    const response = { jsonrpc: '2.0', id: 7, result: rows(5 * 1024 + 17) };
    // 0: nothing kept; 50,000: dropped after a few slices; default: every slice kept.
    for (const kept of [0, 50_000, undefined]) {
      expect(encodeMessage(response as never, kept).equals(whole(response))).toBe(true);
      // The header's length is the bytes written.
      expect(encodedMessage(response as never, kept).byteLength).toBe(whole(response).length);
    }
  });

  it('keeps the key order, odd ids and odd elements of the whole message', () => {
    const items: unknown[] = rows(SLICED_ARRAY_LENGTH + 5);
    items[3] = undefined;
    items[4] = null;
    items[5] = 'a string "result":[]';
    items[6] = [1, [2, { a: undefined }]];
    items[7] = () => 1;
    const msg = { id: '"result":[]', result: items, jsonrpc: '2.0' };
    expect(encodeMessage(msg as never).equals(whole(msg))).toBe(true);
  });

  it('falls back to one string when an element has its own toJSON', () => {
    const items: unknown[] = rows(SLICED_ARRAY_LENGTH + 1);
    items[SLICED_ARRAY_LENGTH] = { toJSON: (key: string) => `at ${key}` };
    const msg = { jsonrpc: '2.0', id: 1, result: items };
    const encoded = encodeMessage(msg as never).toString('utf-8');
    expect(encoded).toBe(JSON.stringify(msg));
    expect(encoded).toContain(`"at ${SLICED_ARRAY_LENGTH}"`);
  });

  it('slices rows whose toJSON takes no key, making each row as its slice is written', () => {
    const plain = rows(5 * 1024 + 17);
    let made = 0;
    const onWrite = plain.map((row) => ({
      toJSON() {
        made++;
        return row;
      },
    }));
    const msg = { jsonrpc: '2.0', id: 3, result: onWrite };
    const expected = whole({ jsonrpc: '2.0', id: 3, result: plain });
    // Nothing kept from the sizing pass: every row is made once to size the message, once to write it.
    const encoded = encodedMessage(msg as never, 0);
    expect(made).toBe(plain.length);
    const chunks = [...encoded.chunks()];
    expect(made).toBe(2 * plain.length);
    expect(chunks.length).toBeGreaterThan(3);
    expect(Buffer.concat(chunks).equals(expected)).toBe(true);
    expect(encoded.byteLength).toBe(expected.length);
  });
});

describe('encodeMessage of rows that write their own JSON bytes', () => {
  /** A row that writes its JSON straight into the encoder's buffer (as `MentionCandidateOnWrite` does). */
  function byteRows(plain: readonly unknown[], counter: { made: number }): unknown[] {
    return plain.map((row) => ({
      toJSON: () => row,
      writeJson(out: JsonSink) {
        counter.made++;
        out.raw(JSON.stringify(row));
      },
    }));
  }

  it('writes exactly the bytes of JSON.stringify, whatever the sizing pass keeps', () => {
    for (const count of [SLICED_ARRAY_LENGTH, SLICED_ARRAY_LENGTH + 1, 1024 * 3, 5 * 1024 + 17]) {
      const plain = rows(count);
      const expected = whole({ jsonrpc: '2.0', id: 9, result: plain });
      for (const kept of [0, 50_000, undefined]) {
        const counter = { made: 0 };
        const msg = { jsonrpc: '2.0', id: 9, result: byteRows(plain, counter) };
        const encoded = encodedMessage(msg as never, kept);
        expect(encoded.byteLength).toBe(expected.length);
        expect(Buffer.concat([...encoded.chunks()]).equals(expected)).toBe(true);
        // Nothing kept: each row is written twice (sized, then sent); all kept: once.
        if (kept === 0) expect(counter.made).toBe(2 * count);
        if (kept === undefined) expect(counter.made).toBe(count);
      }
    }
  });

  it('writes each row into bytes once, sizing by counting the rows it does not keep', () => {
    const count = 5 * 1024 + 17;
    const plain = rows(count);
    const expected = whole({ jsonrpc: '2.0', id: 9, result: plain });
    for (const kept of [0, 50_000, undefined]) {
      const written = vi.spyOn(JsonBytes.prototype, 'raw');
      const counted = vi.spyOn(JsonByteCount.prototype, 'raw');
      try {
        const counter = { made: 0 };
        const encoded = encodedMessage({ jsonrpc: '2.0', id: 9, result: byteRows(plain, counter) } as never, kept);
        expect(Buffer.concat([...encoded.chunks()]).equals(expected)).toBe(true);
        expect(written).toHaveBeenCalledTimes(count);
        // Every row not kept is counted once: all of them when nothing is kept, none when all are.
        if (kept === 0) expect(counted).toHaveBeenCalledTimes(count);
        else if (kept === undefined) expect(counted).not.toHaveBeenCalled();
        else expect(counted.mock.calls.length).toBeGreaterThan(0);
        expect(written.mock.calls.length + counted.mock.calls.length).toBe(counter.made);
      } finally {
        written.mockRestore();
        counted.mockRestore();
      }
    }
  });

  it('uses the rows\' own bytes only when every element writes them', () => {
    const counter = { made: 0 };
    const items = byteRows(rows(SLICED_ARRAY_LENGTH + 3), counter);
    items[SLICED_ARRAY_LENGTH + 1] = { plain: 'object' };
    const msg = { jsonrpc: '2.0', id: 2, result: items };
    expect(encodeMessage(msg as never).equals(whole(msg))).toBe(true);
    expect(counter.made).toBe(0);
  });
});

describe('SlicedStreamMessageWriter', () => {
  it('sends each message framed exactly as the library does, in order', async () => {
    const sink = new PassThrough();
    const received: Buffer[] = [];
    sink.on('data', (chunk: Buffer) => received.push(chunk));
    const writer = new SlicedStreamMessageWriter(sink);
    const messages = [
      { jsonrpc: '2.0', id: 1, result: rows(3 * 1024 + 5) },
      { jsonrpc: '2.0', method: 'window/logMessage', params: { type: 3, message: 'é' } },
      { jsonrpc: '2.0', id: 2, result: rows(SLICED_ARRAY_LENGTH) },
    ];
    await Promise.all(messages.map((msg) => writer.write(msg as never)));
    const expected = Buffer.concat(
      messages.flatMap((msg) => {
        const body = whole(msg);
        return [Buffer.from(`Content-Length: ${body.byteLength}\r\n\r\n`, 'ascii'), body];
      }),
    );
    expect(Buffer.concat(received).equals(expected)).toBe(true);
  });

  it('counts a message as work in progress until it is written (background store work waits for it)', async () => {
    const sink = new PassThrough({ highWaterMark: 16 });
    const writer = new SlicedStreamMessageWriter(sink);
    const written = writer.write({ jsonrpc: '2.0', id: 1, result: rows(3 * 1024) } as never);
    await new Promise((resolve) => setImmediate(resolve));
    // Nobody reads the sink yet: the answer is still being written.
    expect(foregroundRequests.quietForMs()).toBe(0);
    sink.resume();
    await written;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(foregroundRequests.quietForMs()).toBeGreaterThan(0);
  });

  it('reports a write failure to the caller', async () => {
    const sink = new PassThrough();
    sink.destroy();
    const writer = new SlicedStreamMessageWriter(sink);
    const errors: unknown[] = [];
    writer.onError((error) => errors.push(error));
    await expect(writer.write({ jsonrpc: '2.0', id: 1, result: null } as never)).rejects.toThrow();
    expect(errors.length).toBeGreaterThan(0);
  });
});
