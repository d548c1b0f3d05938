import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeFormat } from '../formats/claudeCode';
import { parseJsonl } from '../formats/records';
import { FREE_HOLDING_BYTES } from '../log/heldMemory';
import { MAX_RECORD_BYTES } from '../log/lines';
import { SessionLogSummarizer } from '../log/summarizer';
import { readMemoryInUse } from '../../testing/readMemoryInUse';
import { headerLine } from '../../testing/testLogs';
import { fileIdentity } from '../transcriptFiles';
import { BigBufferGrant, BoundedLines, DENSE_CHECK_BYTES, LINE_PIECE_BYTES, MAX_FOREIGN_LINE_VALUES, holdsMoreValues } from './foreignLines';
import { readForeignFile } from './foreignRead';
import { PARSED_RECORD_BYTES, readForeignRecords } from './foreignRecords';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'foreign-lines-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What a splitter handed on: each line as text (`skipped:<length>` for a skipped one), and the committed count after each push. */
function split(pieces: readonly Buffer[], maxLineBytes?: number, maxLineValues?: number): { lines: string[]; committed: number[] } {
  const lines: string[] = [];
  const sink = {
    lines: (bytes: Buffer, start: number, end: number) => {
      for (const line of bytes.toString('utf8', start, end).split(/(?<=\n)/)) lines.push(line);
    },
    skipped: (length: number) => lines.push(`skipped:${length}`),
  };
  const splitter = new BoundedLines(sink, maxLineBytes, maxLineValues);
  const committed: number[] = [];
  for (const piece of pieces) {
    splitter.push(piece);
    committed.push(splitter.committed);
  }
  splitter.end();
  return { lines, committed };
}

/** `bytes` cut into pieces of `size`. */
function piecesOf(bytes: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(Buffer.from(bytes.subarray(at, at + size)));
  return pieces;
}

describe('bounded lines', () => {
  const text = '{"a":"é会😀"}\r\n{"b":2}\n\n  {"c":"x\\"y"}  \r\n{"torn":';
  const bytes = Buffer.from(text);

  it('hands on the same lines however the bytes are cut: CRLF and UTF-8 split across pieces, the torn last line at the end', () => {
    const whole = text.split(/(?<=\n)/);
    for (let size = 1; size <= bytes.length; size++) expect(split(piecesOf(bytes, size)).lines, `pieces of ${size}`).toEqual(whole);
  });

  it('commits up to the last complete line: the torn tail is pending until the end', () => {
    const { committed } = split([bytes]);
    expect(committed).toEqual([bytes.length - Buffer.byteLength('{"torn":')]);
  });

  it('skips a line over the limit (counted, never held) and keeps the lines after it, terminated or torn', () => {
    const long = 'x'.repeat(25);
    const input = Buffer.from(`{"a":1}\n${long}\n{"b":2}\n${long}`);
    for (const size of [1, 3, 7, 64]) {
      expect(split(piecesOf(input, size), 20).lines, `pieces of ${size}`).toEqual(['{"a":1}\n', 'skipped:25', '{"b":2}\n', 'skipped:25']);
    }
    // Exactly at the limit a line is kept.
    expect(split([Buffer.from(`${'y'.repeat(20)}\nz`)], 20).lines).toEqual([`${'y'.repeat(20)}\n`, 'z']);
  });

  it('skips a long line dense in JSON values, keeps a long line of text and the lines after both', () => {
    const dense = `{"type":"user","message":{"content":[${'{},'.repeat(MAX_FOREIGN_LINE_VALUES)}{}]}}`;
    const textLine = JSON.stringify({ type: 'user', message: { content: 'a, b, [c], {d}; '.repeat(LINE_PIECE_BYTES / 4) } });
    const input = Buffer.from(`${dense}\n${textLine}\n{"after":1}\n`);
    const { lines } = split(piecesOf(input, LINE_PIECE_BYTES));
    expect(lines).toEqual([`skipped:${Buffer.byteLength(dense)}`, `${textLine}\n`, '{"after":1}\n']);
  });

  it('skips a line of 64 KiB or more inside one piece when it holds more than a value per 8 bytes, however the run of lines around it is cut', () => {
    const numbers = `{"type":"user","content":[${'1,'.repeat(40_000)}1]}`;
    const words = JSON.stringify({ type: 'user', content: Array.from({ length: 5000 }, (_, i) => `word number ${i}`) });
    const short = '{"n":[1,2,3,4,5,6,7,8,9]}';
    const input = Buffer.from([short, numbers, short, words, numbers, short].join('\n') + '\n');
    expect(Buffer.byteLength(numbers)).toBeGreaterThan(DENSE_CHECK_BYTES);
    expect(Buffer.byteLength(words)).toBeGreaterThan(DENSE_CHECK_BYTES);
    const expected = [`${short}\n`, `skipped:${Buffer.byteLength(numbers)}`, `${short}\n`, `${words}\n`, `skipped:${Buffer.byteLength(numbers)}`, `${short}\n`];
    for (const size of [LINE_PIECE_BYTES, 50_000, 70_001]) expect(split(piecesOf(input, size)).lines, `pieces of ${size}`).toEqual(expected);
  });

  it('counts commas, objects and arrays outside strings only, escaped quotes included', () => {
    const count = (json: string, max: number) => holdsMoreValues(Buffer.from(json), 0, Buffer.byteLength(json), max);
    // An array and two commas.
    expect(count('[1,2,3]', 2)).toBe(true);
    expect(count('[1,2,3]', 3)).toBe(false);
    expect(count('["a,b,c,d,e,f"]', 2)).toBe(false);
    expect(count('["a\\",b,c,d", 1]', 2)).toBe(false);
    expect(count('["a\\\\",1,2,3]', 3)).toBe(true);
  });
});

