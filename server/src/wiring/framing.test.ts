import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckedFraming, MAX_HEADER_BYTES, TOO_LARGE_HEAD_BYTES, contentLengthOf, messageHead } from './framing';
import { MAX_MESSAGE_BYTES, MESSAGE_TOO_LARGE } from './sizeLimits';

const frame = (body: string, headers = ''): Buffer => {
  const bytes = Buffer.from(body, 'utf8');
  return Buffer.concat([Buffer.from(`${headers}Content-Length: ${bytes.length}\r\n\r\n`), bytes]);
};

/** What comes out of the check for `input` written in `pieces` (cut points), and the reason it broke, if it did. */
async function through(input: Buffer, cuts: number[] = [], maxBodyBytes?: number): Promise<{ out: Buffer; broken: string[]; logged: string[] }> {
  const broken: string[] = [];
  const logged: string[] = [];
  const check = new CheckedFraming((reason) => broken.push(reason), { log: (line) => logged.push(line), ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }) });
  const chunks: Buffer[] = [];
  check.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve) => check.once('end', resolve));
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < input.length)].sort((a, b) => a - b)) {
    check.write(input.subarray(at, cut));
    at = cut;
  }
  check.end(input.subarray(at));
  await ended;
  return { out: Buffer.concat(chunks), broken, logged };
}

describe('contentLengthOf', () => {
  it('reads the byte count of a header block, any case, among other headers', () => {
    expect(contentLengthOf('Content-Length: 12')).toBe(12);
    expect(contentLengthOf('content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH:7')).toBe(7);
    expect(contentLengthOf('Content-Length: 0')).toBe(0);
  });

  it('says why a header block gives no byte count', () => {
    expect(contentLengthOf('X-Foo: bar')).toMatch(/without Content-Length/);
    for (const value of ['abc', '-5', '1.5', '', '1e3', '9999999999999999']) expect(contentLengthOf(`Content-Length: ${value}`)).toMatch(/not a byte count/);
    expect(contentLengthOf('{}Content-Length 3')).toMatch(/without ":"/);
  });
});

