/**
 * Test support: a sessions root holding every kind of entry discovery tells apart, and a
 * discovery result in one order (not part of the build).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DiscoveryProblem, DiscoveryResult, TranscriptLocation } from '../store/discovery';
import type { FileIdentity } from '../store/transcriptFiles';

/** Writes `content` to `root`-relative `rel`, making its directories. */
export function writeTreeFile(root: string, rel: string, content = 'x\n'): void {
  const full = path.join(root, rel);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, content);
}

/**
 * Fills `root` (inside a fresh directory, whose `elsewhere/` the links point into): transcripts of
 * both encodings, a session directory with both, a temp file, other names, a directory named like
 * a transcript, a flat transcript, an empty session directory, a dot-directory, a stray root file,
 * and links to a project directory, a session directory and a transcript.
 */
export function writeDiscoveryTree(root: string): void {
  const base = path.dirname(root);
  const file = (rel: string) => writeTreeFile(root, rel);
  file('--p--/a/session.jsonl');
  file('--p--/b/session.jsonl.zstd');
  file('--p--/b/session.jsonl.zstd.0123456789ab.tmp');
  file('--p--/c/notes.txt');
  file('--p--/both/session.jsonl');
  file('--p--/both/session.jsonl.zstd');
  mkdirSync(path.join(root, '--p--', 'dir-named-like-a-transcript', 'session.jsonl'), { recursive: true });
  file('--p--/flat.jsonl');
  file('--p--/readme.md');
  file('.hidden/d/session.jsonl');
  file('stray-file.jsonl');
  mkdirSync(path.join(root, '--p--', 'empty-session'), { recursive: true });
  file('../elsewhere/proj/f/session.jsonl');
  file('../elsewhere/g/session.jsonl');
  symlinkSync(path.join(base, 'elsewhere', 'proj'), path.join(root, '--linked-project--'));
  symlinkSync(path.join(base, 'elsewhere', 'g'), path.join(root, '--p--', 'linked-session'));
  mkdirSync(path.join(root, '--p--', 'h'));
  symlinkSync(path.join(base, 'elsewhere', 'g', 'session.jsonl'), path.join(root, '--p--', 'h', 'session.jsonl'));
}

/** A discovery result with its lists in one order, to compare discoveries that list in different orders. */
export function sortedDiscovery(result: DiscoveryResult): {
  transcripts: TranscriptLocation[];
  seen: [string, FileIdentity][];
  problems: DiscoveryProblem[];
  directories: string[];
} {
  const byKey = (x: { key: string }, y: { key: string }) => (x.key < y.key ? -1 : 1);
  return {
    transcripts: [...result.transcripts].sort(byKey),
    seen: [...result.seen].sort(([x], [y]) => (x < y ? -1 : 1)),
    problems: [...result.problems].sort(byKey),
    directories: [...result.directories].sort(),
  };
}
