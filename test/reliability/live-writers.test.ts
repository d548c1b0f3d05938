/**
 * Live writers: a child process appends turns to two sessions, raw lines and zstd
 * frames, each in pieces (so torn lines and torn frames are on disk at times), while listing,
 * candidates and `prepare` run in a loop over the real store. Every answer is a consistent snapshot
 * (a prefix of what was written, titles never going back), and nothing throws.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSessionReferenceResolver, REFERENCED_SESSIONS_PROMPT_PREFIX, REFERENCED_SESSIONS_PROMPT_SUFFIX } from '../../server/src/resolver';
import { openSessionStore, type SessionStoreService } from '../../server/src/store';
import type { TranscriptEncoding } from '../../server/src/store/layout';
import { findProgram } from '../support/conformance';
import { REPO_ROOT } from '../support/lspClient';
import { recordFigure, scaled } from './support/scale';
import { TemporaryDirectories, encodeBatches, eventually, sessionBatches, transcriptPath, treeHash, type SessionSpec } from './support/stores';

const zstd = findProgram('zstd');
const ENCODINGS: TranscriptEncoding[] = zstd.found ? ['raw', 'zstd'] : ['raw'];
const APPENDER = path.join(REPO_ROOT, 'test', 'reliability', 'support', 'liveAppender.cjs');
const TURNS = scaled(80, 1500);
const EVENTS_PER_TURN = 5; // turn/start, user, title, assistant, turn/end (sessionBatches)

const temporary = new TemporaryDirectories();
const stores: SessionStoreService[] = [];
const writers: ChildProcess[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.dispose();
  for (const writer of writers.splice(0)) if (writer.exitCode === null) writer.kill();
});
afterAll(() => temporary.removeAll());

const title = (turn: number) => `Title ${String(turn).padStart(5, '0')}`;

function liveSpec(encoding: TranscriptEncoding): SessionSpec {
  return {
    id: `live-${encoding}`,
    cwd: '/home/alice/proj',
    createdAt: encoding === 'raw' ? 2 : 1,
    turns: Array.from({ length: TURNS }, (_, turn) => ({ prompt: `prompt ${turn}`, answer: `answer ${turn}`, title: title(turn) })),
  };
}

/** The whole conversation as `prepare` projects it, with each message's seq. */
function fullConversation(spec: SessionSpec): Array<{ role: string; text: string; seq: number }> {
  return spec.turns.flatMap((turn, i) => [
    { role: 'user', text: turn.prompt, seq: EVENTS_PER_TURN * i + 1 },
    { role: 'assistant', text: turn.answer!, seq: EVENTS_PER_TURN * i + 3 },
  ]);
}

/** Split bytes into three uneven pieces, so readers also meet torn lines and frames. */
function pieces(bytes: Uint8Array, salt: number): Buffer[] {
  const a = Math.max(1, Math.floor((bytes.length * ((salt % 5) + 1)) / 9));
  const b = Math.max(a, Math.floor((bytes.length * ((salt % 3) + 6)) / 9));
  return [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)].filter((p) => p.length > 0).map((p) => Buffer.from(p));
}