describe('CheckedFraming', () => {
  it('passes well-framed messages through byte for byte, however the input is cut', async () => {
    const bodyArbitrary = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('', '\r\n\r\n', 'Content-Length: 3\r\n\r\n'));
    await fc.assert(
      fc.asyncProperty(fc.array(bodyArbitrary, { maxLength: 6 }), fc.array(fc.nat(2000), { maxLength: 12 }), async (bodies, cuts) => {
        const input = Buffer.concat(bodies.map((body, i) => frame(body, i % 2 === 0 ? '' : 'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n')));
        const { out, broken } = await through(input, cuts);
        expect(broken).toEqual([]);
        expect(out.equals(input)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('passes a body that is not JSON (the reader answers it, and goes on)', async () => {
    const input = Buffer.concat([frame('{not json}'), frame('{"jsonrpc":"2.0","method":"x"}')]);
    expect(await through(input, [3, 20])).toEqual({ out: input, broken: [], logged: [] });
  });

  it('ends the input at the first broken header, after passing what came before it, and says why once', async () => {
    const good = frame('{"jsonrpc":"2.0","method":"x"}');
    for (const [bad, why] of [
      ['X-Foo: bar\r\n\r\n{}', /without Content-Length/],
      ['Content-Length: abc\r\n\r\n{}', /not a byte count/],
      ['Content-Length: -5\r\n\r\n{}', /not a byte count/],
      ['{"jsonrpc":"2.0"}\r\n\r\n', /without Content-Length/],
      ['garbage\r\n\r\n', /without ":"/],
    ] as const) {
      const input = Buffer.concat([good, Buffer.from(bad), good]);
      const { out, broken } = await through(input, [good.length + 2]);
      expect(out.equals(good)).toBe(true);
      expect(broken).toHaveLength(1);
      expect(broken[0]).toMatch(why);
      expect(broken[0]).toMatch(/framing is broken/);
    }
  });

  it('ends the input when no header ends within its limit (a body sent without one, say)', async () => {
    const { out, broken } = await through(Buffer.alloc(MAX_HEADER_BYTES + 10, 0x61), [100, 70_000]);
    expect(out.length).toBe(0);
    expect(broken).toEqual([expect.stringMatching(/header block of more than/)]);
  });
});

describe('messageHead', () => {
  it('finds the id, method and document URI at the start of a message cut anywhere', () => {
    const whole = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'textDocument/didOpen', params: { textDocument: { uri: 'file:///a%20b.md', languageId: 'markdown', version: 1, text: 'x"\\'.repeat(50) } } });
    expect(messageHead(whole.slice(0, whole.indexOf('"text"') + 20))).toEqual({ id: 7, method: 'textDocument/didOpen', uri: 'file:///a%20b.md' });
    expect(messageHead(whole.slice(0, whole.indexOf('file:')))).toEqual({ id: 7, method: 'textDocument/didOpen' });
    expect(messageHead('{"params":{"text":"' + '{"id":1,'.repeat(10))).toEqual({});
    expect(messageHead('{"method":"x","id":"abc","params":[1,{"uri":"no"}],')).toEqual({ id: 'abc', method: 'x' });
    expect(messageHead('{"id":12')).toEqual({});
    expect(messageHead('['.repeat(100_000))).toEqual({});
    expect(messageHead('not json')).toEqual({});
  });
});

describe('CheckedFraming: a body over the limit', () => {
  it('is dropped as it arrives, a short message stands in its place, and later messages pass unchanged', async () => {
    const head = '{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///big.md","languageId":"markdown","version":1,"text":"';
    const big = frame(head + 'a'.repeat(5000) + '"}}}');
    const request = frame('{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"x","arguments":["' + 'b'.repeat(5000) + '"]}}');
    const after = frame('{"jsonrpc":"2.0","method":"x"}');
    const { out, broken, logged } = await through(Buffer.concat([big, request, after]), [10, 200, 4000, 6000, 9000], 1000);
    expect(broken).toEqual([]);
    const expected = Buffer.concat([
      frame(JSON.stringify({ jsonrpc: '2.0', method: MESSAGE_TOO_LARGE, params: { length: big.length - big.indexOf('{'), limit: 1000, method: 'textDocument/didOpen', uri: 'file:///big.md' } })),
      frame(JSON.stringify({ jsonrpc: '2.0', id: 3, method: MESSAGE_TOO_LARGE, params: { length: request.length - request.indexOf('{'), limit: 1000, method: 'workspace/executeCommand' } })),
      after,
    ]);
    expect(out.toString()).toBe(expected.toString());
    expect(logged).toEqual([
      expect.stringMatching(/over the limit of 1000 .*textDocument\/didOpen of file:\/\/\/big\.md/),
      expect.stringMatching(/workspace\/executeCommand.*request 3 is answered with an error/),
    ]);
  });

  it('keeps no more than its first bytes, however long it says it is (the default limit: twice a document)', async () => {
    const check = new CheckedFraming(() => undefined);
    const chunks: Buffer[] = [];
    check.on('data', (chunk: Buffer) => chunks.push(chunk));
    check.write(Buffer.from(`Content-Length: 2000000000\r\n\r\n{"jsonrpc":"2.0","method":"m",`));
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < 4; i++) check.write(piece);
    // The head is full: the stand-in is out, before the rest of the body.
    expect(Buffer.concat(chunks).toString()).toContain(`"method":"${MESSAGE_TOO_LARGE}","params":{"length":2000000000,"limit":${MAX_MESSAGE_BYTES},"method":"m"}`);
    expect(TOO_LARGE_HEAD_BYTES).toBeLessThan(piece.length);
    expect(check.readableLength).toBeLessThan(1024);
    check.destroy();
  });
});
