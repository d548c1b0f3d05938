import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionReadError, type SessionSurface } from '../resolver/sessionStore';
import { findProgram, fixtureStore } from '../../../test/support/conformance';
import { DISCOVERY_REASONS } from './discovery';
import { TRANSCRIPT_NAMES, encodeSegment, projectDirName, type TranscriptEncoding } from './layout';
import { LISTING_REASONS } from './layout';
import { initZstdSupport, loadSessionLog } from './log';
import { concatBytes, ev, headerLine, rawTranscript, toolCallBlock, zstdFrame } from '../testing/testLogs';
import { loadOpenTranscript, readSessionSurface } from './lookup';
import { recordingFiles } from '../testing/testFiles';
import { nodeTranscriptFiles } from './transcriptFiles';

const zstd = findProgram('zstd');
await initZstdSupport();

/** `readSessionSurface`'s answer, or its failure as plain data. */
type Answer = { surface: SessionSurface } | { error: { reason: string; message: string } };

async function answerOf(read: () => Promise<SessionSurface>): Promise<Answer> {
  try {
    return { surface: await read() };
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return { error: { reason: (error as SessionReadError).reason, message: (error as SessionReadError).message } };
  }
}

/** What a load of the whole file at once says `readSurface` must answer. */
function expectedAnswer(bytes: Uint8Array, encoding: TranscriptEncoding, id: string): Answer {
  try {
    const log = loadSessionLog(bytes, encoding, { expectedId: id });
    const header = { id: log.header.id, createdAt: log.header.createdAt, ...(log.header.cwd === undefined ? {} : { cwd: log.header.cwd }) };
    return { surface: { header, capturedThroughSeq: log.capturedThroughSeq, events: log.surface } } as Answer;
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return { error: { reason: (error as SessionReadError).reason, message: (error as SessionReadError).message } };
  }
}

/** Deterministic text that zstd cannot shrink much, so frames stay large. */
function noise(seed: number, length: number): string {
  let state = seed >>> 0 || 1;
  let out = '';
  while (out.length < length) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out += (state >>> 0).toString(36);
  }
  return out.slice(0, length);
}

const compact = { kind: 'plugin', plugin: 'compact', compactionId: 'k' };

/**
 * A log of a few MiB: turns with long prompts, answers and tool results, a compaction every ten
 * turns, a final turn left open. Frames group several records, so frames and records straddle
 * every read chunk boundary.
 */
function bigLog(id: string): { lines: string[]; frames: string[][] } {
  const lines = [headerLine(id)];
  const frames: string[][] = [[lines[0]]];
  let seq = 0;
  let surface: number[] = [];
  for (let turn = 1; turn <= 40; turn++) {
    const frame: string[] = [];
    const push = (line: string) => {
      frame.push(line);
      seq++;
    };
    push(ev.turnStart(seq, turn));
    push(ev.stepStart(seq, 1, turn));
    surface.push(seq, seq + 1, seq + 3);
    push(ev.user(seq, `prompt ${turn} ${noise(turn, 20_000)}`));
    push(ev.assistant(seq, [{ type: 'text', text: noise(turn * 7, 30_000) }, toolCallBlock(`c${turn}`)]));
    push(ev.toolCall(seq, `c${turn}`));
    push(ev.toolResult(seq, `c${turn}`, noise(turn * 13, 25_000), { surfaceOp: 'append', sourceEventSeqs: [seq - 1] }));
    if (turn === 40) {
      frames.push(frame);
      break; // left open: closers are appended in memory
    }
    push(ev.stepEnd(seq, 1, turn));
    push(ev.turnEnd(seq, turn));
    if (turn % 10 === 0) {
      push(ev.of('compaction/start', seq, { compactionId: `k${turn}`, turn: null }));
      const start = surface[0];
      const end = surface[surface.length - 1];
      const summary = { surfaceOp: { op: 'replace', start, end }, sourceEventSeqs: [seq - 1, ...surface] };
      // The checkpoint replaces everything on the surface so far (the previous checkpoint included).
      surface = [seq];
      push(ev.user(seq, `summary ${turn} ${noise(turn * 3, 5_000)}`, summary, compact));
      push(ev.of('compaction/end', seq, { compactionId: `k${turn}`, turn: null }));
    }
    frames.push(frame);
    lines.push(...frame);
  }
  lines.push(...frames[frames.length - 1]);
  return { lines, frames };
}