describe('reads through bounded lines', () => {
  /** A Claude Code transcript of several pieces: lines across piece boundaries, one line longer than a piece, a torn tail. */
  function bigTranscript(): string {
    const lines = [JSON.stringify({ type: 'summary', summary: 'early' })];
    for (let i = 0; i < 2000; i++) {
      lines.push(JSON.stringify({ type: i % 2 === 0 ? 'user' : 'assistant', cwd: '/w', timestamp: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`, message: { role: 'x', content: `turn ${i} ${'·'.repeat(3000)}` } }));
      if (i === 700) lines.push(JSON.stringify({ type: 'user', cwd: '/w', message: { content: [{ type: 'tool_result', content: 'r'.repeat(LINE_PIECE_BYTES + 5) }] }, toolUseResult: {} }));
      if (i === 1500) lines.push(JSON.stringify({ type: 'custom-title', customTitle: 'Named late' }), 'garbage', '\r');
    }
    return lines.join('\r\n') + '\r\n{"type":"custom-title","customTitle":"torn';
  }

  it('a listing read of a file of many pieces equals the fold of the whole text', async () => {
    const file = path.join(scratch, 'big.jsonl');
    const text = bigTranscript();
    writeFileSync(file, text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * LINE_PIECE_BYTES);
    const identity = fileIdentity(statSync(file));
    const read = await readForeignFile(claudeFormat, file, identity, undefined, { keepState: true });
    expect(read.summary).toEqual(claudeFormat.summarize(file, text, identity.mtimeMs));
    expect(read.summary?.title).toBe('Named late');
    expect(read.resume!.offset).toBe(Buffer.byteLength(text) - Buffer.byteLength('{"type":"custom-title","customTitle":"torn'));
  });

  it('the records of a surface read equal a parse of the whole text, past the bytes kept parsed too', async () => {
    const file = path.join(scratch, 'records.jsonl');
    const text = bigTranscript();
    expect(Buffer.byteLength(text)).toBeGreaterThan(PARSED_RECORD_BYTES);
    writeFileSync(file, text);
    const records = await readForeignRecords(file);
    const expected = parseJsonl(text);
    expect(records.length).toBe(expected.length);
    for (let i = 0; i < expected.length; i++) expect({ line: records[i]!.line, value: records[i]!.value }).toEqual(expected[i]);
  });
});

/** Whether `promise` settles within `ms` (looked at between event-loop turns; a negative check only). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  const until = Date.now() + ms;
  while (!done && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  return done;
}

describe('big buffers and the read budget', () => {
  it('a foreign long line waits while a dsh reader holds the budget, and goes on once it is given back', async () => {
    const dsh = new SessionLogSummarizer('raw');
    const dshLine = Buffer.from(`${headerLine('dsh')}\n{"type":"user/message","text":"${'x'.repeat(FREE_HOLDING_BYTES + 1024)}`);
    expect(await dsh.pushAsync(dshLine)).toBe(true);
    expect(await readMemoryInUse()).toBe(MAX_RECORD_BYTES);
    const file = path.join(scratch, 'long-line.jsonl');
    const long = JSON.stringify({ type: 'user', text: 'y'.repeat(3 * LINE_PIECE_BYTES) });
    writeFileSync(file, `{"type":"first"}\n${long}\n{"type":"last"}\n`);
    const reading = readForeignRecords(file);
    expect(await settlesWithin(reading, 500)).toBe(false);
    dsh.releaseMemory();
    const records = await reading;
    expect(records.map((record) => record.value.type)).toEqual(['first', 'user', 'last']);
    expect((records[1]!.value.text as string).length).toBe(3 * LINE_PIECE_BYTES);
    // The foreign read gave its grant back when it was done.
    expect(await readMemoryInUse()).toBe(0);
  });

  it('a dsh long line waits while a foreign read holds its grant; a release gives it back once', async () => {
    const foreign = new BigBufferGrant();
    await foreign.hold(true);
    expect(await readMemoryInUse()).toBe(MAX_RECORD_BYTES);
    const dsh = new SessionLogSummarizer('raw');
    const pushing = dsh.pushAsync(Buffer.from(`${headerLine('dsh')}\n{"type":"user/message","text":"${'x'.repeat(FREE_HOLDING_BYTES + 1024)}`));
    expect(await settlesWithin(pushing, 200)).toBe(false);
    await foreign.hold(false);
    expect(await pushing).toBe(true);
    foreign.release();
    dsh.releaseMemory();
    expect(await readMemoryInUse()).toBe(0);
  });
});
