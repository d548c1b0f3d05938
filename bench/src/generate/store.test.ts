import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relativeLogPath } from '../../../server/src/store/layout';
import { ensureStore, MODIFICATION_TIMES, readExpectedLabels, transcriptsInKeyOrder, type GeneratedStore } from './store';
import { completeFrames, decompressFrames, frameEnds, initFrameDecoding } from '../zstd/frames';

interface Transcript {
  relative: string;
  encoding: 'raw' | 'zstd';
  /** Plaintext of each frame (raw: one part holding everything). */
  parts: string[];
}

function walkTranscripts(root: string): Transcript[] {
  const found: Transcript[] = [];
  for (const project of readdirSync(root)) {
    for (const session of readdirSync(path.join(root, project))) {
      for (const name of readdirSync(path.join(root, project, session))) {
        const relative = path.join(project, session, name);
        const bytes = readFileSync(path.join(root, relative));
        if (name === 'session.jsonl.zstd') {
          const parts = completeFrames(bytes).map((frame) => Buffer.from(decompressFrames(bytes.subarray(frame.start, frame.end))).toString('utf8'));
          found.push({ relative, encoding: 'zstd', parts });
        } else {
          expect(name).toBe('session.jsonl');
          found.push({ relative, encoding: 'raw', parts: [bytes.toString('utf8')] });
        }
      }
    }
  }
  return found;
}

/** Expand packed rows and return the events (store doc §4). */
function expand(lines: string[]): { type: string; seq: number; data: any; surfaceOp?: any }[] {
  const events: { type: string; seq: number; data: any; surfaceOp?: any }[] = [];
  for (const line of lines) {
    const record = JSON.parse(line);
    if (record.type.endsWith('-chunks')) {
      const members: string[] = record.data.texts ?? record.data.args;
      expect(members.length).toBeGreaterThanOrEqual(3);
      expect(record.data.dt).toHaveLength(members.length - 1);
      members.forEach((_, k) => events.push({ type: 'assistant/chunk', seq: record.seq0 + k, data: record.data }));
    } else events.push(record);
  }
  return events;
}