describe('live writers', () => {
  it('listing, candidates and prepare answer consistent snapshots while a process appends lines and frames', { timeout: scaled(60_000, 900_000) }, async () => {
    const base = temporary.make('live');
    const root = path.join(base, 'sessions');
    const specs = ENCODINGS.map(liveSpec);
    const perSession: Array<Array<{ file: string; pieces: string[] }>> = [];
    for (const [index, spec] of specs.entries()) {
      const encoding = ENCODINGS[index]!;
      const [header, first, ...rest] = sessionBatches(spec);
      const file = transcriptPath(root, spec, encoding);
      // The session starts with its first turn on disk; the writer appends the others.
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, encodeBatches([header!, first!], encoding));
      // One append per turn: the batch's lines (raw) or one frame (zstd), as dsh writes them.
      perSession.push(rest.map((batch, turn) => ({ file, pieces: pieces(encodeBatches([batch], encoding), turn).map((p) => p.toString('base64')) })));
    }
    // The sessions' appends interleaved, turn by turn.
    const steps = perSession[0]!.flatMap((_, turn) => perSession.map((session) => session[turn]!));
    const plan = path.join(base, 'plan.json');
    writeFileSync(plan, JSON.stringify({ pauseMs: 3, steps }));

    const store = openSessionStore({ root, log: () => undefined });
    stores.push(store);
    await store.whenIndexed();
    // A budget the whole log fits in, so every snapshot can be compared with what was written.
    const resolver = createSessionReferenceResolver(store, { maxReferenceBytes: 64 * 1024 * 1024 });
    const expected = new Map(specs.map((spec) => [spec.id, fullConversation(spec)]));
    const titleSeen = new Map<string, number>();

    const writer = spawn(process.execPath, [APPENDER, plan], { stdio: ['ignore', 'pipe', 'pipe'] });
    writers.push(writer);
    let writerDone = false;
    let writerError = '';
    writer.stderr.on('data', (chunk) => (writerError += String(chunk)));
    const exited = new Promise<number | null>((resolve) => writer.once('exit', (code) => ((writerDone = true), resolve(code))));

    let rounds = 0;
    let prepares = 0;
    const checkTitle = (id: string, label: string | undefined) => {
      const turn = label === undefined ? -1 : Number(label.replace('Title ', ''));
      expect(label === undefined || label === title(turn)).toBe(true);
      // Titles only move forward: a later answer never shows an older state.
      expect(turn).toBeGreaterThanOrEqual(titleSeen.get(id) ?? 0);
      titleSeen.set(id, turn);
    };
    do {
      rounds++;
      const [listed, candidates, prepared] = await Promise.all([
        store.listSessions(),
        resolver.listCandidates({ cwd: '/home/alice/proj' }, 'title'),
        resolver.prepare(undefined, [{ type: 'text', text: 'see these' }], specs.map((spec) => ({ sessionId: spec.id }))),
      ]);
      prepares++;
      expect(listed.map((s) => s.id).sort()).toEqual(specs.map((s) => s.id).sort());
      for (const summary of listed) checkTitle(summary.id, summary.title);
      expect(candidates.map((c) => c.sessionId)).toEqual(listed.map((s) => s.id));

      const text = (prepared.additionalContext!.content[0] as { text: string }).text;
      expect(text.startsWith(REFERENCED_SESSIONS_PROMPT_PREFIX) && text.endsWith(REFERENCED_SESSIONS_PROMPT_SUFFIX)).toBe(true);
      const data = JSON.parse(text.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, -REFERENCED_SESSIONS_PROMPT_SUFFIX.length)) as Array<{
        sessionId: string;
        capturedThroughSeq: number;
        conversation: Array<{ role: string; text: string }>;
      }>;
      data.forEach((element, i) => {
        const full = expected.get(element.sessionId)!;
        const seen = element.conversation;
        // A prefix of what was written, and capturedThroughSeq inside the gap it stops in (an open turn
        // gets dsh's in-memory turn/end closer, which takes the seq the next real record would have).
        expect(seen).toEqual(full.slice(0, seen.length).map(({ role, text }) => ({ role, text })));
        expect(seen.length).toBeGreaterThanOrEqual(2);
        expect(element.capturedThroughSeq).toBeGreaterThanOrEqual(full[seen.length - 1]!.seq);
        if (seen.length < full.length) expect(element.capturedThroughSeq).toBeLessThanOrEqual(full[seen.length]!.seq);
        expect(prepared.additionalContext!.source.references[i]!.capturedThroughSeq).toBe(element.capturedThroughSeq);
      });
    } while (!writerDone);

    expect(await exited).toBe(0);
    expect(writerError).toBe('');
    // Once the writer is done, the store catches up with everything.
    const before = treeHash(root);
    await eventually(async () => {
      const listed = await store.listSessions();
      expect(listed.map((s) => s.title)).toEqual(listed.map(() => title(TURNS - 1)));
    });
    const final = await resolver.prepare(undefined, [], specs.map((spec) => ({ sessionId: spec.id })));
    expect(final.additionalContext!.source.references.map((r) => r.capturedThroughSeq)).toEqual(specs.map(() => TURNS * EVENTS_PER_TURN - 1));
    expect(treeHash(root)).toBe(before);
    recordFigure('live-writers', 'turns appended per session', TURNS);
    recordFigure('live-writers', 'pieces appended', steps.reduce((n, step) => n + step.pieces.length, 0));
    recordFigure('live-writers', 'rounds of listing+candidates+prepare while writing', rounds);
    expect(rounds).toBeGreaterThan(1);
  });
});