describe('readSessionSurface streams a log in bounded reads', () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  function storeWith(id: string, encoding: TranscriptEncoding, bytes: Uint8Array): { root: string; file: string } {
    const root = mkdtempSync(path.join(os.tmpdir(), 'dsh-lookup-'));
    roots.push(root);
    const dir = path.join(root, projectDirName('/home/alice/proj'), encodeSegment(id));
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, TRANSCRIPT_NAMES[encoding]);
    writeFileSync(file, bytes);
    return { root, file };
  }

  const id = 'big';
  const { lines, frames } = bigLog(id);
  const encodings: Array<[TranscriptEncoding, Uint8Array]> = [['raw', rawTranscript(lines)]];
  if (zstd.found) encodings.push(['zstd', concatBytes(frames.map((frame) => zstdFrame(frame)))]);

  it('the test log is several read chunks long and its surface was compacted', () => {
    const log = loadSessionLog(encodings[0][1], 'raw');
    expect(encodings[0][1].length).toBeGreaterThan(2 * 1024 * 1024);
    expect(log.surface[0]).toMatchObject({ type: 'user/message', data: { source: compact } });
    expect(log.surface.at(-1)).toMatchObject({ type: 'tool/result' }); // the closer of the open turn
  });

  for (const [encoding, bytes] of encodings) {
    it(`${encoding}: gives what a load of the whole file gives, never reading it whole`, async () => {
      const { root } = storeWith(id, encoding, bytes);
      const files = recordingFiles();
      const answer = await answerOf(() => readSessionSurface(root, id, files.files));
      expect(answer).toEqual(expectedAnswer(bytes, encoding, id));
      expect(files.wholeReads).toEqual([]);
      expect(files.reads.length).toBeGreaterThan(4);
      expect(Math.max(...files.reads.map((read) => read.length))).toBeLessThan(bytes.length / 4);
    });

    it(`${encoding}: keeps every surface-type event when asked (the transcript's load), as a whole load does`, async () => {
      const { file } = storeWith(id, encoding, bytes);
      const handle = await nodeTranscriptFiles.open(file);
      try {
        const streamed = await loadOpenTranscript(handle, bytes.length, encoding, { expectedId: id, keepEvents: 'surface-types' });
        expect(streamed).toEqual(loadSessionLog(bytes, encoding, { expectedId: id, keepEvents: 'surface-types' }));
        expect(streamed.events.length).toBeGreaterThan(streamed.surface.length);
      } finally {
        await handle.close();
      }
    });

    // Damage deep in the file, past the first chunks: the streamed read fails exactly as a whole load.
    const damages: Array<[string, 'corrupt' | 'loads', (copy: Uint8Array) => Uint8Array]> = [
      ['a newline written three quarters in', 'corrupt', (copy) => ((copy[Math.floor(copy.length * 0.75)] = 0x0a), copy)],
      ['a cut in the middle (a torn tail)', 'loads', (copy) => copy.slice(0, Math.floor(copy.length / 2) + 7)],
      ['a quote written a third in', 'corrupt', (copy) => ((copy[Math.floor(copy.length / 3)] = 0x22), copy)],
    ];
    for (const [what, outcome, damage] of damages) {
      it(`${encoding}: ${what} gives the same answer as a whole load`, async () => {
        const damaged = damage(bytes.slice());
        const { root } = storeWith(id, encoding, damaged);
        const answer = await answerOf(() => readSessionSurface(root, id, nodeTranscriptFiles));
        const expected = expectedAnswer(damaged, encoding, id);
        expect(answer).toEqual(expected);
        if (outcome === 'loads') expect(expected).toHaveProperty('surface');
        else expect(expected).toMatchObject({ error: { reason: outcome } });
      });
    }
  }
});

