import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from './commandLine';
import { decodeInputText, describeReadError, firstInvalidUtf8Byte, readInputFile, readInputStdin } from './inputText';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'dsh-session-ls-input-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The message of the usage error `run` throws. */
async function usageMessage(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('no usage error');
}

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

describe('firstInvalidUtf8Byte', () => {
  it('finds the first byte that starts no well-formed UTF-8 sequence, as the WHATWG decoder replaces it', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 24 }),
      fc.string({ unit: 'binary', maxLength: 12 }).map((text) => new TextEncoder().encode(text)),
      // Valid text with one byte changed: the invalid byte sits after valid characters.
      fc.tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), fc.nat(), fc.integer({ min: 0, max: 255 })).map(([text, at, byte]) => {
        const encoded = new TextEncoder().encode(text);
        encoded[at % encoded.length] = byte;
        return encoded;
      }),
    );
    fc.assert(
      fc.property(bytes, (input) => {
        const at = firstInvalidUtf8Byte(input);
        let valid = true;
        try {
          fatal.decode(input);
        } catch {
          valid = false;
        }
        if (at === undefined) return valid;
        // Everything before it decodes; the decoder replaces what starts there.
        fatal.decode(input.subarray(0, at));
        return !valid && lenient.decode(input.subarray(at)).startsWith('\ufffd');
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses overlong forms, surrogates, code points past U+10FFFF and cut sequences', () => {
    expect(firstInvalidUtf8Byte(Uint8Array.of(0x61, 0xc0, 0x80))).toBe(1);
    expect(firstInvalidUtf8Byte(Uint8Array.of(0xe0, 0x80, 0x80))).toBe(0);
    expect(firstInvalidUtf8Byte(Uint8Array.of(0xed, 0xa0, 0x80))).toBe(0);
    expect(firstInvalidUtf8Byte(Uint8Array.of(0xf4, 0x90, 0x80, 0x80))).toBe(0);
    expect(firstInvalidUtf8Byte(Uint8Array.of(0x61, 0x62, 0xe2, 0x82))).toBe(2);
    expect(firstInvalidUtf8Byte(new TextEncoder().encode('café 😀 日本'))).toBeUndefined();
  });
});

describe('decodeInputText', () => {
  it('refuses a Latin-1 file with the offset and line of its first invalid byte, never turning it into U+FFFD', async () => {
    const latin1 = Buffer.from('first line\ncaf\xe9 au lait', 'latin1');
    expect(await usageMessage(() => decodeInputText(latin1, 'msg.md'))).toBe(
      'msg.md is not valid UTF-8: byte 0xE9 at offset 14 (line 2) is not part of a UTF-8 character; save it as UTF-8 (e.g. iconv -f latin1 -t utf-8 for a Latin-1 file)',
    );
  });

  it('decodes UTF-8, dropping a leading byte order mark (a signature) but keeping a later U+FEFF', () => {
    expect(decodeInputText(Buffer.from('café', 'utf8'), 'f')).toBe('café');
    expect(decodeInputText(Buffer.from('\ufeffcafé\ufeff', 'utf8'), 'f')).toBe('café\ufeff');
    expect(decodeInputText(new Uint8Array(), 'f')).toBe('');
  });

  it('decodes UTF-16 after its byte order mark, in either byte order', () => {
    const text = 'café 😀 @[x](dsh-session:Im5vcGUi)';
    expect(decodeInputText(Buffer.from('\ufeff' + text, 'utf16le'), 'f')).toBe(text);
    const bigEndian = Buffer.from('\ufeff' + text, 'utf16le').swap16();
    expect(decodeInputText(bigEndian, 'f')).toBe(text);
  });

  it('refuses UTF-16 that is cut or holds an unpaired surrogate, with its offset', async () => {
    const odd = Buffer.concat([Buffer.from('\ufeffab', 'utf16le'), Buffer.of(0x63)]);
    expect(await usageMessage(() => decodeInputText(odd, 'w.txt'))).toBe(
      'w.txt starts with a UTF-16LE byte order mark but is not valid UTF-16LE: a lone last byte at offset 6; save it as UTF-8',
    );
    const lone = Buffer.from('\ufeffa\ud800b', 'utf16le');
    expect(await usageMessage(() => decodeInputText(lone, 'w.txt'))).toBe(
      'w.txt starts with a UTF-16LE byte order mark but is not valid UTF-16LE: an unpaired high surrogate at offset 4; save it as UTF-8',
    );
    const low = Buffer.from('\ufeff\udc00', 'utf16le').swap16();
    expect(await usageMessage(() => decodeInputText(low, 'w.txt'))).toBe(
      'w.txt starts with a UTF-16BE byte order mark but is not valid UTF-16BE: an unpaired low surrogate at offset 2; save it as UTF-8',
    );
  });
});

describe('reading the message', () => {
  it('names the file and says why it cannot be read, once', async () => {
    const missing = path.join(scratch, 'nope.md');
    expect(await usageMessage(() => readInputFile(missing))).toBe(`cannot read --file ${missing}: no such file or directory`);
    expect(await usageMessage(() => readInputFile(scratch))).toBe(`cannot read --file ${scratch}: it is a directory, not a file`);
    const file = path.join(scratch, 'latin1.md');
    writeFileSync(file, Buffer.from('\xe9', 'latin1'));
    expect(await usageMessage(() => readInputFile(file))).toMatch(new RegExp(`^${file.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')} is not valid UTF-8: byte 0xE9 at offset 0 `));
  });

  it('reads standard input as bytes and checks them the same way', async () => {
    expect(await readInputStdin(async () => Buffer.from('hi', 'utf8'))).toBe('hi');
    expect(await usageMessage(() => readInputStdin(async () => Buffer.of(0x68, 0xff)))).toMatch(/^standard input is not valid UTF-8: byte 0xFF at offset 1 /);
    const eisdir = Object.assign(new Error('EISDIR: illegal operation on a directory, read'), { code: 'EISDIR' });
    expect(await usageMessage(() => readInputStdin(() => Promise.reject(eisdir)))).toBe('cannot read standard input: it is a directory, not a file');
  });

  it("keeps an unknown error's words, without its code and syscall", () => {
    const error = Object.assign(new Error("EMFILE: too many open files, open '/x/y'"), { code: 'EMFILE' });
    expect(describeReadError(error)).toBe('too many open files');
  });
});
