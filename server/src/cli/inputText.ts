import { readFile } from 'node:fs/promises';
import { UsageError } from './commandLine';

/**
 * The message `prepare` reads from a file or standard input, as text. It must be UTF-8: anything
 * else is refused with the offset of its first invalid byte, never turned into U+FFFD (the message
 * dsh would receive is the text the user meant, or nothing). A byte order mark is a signature, not
 * text: a UTF-8 one is dropped, and a file that starts with a UTF-16 one (what Windows PowerShell 5
 * writes for `>`) is decoded as UTF-16 in that byte order.
 */
export function decodeInputText(bytes: Uint8Array, source: string): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeUtf16(bytes, true, source);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeUtf16(bytes, false, source);
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const invalidAt = firstInvalidUtf8Byte(bytes, start);
  if (invalidAt !== undefined) {
    const byte = bytes[invalidAt]!.toString(16).toUpperCase().padStart(2, '0');
    throw new UsageError(
      `${source} is not valid UTF-8: byte 0x${byte} at offset ${invalidAt} (line ${lineOf(bytes, invalidAt)}) is not part of a UTF-8 character; ` +
        'save it as UTF-8 (e.g. iconv -f latin1 -t utf-8 for a Latin-1 file)',
    );
  }
  // ignoreBOM: the decoder keeps a U+FEFF it meets, which is text once the signature is gone.
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes.subarray(start));
}

/** The 1-based line of a byte offset (counting line feeds before it). */
function lineOf(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let index = 0; index < offset; index++) if (bytes[index] === 0x0a) line++;
  return line;
}

/**
 * The offset of the first byte that does not belong to a well-formed UTF-8 sequence (the Unicode
 * definition: no overlong forms, no surrogates, nothing above U+10FFFF), or undefined when all do.
 * A sequence cut short is invalid at its first byte.
 */
export function firstInvalidUtf8Byte(bytes: Uint8Array, start = 0): number | undefined {
  let index = start;
  while (index < bytes.length) {
    const lead = bytes[index]!;
    if (lead < 0x80) {
      index++;
      continue;
    }
    let length: number;
    // The range the second byte must fall in (it excludes overlong forms, surrogates and > U+10FFFF).
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return index;
    if (index + length > bytes.length) return index;
    const second = bytes[index + 1]!;
    if (second < low || second > high) return index;
    for (let next = 2; next < length; next++) {
      if ((bytes[index + next]! & 0xc0) !== 0x80) return index;
    }
    index += length;
  }
  return undefined;
}

/** UTF-16 after its byte order mark; an odd byte count or an unpaired surrogate is refused with its offset. */
function decodeUtf16(bytes: Uint8Array, littleEndian: boolean, source: string): string {
  const encoding = littleEndian ? 'UTF-16LE' : 'UTF-16BE';
  const unitAt = (offset: number): number => (littleEndian ? bytes[offset]! | (bytes[offset + 1]! << 8) : (bytes[offset]! << 8) | bytes[offset + 1]!);
  const fail = (offset: number, what: string): never => {
    throw new UsageError(`${source} starts with a ${encoding} byte order mark but is not valid ${encoding}: ${what} at offset ${offset}; save it as UTF-8`);
  };
  if (bytes.length % 2 !== 0) fail(bytes.length - 1, 'a lone last byte');
  const units: number[] = [];
  for (let offset = 2; offset < bytes.length; offset += 2) {
    const unit = unitAt(offset);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = offset + 2 < bytes.length ? unitAt(offset + 2) : -1;
      if (next < 0xdc00 || next > 0xdfff) fail(offset, 'an unpaired high surrogate');
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      const previous = units.length === 0 ? -1 : units[units.length - 1]!;
      if (previous < 0xd800 || previous > 0xdbff) fail(offset, 'an unpaired low surrogate');
    }
    units.push(unit);
  }
  let text = '';
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let from = 0; from < units.length; from += 8192) text += String.fromCharCode(...units.slice(from, from + 8192));
  return text;
}

/** Words for the file errors a user makes; others keep Node's words, without its code and syscall. */
const FILE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'it is a directory, not a file',
  ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
};

/** Why reading failed, in a few words: `ENOENT: no such file…, open '/x'` says its code and path once, not twice. */
export function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && FILE_ERRORS[code] !== undefined) return FILE_ERRORS[code];
  const message = error instanceof Error ? error.message : String(error);
  return message
    .replace(/^[A-Z][A-Z0-9_]+: /, '')
    .replace(/, [a-z]+ '[^']*'$/, '')
    .replace(/\s+/g, ' ');
}

/** Read `file` (absolute) as the message text; a file that cannot be read is a usage error naming it. */
export async function readInputFile(file: string): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new UsageError(`cannot read --file ${file}: ${describeReadError(error)}`);
  }
  return decodeInputText(bytes, file);
}

/** Read standard input whole as the message text. */
export async function readInputStdin(read: () => Promise<Uint8Array>): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await read();
  } catch (error) {
    throw new UsageError(`cannot read standard input: ${describeReadError(error)}`);
  }
  return decodeInputText(bytes, 'standard input');
}
