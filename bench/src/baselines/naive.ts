/**
 * The naive baseline, what dsh does per query (benchmarks.md): list the headers, then read and
 * fold every log to find its latest title, then filter and rank. The fold is the project's own
 * log decoder, so the baseline differs from the index only in doing everything per query.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { decompress } from 'fzstd';
import { listTranscripts, type TranscriptFile } from './floor';
import { frameEnds } from '../zstd/frames';

/** Reads one log whole and returns its latest title (undefined: none, or the read failed). */
export type TitleReader = (file: TranscriptFile, sessionId: string) => Promise<string | undefined>;

interface ListedHeader {
  file: TranscriptFile;
  id: string;
  cwd?: string;
  createdAt: number;
}

const HEADER_PROBE_BYTES = 64 * 1024;

/** Read just the header line (raw) or header frame (zstd), as dsh's listing does. */
function readHeader(file: TranscriptFile): ListedHeader | undefined {
  const fd = openSync(file.path, 'r');
  let bytes: Buffer;
  try {
    const buffer = Buffer.allocUnsafe(HEADER_PROBE_BYTES);
    bytes = buffer.subarray(0, readSync(fd, buffer, 0, HEADER_PROBE_BYTES, 0));
  } finally {
    closeSync(fd);
  }
  let line: string;
  if (file.encoding === 'zstd') {
    const [end] = frameEnds(bytes, 1);
    line = Buffer.from(decompress(bytes.subarray(0, end))).toString('utf8');
  } else {
    const newline = bytes.indexOf(10);
    if (newline < 0) return undefined;
    line = bytes.subarray(0, newline).toString('utf8');
  }
  const header = JSON.parse(line) as { id: string; cwd?: string; createdAt: number };
  return { file, id: header.id, cwd: header.cwd, createdAt: header.createdAt };
}

/** One naive query's time and answer size. */
export interface NaiveResult {
  ms: number;
  listed: number;
  matched: number;
}

/** Answer one query the naive way and time it (no target: sessions without a cwd rank first). */
export async function runNaiveQuery(root: string, query: string, limit: number, readTitle: TitleReader): Promise<NaiveResult> {
  const started = performance.now();
  const headers: ListedHeader[] = [];
  for (const file of listTranscripts(root)) {
    const header = readHeader(file);
    if (header) headers.push(header);
  }
  headers.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
  const needle = query.toLocaleLowerCase();
  const matches: { header: ListedHeader; label: string }[] = [];
  for (const header of headers) {
    const label = (await readTitle(header.file, header.id)) ?? header.id;
    const hit = [header.id, header.cwd ?? '', label].some((field) => field.toLocaleLowerCase().includes(needle));
    if (hit) matches.push({ header, label });
  }
  const ranked = [...matches.filter((m) => m.header.cwd === undefined), ...matches.filter((m) => m.header.cwd !== undefined)].slice(0, limit);
  return { ms: performance.now() - started, listed: headers.length, matched: ranked.length };
}