describe('readSessionSurface finds a session in every project directory', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'dsh-lookup-dirs-'));
  const outside = mkdtempSync(path.join(os.tmpdir(), 'dsh-lookup-outside-'));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const cwdA = '/home/alice/proj';
  const cwdB = '/home/alice/other';
  const dirA = projectDirName(cwdA);
  const dirB = projectDirName(cwdB);
  /** A session directory holding a valid raw log whose header derives this path. */
  function session(cwd: string, id: string, names: string[] = [TRANSCRIPT_NAMES.raw]): string {
    const dir = path.join(root, projectDirName(cwd), encodeSegment(id));
    mkdirSync(dir, { recursive: true });
    for (const name of names) writeFileSync(path.join(dir, name), rawTranscript([headerLine(id, { cwd }), ev.turnStart(0, 1), ev.stepStart(1, 1, 1), ev.user(2, `hello ${id}`)]));
    return dir;
  }
  // Many project directories, most without the ids looked up, sorted on both sides of the real ones.
  for (let i = 0; i < 400; i++) mkdirSync(path.join(root, `-filler-${String(i).padStart(3, '0')}`));
  session(cwdA, 'good');
  session(cwdB, 'also good');
  session(cwdA, 'twin');
  session(cwdB, 'twin');
  const both = session(cwdA, 'both', [TRANSCRIPT_NAMES.raw, TRANSCRIPT_NAMES.zstd]);
  mkdirSync(path.join(outside, 'linked'));
  writeFileSync(path.join(outside, 'linked', TRANSCRIPT_NAMES.raw), rawTranscript([headerLine('linked')]));
  symlinkSync(path.join(outside, 'linked'), path.join(root, dirA, 'linked'));
  const linkedLogDir = path.join(root, dirB, 'linked-log');
  mkdirSync(linkedLogDir);
  symlinkSync(path.join(outside, 'linked', TRANSCRIPT_NAMES.raw), path.join(linkedLogDir, TRANSCRIPT_NAMES.raw));
  mkdirSync(path.join(root, dirA, 'empty')); // a session directory without a transcript is no session
  writeFileSync(path.join(root, dirB, `flat${TRANSCRIPT_NAMES.raw.slice('session'.length)}`), rawTranscript([headerLine('flat')]));

  const ids = ['good', 'also good', 'twin', 'both', 'linked', 'linked-log', 'empty', 'flat', 'ghost'];
  const answer = (id: string) => answerOf(() => readSessionSurface(root, id, nodeTranscriptFiles));

  it('answers each kind of entry as dsh does', async () => {
    const answers = Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await answer(id)] as const)));
    expect(answers['good']).toMatchObject({ surface: { header: { id: 'good', cwd: cwdA }, events: [{ type: 'user/message' }] } });
    expect(answers['also good']).toMatchObject({ surface: { header: { id: 'also good', cwd: cwdB } } });
    const [first, second] = [dirA, dirB].sort();
    expect(answers['twin']).toEqual({
      error: { reason: 'ambiguous', message: `session "twin" is ambiguous: found in 2 project directories (${first}, ${second})` },
    });
    expect(answers['both']).toEqual({ error: { reason: 'unsupported', message: `${LISTING_REASONS.bothEncodings}: ${both}` } });
    expect(answers['linked']).toEqual({
      error: { reason: 'unsupported', message: `${DISCOVERY_REASONS.symlink}: ${path.join(root, dirA, 'linked')}` },
    });
    expect(answers['linked-log']).toEqual({ error: { reason: 'unsupported', message: `${DISCOVERY_REASONS.symlink}: ${linkedLogDir}` } });
    expect(answers['empty']).toEqual({ error: { reason: 'not-found', message: 'session "empty" not found' } });
    expect(answers['flat']).toEqual({
      error: { reason: 'unsupported', message: `${DISCOVERY_REASONS.flat}: ${path.join(root, dirB, 'flat.jsonl')}` },
    });
    expect(answers['ghost']).toEqual({ error: { reason: 'not-found', message: 'session "ghost" not found' } });
  });

  it('lookups started together (one prepare) answer as each alone does', async () => {
    const alone: Answer[] = [];
    for (const id of ids) alone.push(await answer(id));
    expect(await Promise.all(ids.map(answer))).toEqual(alone);
  });

  it('a session (and project directory) created between two lookups is found by the second', async () => {
    const cwd = '/home/alice/new';
    expect(await Promise.all([answer('late'), answer('good')])).toMatchObject([{ error: { reason: 'not-found' } }, { surface: {} }]);
    session(cwd, 'late');
    expect(await Promise.all([answer('late'), answer('good')])).toMatchObject([
      { surface: { header: { id: 'late', cwd } } },
      { surface: { header: { id: 'good' } } },
    ]);
    // A second copy appearing later makes it ambiguous at once.
    session(cwdA, 'late');
    expect(await answer('late')).toMatchObject({ error: { reason: 'ambiguous' } });
  });
});

describe('readSessionSurface on the fixture store', () => {
  for (const encoding of ['raw', 'zstd'] as const) {
    it(`${encoding}: every session reads as a whole load of its file says`, async () => {
      const root = fixtureStore(encoding);
      let sessions = 0;
      for (const project of readdirSync(root)) {
        for (const session of readdirSync(path.join(root, project))) {
          const bytes = new Uint8Array(readFileSync(path.join(root, project, session, TRANSCRIPT_NAMES[encoding])));
          // The id as the session directory names it (a damaged header must fail the same way too).
          const sessionId = session.replace(/~([0-9A-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
          expect(encodeSegment(sessionId)).toBe(session);
          const answer = await answerOf(() => readSessionSurface(root, sessionId, nodeTranscriptFiles));
          expect(answer).toEqual(expectedAnswer(bytes, encoding, sessionId));
          sessions++;
        }
      }
      expect(sessions).toBeGreaterThanOrEqual(11);
    });
  }
});