describe('generated store', () => {
  let base: string;
  let store: GeneratedStore & { reused: boolean };
  let transcripts: Transcript[];

  beforeAll(async () => {
    await initFrameDecoding();
    base = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-test-'));
    store = await ensureStore({ sessions: 60, seed: 7, prepareLogs: false, baseDir: base });
    transcripts = walkTranscripts(store.root);
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('lays every session out where dsh derives its path, in both encodings', () => {
    expect(transcripts).toHaveLength(60);
    expect(store.encodings.zstd + store.encodings.raw).toBe(60);
    expect(transcripts.filter((t) => t.encoding === 'raw').length).toBe(store.encodings.raw);
    for (const t of transcripts) {
      const header = JSON.parse(t.parts[0].slice(0, t.parts[0].indexOf('\n')));
      expect(t.relative).toBe(relativeLogPath(header.cwd, header.id, t.encoding));
      expect(header).toMatchObject({ type: 'session', version: 0, delegationDepth: expect.any(Number) });
    }
  });

  it('writes the header as zstd frame 1 and every batch as a frame ending at a record boundary', () => {
    for (const t of transcripts.filter((x) => x.encoding === 'zstd')) {
      // Frames shaped like Node's zlib output in dsh's own files: checksum, no content size, 2 MiB window.
      const bytes = readFileSync(path.join(store.root, t.relative));
      const ends = frameEnds(bytes);
      for (const start of [0, ...ends.slice(0, -1)]) expect([bytes[start + 4], bytes[start + 5]]).toEqual([0x04, 0x58]);
      expect(t.parts.length).toBeGreaterThan(1);
      expect(t.parts[0].indexOf('\n')).toBe(t.parts[0].length - 1);
      for (const part of t.parts) expect(part.endsWith('\n')).toBe(true);
    }
  });

  it('writes frames the zstd CLI decodes to the same text, checksums included', () => {
    const sample = transcripts.filter((x) => x.encoding === 'zstd').slice(0, 5);
    for (const t of sample) {
      const text = execFileSync('zstd', ['-dc', path.join(store.root, t.relative)]).toString('utf8');
      expect(text).toBe(t.parts.join(''));
    }
  });

  it('gives contiguous seqs after row expansion, valid replace ranges, and the recorded latest title', () => {
    const labels = readExpectedLabels(store);
    let compactedSessions = 0;
    for (const t of transcripts) {
      const lines = t.parts.join('').split('\n');
      expect(lines.pop()).toBe('');
      const header = JSON.parse(lines.shift()!);
      const events = expand(lines);
      events.forEach((e, i) => expect(e.seq).toBe(i));
      let surface: number[] = [];
      let title: string | undefined;
      for (const e of events) {
        if (e.type === 'session/title') title = e.data.title;
        if (e.surfaceOp === 'append') surface.push(e.seq);
        else if (e.surfaceOp) {
          const from = surface.indexOf(e.surfaceOp.start);
          const to = surface.indexOf(e.surfaceOp.end);
          expect(from).toBeGreaterThanOrEqual(0);
          expect(to).toBeGreaterThanOrEqual(from);
          expect(e.data.source).toMatchObject({ kind: 'plugin', plugin: 'compact' });
          surface = [...surface.slice(0, from), e.seq, ...surface.slice(to + 1)];
        }
      }
      if (events.some((e) => e.surfaceOp && e.surfaceOp !== 'append')) compactedSessions += 1;
      expect(labels.get(header.id)).toBe(title ?? header.id);
    }
    expect(labels.size).toBe(60);
    expect(compactedSessions).toBe(store.compacted);
    expect(compactedSessions).toBeGreaterThan(0);
  });

  it('is deterministic for a seed and reused when it already exists', async () => {
    const again = await ensureStore({ sessions: 60, seed: 7, prepareLogs: false, baseDir: base });
    expect(again.reused).toBe(true);
    const other = mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-test-'));
    try {
      const copy = await ensureStore({ sessions: 60, seed: 7, prepareLogs: false, baseDir: other });
      expect(copy.reused).toBe(false);
      const a = walkTranscripts(copy.root).map((t) => [t.relative, t.parts.join('')]).sort();
      const b = transcripts.map((t) => [t.relative, t.parts.join('')]).sort();
      expect(a).toEqual(b);
      expect(modificationTimes(copy.root).map(([, ms]) => ms)).toEqual(modificationTimes(store.root).map(([, ms]) => ms));
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('dates every transcript long past, one second apart in key order, however old the store; a store made before gets them', async () => {
    const times = modificationTimes(store.root);
    expect(times.map(([, ms]) => ms)).toEqual(times.map((_, i) => Date.UTC(2025, 6, 1) + 1000 * i));
    expect(store.modificationTimes).toBe(MODIFICATION_TIMES);
    // As a store generated before this rule: its manifest has no marker and its files were just written.
    const manifestFile = path.join(path.dirname(store.root), 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as GeneratedStore;
    delete manifest.modificationTimes;
    writeFileSync(manifestFile, JSON.stringify(manifest));
    const now = Date.now() / 1000;
    for (const [file] of times) utimesSync(file, now, now);
    const again = await ensureStore({ sessions: 60, seed: 7, prepareLogs: false, baseDir: base });
    expect(again).toMatchObject({ reused: true, modificationTimes: MODIFICATION_TIMES });
    expect(modificationTimes(store.root)).toEqual(times);
    expect((JSON.parse(readFileSync(manifestFile, 'utf8')) as GeneratedStore).modificationTimes).toBe(MODIFICATION_TIMES);
  });
});

/** Every transcript of a root with its modification time (ms), in key order. */
function modificationTimes(root: string): Array<[string, number]> {
  return transcriptsInKeyOrder(root).map((file) => [file, statSync(file).mtimeMs]);
}
