/**
 * The naive baseline, what dsh does per query (bench/README.md): list the headers, then read and
 * fold every log to find its latest title, then filter and rank. Header reads and the fold are
 * the project's own decoder, so the baseline differs from the index only in doing it all per query.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { listTranscripts } from './floor';
import type { ListedHeader, projectDecoder } from './projectTitleReader';

/** The decoder the naive baseline uses. */
export type NaiveDecoder = Awaited<ReturnType<typeof projectDecoder>>;

/** dsh's listing reads the header frame or line; a header is never near this size. */
const HEADER_PROBE_BYTES = 64 * 1024;

function readPrefix(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(HEADER_PROBE_BYTES);
    return buffer.subarray(0, readSync(fd, buffer, 0, HEADER_PROBE_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/** One naive query's time and answer size. */
export interface NaiveResult {
  ms: number;
  listed: number;
  matched: number;
}

/** Answer one query the naive way and time it (no target: sessions without a cwd rank first). */
export function runNaiveQuery(root: string, query: string, limit: number, decoder: NaiveDecoder): NaiveResult {
  const started = performance.now();
  const headers: ListedHeader[] = [];
  for (const file of listTranscripts(root)) {
    const header = decoder.readHeader(file, readPrefix(file.path));
    if (header) headers.push(header);
  }
  headers.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
  const needle = query.toLocaleLowerCase();
  const matches: { header: ListedHeader; label: string }[] = [];
  for (const header of headers) {
    const label = decoder.readTitle(header.file, header.id) ?? header.id;
    const fields = header.cwd === undefined ? [header.id, label] : [header.id, header.cwd, label];
    if (fields.some((field) => field.toLocaleLowerCase().includes(needle))) matches.push({ header, label });
  }
  const ranked = [...matches.filter((m) => m.header.cwd === undefined), ...matches.filter((m) => m.header.cwd !== undefined)].slice(0, limit);
  return { ms: performance.now() - started, listed: headers.length, matched: ranked.length };
}
