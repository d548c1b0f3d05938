/**
 * A zstd bomb in the store: a valid header frame, then 16 frames of RLE blocks, each 1,000 MiB of
 * `\n` (0.5 MB on disk, 16 GiB of plaintext; every frame under the per-frame bound). The server
 * must keep answering while it reads it: the log's total plaintext is bounded, decoding yields to
 * the event loop, and a signal still ends the process. Deadlines are generous (polls, no timing
 * asserted); the times measured are recorded as figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SessionCommands, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { fileUri, pollUntil, responseErrorOf } from '../support/lspClient';
import { startMeasuredServer, type MeasuredServer } from './support/serverProcess';
import { recordFigure } from './support/scale';
import { TemporaryDirectories, transcriptPath, writeSession, type SessionSpec } from './support/stores';

const temporary = new TemporaryDirectories();
const servers: MeasuredServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.kill();
});
afterAll(() => temporary.removeAll());

const CWD = '/home/alice/proj';
const GOOD: SessionSpec[] = ['good-1', 'good-2', 'good-3'].map((id, index) => ({
  id,
  cwd: CWD,
  createdAt: 10 + index,
  turns: [{ prompt: `hello ${id}`, answer: 'hi', title: `Title of ${id}` }],
}));

/** Each answer is awaited at most this long: unfixed, the server answered nothing for minutes. */
const ANSWER_DEADLINE_MS = 10_000;
/** SIGTERM must end the process within this (the probe asked 2 s; generous for a loaded machine). */
const EXIT_DEADLINE_MS = 10_000;

/** A zstd frame of one raw block (single segment, content size declared, no checksum). */
function rawBlockFrame(text: string): Buffer {
  const bytes = Buffer.from(text);
  const blockHeader = (bytes.length << 3) | 1; // raw, last
  const sizeField = bytes.length - 256; // a 2-byte content size stores the size minus 256
  return Buffer.concat([
    Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x60, sizeField & 0xff, sizeField >> 8]),
    Buffer.from([blockHeader & 0xff, (blockHeader >> 8) & 0xff, blockHeader >> 16]),
    bytes,
  ]);
}

/** The bomb: the header frame, then `frames` frames of 128 KiB RLE blocks of `\n`, `mib` MiB each. */
function bombTranscript(id: string, frames = 16, mib = 1000): Buffer {
  const header = JSON.stringify({ type: 'session', version: 0, id, createdAt: 50, cwd: CWD, delegationDepth: 0 }) + '\n';
  const padded = header.length >= 256 ? header : header.replace('"delegationDepth"', `"pad":"${'x'.repeat(256 - header.length)}","delegationDepth"`);
  const blocks = mib * 8;
  const body = Buffer.alloc(blocks * 4);
  for (let i = 0; i < blocks; i++) {
    const blockHeader = ((128 * 1024) << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0); // RLE
    body.set([blockHeader & 0xff, (blockHeader >> 8) & 0xff, blockHeader >> 16, 0x0a], i * 4);
  }
  // Window descriptor 0x58: a 2 MiB window, as dsh's frames declare.
  const frame = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]), body]);
  return Buffer.concat([rawBlockFrame(padded), ...Array.from({ length: frames }, () => frame)]);
}

function bombStore(): string {
  const root = path.join(temporary.make('zstd-bomb'), 'sessions');
  for (const spec of GOOD) writeSession(root, spec, 'zstd');
  const file = transcriptPath(root, { id: 'bomb', cwd: CWD }, 'zstd');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bombTranscript('bomb'));
  return root;
}

/** `promise`, or a failure naming `what` once `ms` passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a zstd bomb in the store', () => {
  it('is tiny on disk and 16 GiB of plaintext', () => {
    const bytes = bombTranscript('bomb');
    expect(bytes.length).toBeLessThan(600 * 1024);
  });

  it('completion answers throughout, candidates list the other sessions, the bomb is READ_FAILED', async () => {
    const server = await startMeasuredServer(temporary, bombStore(), { folder: CWD });
    servers.push(server);
    const doc = fileUri(path.join(CWD, 'notes.md'));
    await server.client.openDocument(doc, '@');
    const times: number[] = [];
    // Completions asked one after the other for a while: each answers within the deadline.
    const until = performance.now() + 8_000;
    while (performance.now() < until) {
      const asked = performance.now();
      await within(server.client.completion(doc, { line: 0, character: 1 }), ANSWER_DEADLINE_MS, 'completion');
      times.push(Math.round(performance.now() - asked));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(times.length).toBeGreaterThan(1);
    recordFigure('zstd bomb', 'completion answer times (ms)', `first ${times[0]}, then max ${Math.max(...times.slice(1))} of ${times.length - 1}`);

    const rows = await pollUntil(async () => {
      const listed = await within(server.client.executeCommand<Array<{ sessionId: string }>>(SessionCommands.candidates, { limit: 100 }), ANSWER_DEADLINE_MS, 'candidates');
      const ids = listed.map((row) => row.sessionId);
      return GOOD.every((spec) => ids.includes(spec.id)) ? ids : undefined;
    }, 60_000, 'the good sessions listed');
    expect(rows).toEqual(expect.arrayContaining(GOOD.map((spec) => spec.id)));

    const asked = performance.now();
    const failure = await within(
      responseErrorOf(server.client.executeCommand(SessionCommands.prepare, { text: formatSessionReferenceMention({ sessionId: 'bomb' }) })),
      60_000,
      'prepare of the bomb',
    );
    recordFigure('zstd bomb', 'prepare of the bomb (ms)', Math.round(performance.now() - asked));
    expect(JSON.stringify(failure)).toContain('READ_FAILED');
  }, 180_000);

  it('SIGTERM ends the server while it reads the bomb', async () => {
    const server = await startMeasuredServer(temporary, bombStore(), { folder: CWD });
    servers.push(server);
    const doc = fileUri(path.join(CWD, 'notes.md'));
    await server.client.openDocument(doc, '@');
    // Reading the bomb has started: ask for it directly as well.
    void server.client.executeCommand(SessionCommands.prepare, { text: formatSessionReferenceMention({ sessionId: 'bomb' }) }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const sent = performance.now();
    process.kill(server.pid, 'SIGTERM');
    await pollUntil(() => (server.running() ? undefined : true), EXIT_DEADLINE_MS, 'the server to exit after SIGTERM');
    recordFigure('zstd bomb', 'exit after SIGTERM (ms)', Math.round(performance.now() - sent));
    expect(server.running()).toBe(false);
  }, 60_000);
});
