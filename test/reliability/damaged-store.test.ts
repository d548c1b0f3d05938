/**
 * Damaged stores at the store level: symbolic-link loops, links that leave the
 * root, empty and 0-byte files, a FIFO in place of a transcript, odd entries, zstd cut at every byte,
 * flipped bytes and garbage frames, and session directories removed while being read. The store keeps
 * answering for the rest, only ever rejects with a SessionReadError, and never writes.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SessionReadError, type SessionSurface } from '../../server/src/resolver';
import { openSessionStore, type SessionStoreService, type StoreProblem } from '../../server/src/store';
import type { TranscriptEncoding } from '../../server/src/store/layout';
import { SessionCommands, formatSessionReferenceMention, type PreparedReferencedMessage } from '@dsh-session-ls/shared';
import { findProgram } from '../support/conformance';
import { fileUri, responseErrorOf } from '../support/lspClient';
import { escapedFaults, startMeasuredServer, waitForListing, type MeasuredServer } from './support/serverProcess';
import { scaled, recordFigure } from './support/scale';
import {
  TemporaryDirectories,
  encodeBatches,
  eventually,
  sessionBatches,
  transcriptPath,
  treeHash,
  writeSession,
  type SessionSpec,
} from './support/stores';

const zstd = findProgram('zstd');
const ENCODINGS: TranscriptEncoding[] = zstd.found ? ['raw', 'zstd'] : ['raw'];
const temporary = new TemporaryDirectories();
const stores: SessionStoreService[] = [];
const fifos: string[] = [];
const servers: MeasuredServer[] = [];

afterEach(() => {
  for (const server of servers.splice(0)) server.kill();
  for (const store of stores.splice(0)) store.dispose();
  // A reader stuck opening a FIFO is released by opening its other end.
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // Nobody is waiting on it.
    }
  }
});
afterAll(() => temporary.removeAll());

function open(root: string): { store: SessionStoreService; problems: StoreProblem[] } {
  const problems: StoreProblem[] = [];
  const store = openSessionStore({ root, log: () => undefined });
  store.onProblem((problem) => problems.push(problem));
  stores.push(store);
  return { store, problems };
}

/** Resolves when the first index is built; a store that hangs on a damaged entry fails here. */
async function indexed(store: SessionStoreService): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the store never finished its first index')), 30_000);
  });
  try {
    await Promise.race([store.whenIndexed(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The read's surface, or its SessionReadError; anything else fails the test. */
async function readOrError(store: SessionStoreService, id: string): Promise<SessionSurface | SessionReadError> {
  try {
    return await store.readSurface(id);
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReadError);
    return error as SessionReadError;
  }
}

const GOOD: SessionSpec[] = [
  { id: 'good-1', cwd: '/home/alice/proj', createdAt: 300, turns: [{ prompt: 'first', answer: 'one', title: 'Good one' }] },
  { id: 'good-2', createdAt: 200, turns: [{ prompt: 'second', answer: 'two', title: 'Good two' }] },
];

describe('damaged entries are skipped, never followed, never hang; the rest is served', () => {
  it.each(ENCODINGS)('%s store with link loops, links out of the root, empty files, a FIFO and odd entries', async (encoding) => {
    const base = temporary.make('links');
    const root = path.join(base, 'sessions');
    const outside = path.join(base, 'outside');
    for (const spec of GOOD) writeSession(root, spec, encoding);
    const headerOnly: SessionSpec = { id: 'header-only', cwd: '/home/alice/proj', createdAt: 100, turns: [] };
    writeSession(root, headerOnly, encoding);
    const project = path.join(root, '--home-alice-proj--');
    const transcript = path.basename(transcriptPath(root, headerOnly, encoding));

    // Link loops: a project directory that is the root, a session directory that is its project,
    // two links pointing at each other, and a transcript linked to itself.
    symlinkSync('.', path.join(root, '--loop--'));
    symlinkSync('.', path.join(project, 'self'));
    symlinkSync('pong', path.join(project, 'ping'));
    symlinkSync('ping', path.join(project, 'pong'));
    mkdirSync(path.join(project, 'self-linked'));
    symlinkSync(transcript, path.join(project, 'self-linked', transcript));

    // Links that leave the root, to a perfectly valid session outside it: never followed.
    const escaped: SessionSpec = { id: 'outside-session', cwd: '/home/alice/proj', createdAt: 400, turns: [{ prompt: 'secret', title: 'Outside' }] };
    const outsideFile = writeSession(outside, escaped, encoding);
    symlinkSync(path.dirname(outsideFile), path.join(project, 'outside-session'));
    symlinkSync(path.join(outside, '--home-alice-proj--'), path.join(root, '--linked-project--'));
    mkdirSync(path.join(project, 'linked-transcript'));
    symlinkSync(outsideFile, path.join(project, 'linked-transcript', transcript));
    symlinkSync('/etc', path.join(project, 'etc'));

    // Empty things: a 0-byte transcript, one holding only a newline, an empty session directory,
    // an empty project directory, a stray file in the root, a directory named like a transcript.
    const emptyFiles = { zero: new Uint8Array(0), newline: encoding === 'raw' ? Buffer.from('\n') : encodeBatches([['']], 'zstd') };
    for (const [id, bytes] of Object.entries(emptyFiles)) {
      mkdirSync(path.join(project, id));
      writeFileSync(path.join(project, id, transcript), bytes);
    }
    mkdirSync(path.join(project, 'empty-dir'));
    mkdirSync(path.join(root, '--empty-project--'));
    writeFileSync(path.join(root, 'stray-file'), 'not a project');
    mkdirSync(path.join(project, 'dir-as-transcript', transcript), { recursive: true });
    // A FIFO where a transcript should be: opening it for reading would block forever.
    mkdirSync(path.join(project, 'fifo'));
    const fifo = path.join(project, 'fifo', transcript);
    execFileSync('mkfifo', [fifo]);
    fifos.push(fifo);

    const rootBefore = treeHash(root);
    const outsideBefore = treeHash(outside);
    const { store, problems } = open(root);
    await indexed(store);

    const listed = await store.listSessions();
    expect(listed.map((s) => s.id)).toEqual(['good-1', 'good-2', 'header-only']);
    expect(listed.map((s) => s.title)).toEqual(['Good one', 'Good two', undefined]);
    expect((await store.readSurface('good-1')).events.map((e) => e.type)).toEqual(['user/message', 'assistant/message']);
    expect(await store.readSurface('header-only')).toEqual({ header: { id: 'header-only', cwd: '/home/alice/proj', createdAt: 100 }, capturedThroughSeq: null, events: [] });
    for (const id of ['outside-session', 'self', 'ping', 'pong', 'self-linked', 'linked-transcript', 'etc', 'zero', 'newline', 'empty-dir', 'dir-as-transcript', 'fifo', '--loop--']) {
      expect(await readOrError(store, id)).toBeInstanceOf(SessionReadError);
    }
    // Whatever is reported is a path inside the root (a link's own path, never its target).
    const realRoot = realpathSync(root);
    for (const problem of problems) expect(problem.path.startsWith(realRoot + path.sep) || problem.path.startsWith(root + path.sep)).toBe(true);
    expect(problems.map((p) => p.path)).not.toContain(outsideFile);

    // Still serving after all that, and nothing was written anywhere.
    expect((await store.listSessions()).map((s) => s.id)).toEqual(['good-1', 'good-2', 'header-only']);
    expect(treeHash(root)).toBe(rootBefore);
    expect(treeHash(outside)).toBe(outsideBefore);
  });
});

/** A longer session for byte-level damage: several turns, several frames. */
const DAMAGED: SessionSpec = {
  id: 'damaged',
  cwd: '/home/alice/proj',
  createdAt: 500,
  turns: Array.from({ length: 6 }, (_, i) => ({ prompt: `prompt ${i} <b>`, answer: `answer ${i} ${'x'.repeat(i * 7)}`, title: `Title ${i}` })),
};

/** True when `surface` shows a prefix of `full`'s surface, event for event. */
function isPrefixOf(surface: SessionSurface, full: SessionSurface): boolean {
  if (surface.events.length > full.events.length) return false;
  return surface.events.every((event, i) => JSON.stringify(event) === JSON.stringify(full.events[i]));
}

/** A store holding a good session and DAMAGED (whose bytes a test then damages), indexed, with DAMAGED's full surface. */
async function storeToDamage(prefix: string, encoding: TranscriptEncoding) {
  const root = path.join(temporary.make(prefix), 'sessions');
  writeSession(root, GOOD[0]!, encoding);
  const file = writeSession(root, DAMAGED, encoding);
  const bytes = readFileSync(file);
  const { store } = open(root);
  await indexed(store);
  const full = await store.readSurface('damaged');
  expect(full.events).toHaveLength(12);
  return { file, bytes, store, full };
}

describe('byte-level damage: every read is a consistent prefix or a SessionReadError', () => {
  it.each(ENCODINGS)('%s transcript cut at many offsets (every byte under DSH_LONG)', async (encoding) => {
    const { file, bytes, store, full } = await storeToDamage('cuts', encoding);
    const seen = new Map<string, number>();
    // Every byte under DSH_LONG; a stride plus the last bytes (checksums, frame ends) by default.
    const stride = scaled(Math.ceil(bytes.length / 150), 1);
    const cuts = new Set<number>();
    for (let cut = 0; cut < bytes.length; cut += stride) cuts.add(cut);
    for (let back = 1; back <= 24; back++) cuts.add(bytes.length - back);
    for (const cut of cuts) {
      writeFileSync(file, bytes.subarray(0, cut));
      const result = await readOrError(store, 'damaged');
      if (result instanceof SessionReadError) {
        seen.set(result.reason, (seen.get(result.reason) ?? 0) + 1);
        continue;
      }
      seen.set(`prefix of ${result.events.length}`, 1);
      expect(isPrefixOf(result, full)).toBe(true);
      if (result.capturedThroughSeq !== null) expect(result.capturedThroughSeq).toBeGreaterThanOrEqual(result.events.at(-1)?.seq ?? 0);
    }
    // Cuts inside the header fail the read; cuts after it give prefixes.
    expect([...seen.keys()].some((key) => key.startsWith('prefix'))).toBe(true);
    expect([...seen.keys()].some((key) => !key.startsWith('prefix'))).toBe(true);
    recordFigure('damaged-store', `${encoding} cut offsets read`, `${cuts.size} of ${bytes.length}`);
    writeFileSync(file, bytes);
    expect(await store.readSurface('damaged')).toEqual(full);
    expect((await store.readSurface('good-1')).header.id).toBe('good-1');
  });

  it.each(ENCODINGS)('%s transcript with flipped bytes and garbage appended', async (encoding) => {
    const { file, bytes, store, full } = await storeToDamage('flips', encoding);
    const flips = scaled(100, 3000);
    let failures = 0;
    for (let n = 0; n < flips; n++) {
      const damaged = Buffer.from(bytes);
      const at = (n * 7919) % damaged.length;
      damaged[at] = damaged[at]! ^ (1 << n % 8);
      writeFileSync(file, damaged);
      const result = await readOrError(store, 'damaged');
      if (result instanceof SessionReadError) failures++;
      // A zstd frame is checksummed: a flip never yields different content, only a prefix or an error.
      else if (encoding === 'zstd') expect(isPrefixOf(result, full)).toBe(true);
    }
    expect(failures).toBeGreaterThan(0);
    recordFigure('damaged-store', `${encoding} flipped bytes read`, flips);
    if (encoding === 'zstd') {
      // The last frame's content checksum itself: a complete frame whose checksum is wrong is corruption.
      for (let back = 1; back <= 4; back++) {
        const damaged = Buffer.from(bytes);
        damaged[damaged.length - back] = damaged[damaged.length - back]! ^ 0x5a;
        writeFileSync(file, damaged);
        expect(await readOrError(store, 'damaged')).toMatchObject({ reason: 'corrupt' });
      }
    }
    // Garbage after the log: random bytes, then a fake frame (valid magic, garbage body).
    for (const tail of [Buffer.from('\u0000\u00ff garbage'), Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x00, 0xff, 0xff, 0xff, 0x01, 0x02])]) {
      writeFileSync(file, Buffer.concat([bytes, tail]));
      const result = await readOrError(store, 'damaged');
      if (!(result instanceof SessionReadError)) expect(isPrefixOf(result, full)).toBe(true);
    }
    expect((await store.readSurface('good-1')).header.id).toBe('good-1');
  });
});

describe('session directories removed while being read', () => {
  /** A session big enough that a read is still going when its directory goes (several MB of log). */
  const big = (id: string): SessionSpec => ({
    id,
    cwd: '/home/alice/proj',
    createdAt: 600,
    turns: Array.from({ length: 3000 }, (_, i) => ({ prompt: `question ${i} ${'q'.repeat(300)}`, answer: `answer ${i} ${'a'.repeat(300)}`, title: `Big ${i}` })),
  });

  it.each(ENCODINGS)('%s: each read answers the whole session or not-found/io; the others keep answering', async (encoding) => {
    const root = path.join(temporary.make('removed'), 'sessions');
    for (const spec of GOOD) writeSession(root, spec, encoding);
    const spec = big('doomed');
    // One frame per 100 turns (one per turn would mean 3000 runs of the zstd command).
    const [header, ...turns] = sessionBatches(spec);
    const batches = [header!, ...Array.from({ length: Math.ceil(turns.length / 100) }, (_, i) => turns.slice(i * 100, (i + 1) * 100).flat())];
    const bytes = encodeBatches(batches, encoding);
    const file = transcriptPath(root, spec, encoding);
    const { store } = open(root);
    await indexed(store);
    const rounds = scaled(12, 60);
    const outcomes = new Map<string, number>();
    for (let round = 0; round < rounds; round++) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, bytes);
      const reading = readOrError(store, 'doomed');
      const listing = store.listSessions();
      // Remove after a varying pause, so the removal lands before, during and after the read.
      await new Promise((resolve) => setTimeout(resolve, (round % 8) * 5));
      rmSync(path.dirname(file), { recursive: true, force: true });
      const result = await reading;
      if (result instanceof SessionReadError) {
        expect(['not-found', 'io']).toContain(result.reason);
        outcomes.set(result.reason, (outcomes.get(result.reason) ?? 0) + 1);
      } else {
        // Never half a session: either the read got the file or it did not.
        expect(result.events).toHaveLength(6000);
        expect(result.capturedThroughSeq).toBe(spec.turns.length * 5 - 1);
        outcomes.set('whole', (outcomes.get('whole') ?? 0) + 1);
      }
      expect((await listing).some((s) => s.id === 'good-1')).toBe(true);
    }
    recordFigure('damaged-store', `${encoding} removal rounds`, JSON.stringify(Object.fromEntries(outcomes)));
    await eventually(async () => expect((await store.listSessions()).map((s) => s.id)).toEqual(['good-1', 'good-2']));
    expect(await readOrError(store, 'doomed')).toBeInstanceOf(SessionReadError);
  });

  it('sessions removed while the first index is being built drop out; the rest is listed exactly', async () => {
    const root = path.join(temporary.make('mid-index'), 'sessions');
    const count = scaled(300, 2000);
    const specs: SessionSpec[] = Array.from({ length: count }, (_, i) => ({
      id: `s-${String(i).padStart(5, '0')}`,
      cwd: `/home/alice/p${i % 7}`,
      createdAt: 1000 + i,
      turns: [{ prompt: `p${i}`, answer: `a${i}`, title: `T${i}` }],
    }));
    for (const spec of specs) writeSession(root, spec, 'raw');
    const { store } = open(root);
    // Remove every third session right away, while the index is being built.
    for (const spec of specs.filter((_, i) => i % 3 === 0)) rmSync(path.dirname(transcriptPath(root, spec, 'raw')), { recursive: true });
    await indexed(store);
    const expected = specs.filter((_, i) => i % 3 !== 0).reverse();
    await eventually(async () => expect((await store.listSessions()).map((s) => s.id)).toEqual(expected.map((s) => s.id)));
    expect((await store.listSessions()).map((s) => s.title)).toEqual(expected.map((s) => s.turns[0]!.title));
    recordFigure('damaged-store', 'sessions indexed while a third were removed', count);
  });
});

describe('the server over a damaged store', () => {
  it('keeps answering completion and prepare for the good sessions, reports the bad entries, and never faults', async () => {
    const base = temporary.make('server-damage');
    const root = path.join(base, 'sessions');
    for (const spec of GOOD) writeSession(root, spec, 'raw');
    if (zstd.found) writeSession(root, { id: 'good-z', cwd: '/home/alice/proj', createdAt: 250, turns: [{ prompt: 'z', answer: 'zz', title: 'Good zstd' }] }, 'zstd');
    const project = path.join(root, '--home-alice-proj--');
    symlinkSync('.', path.join(root, '--loop--'));
    symlinkSync('pong', path.join(project, 'ping'));
    symlinkSync('ping', path.join(project, 'pong'));
    const outsideFile = writeSession(path.join(base, 'outside'), { id: 'outside-session', cwd: '/home/alice/proj', createdAt: 900, turns: [{ prompt: 'secret' }] }, 'raw');
    symlinkSync(path.dirname(outsideFile), path.join(project, 'outside-session'));
    mkdirSync(path.join(project, 'zero'));
    writeFileSync(path.join(project, 'zero', 'session.jsonl'), '');
    mkdirSync(path.join(project, 'fifo'));
    execFileSync('mkfifo', [path.join(project, 'fifo', 'session.jsonl')]);
    fifos.push(path.join(project, 'fifo', 'session.jsonl'));
    // Body-level damage: listed under its id, READ_FAILED when referenced.
    const damaged = writeSession(root, { ...DAMAGED, id: 'damaged-body' }, 'raw');
    writeFileSync(damaged, Buffer.concat([readFileSync(damaged), Buffer.from('garbage\n{"type":"turn/end","seq":99,"time":1,"data":{"turn":9,"reason":{"kind":"completed"}}}\n')]));
    const before = treeHash(root);

    const server = await startMeasuredServer(temporary, root);
    servers.push(server);
    await waitForListing(server.client, GOOD.length + (zstd.found ? 2 : 1));
    const doc = fileUri('/home/alice/proj/PROMPT.md');
    await server.client.openDocument(doc, '@');
    const list = await server.client.completion(doc, { line: 0, character: 1 });
    expect(list.items.map((item) => item.label)).toEqual(['damaged-body', 'Good one', ...(zstd.found ? ['Good zstd'] : []), 'Good two']);
    const text = ['good-1', 'good-2', ...(zstd.found ? ['good-z'] : [])].map((sessionId) => formatSessionReferenceMention({ sessionId })).join(' ');
    const prepared = await server.client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { text });
    expect(prepared.additionalContext!.source.references).toHaveLength(zstd.found ? 3 : 2);
    for (const id of ['damaged-body', 'outside-session', 'zero', 'fifo', 'ping']) {
      const error = await responseErrorOf(server.client.executeCommand(SessionCommands.prepare, { content: [], references: [{ sessionId: id }] }));
      expect(error.data).toEqual({ code: 'SESSION_REFERENCE_READ_FAILED' });
    }
    // Header-level problems are told to the client's log, not thrown at it.
    await server.client.waitForMessage('window/logMessage', (params: { message: string }) => params.message.includes('outside-session'));
    expect(escapedFaults(server.stderr())).toEqual([]);
    expect(server.running()).toBe(true);
    expect(treeHash(root)).toBe(before);
  });
});
