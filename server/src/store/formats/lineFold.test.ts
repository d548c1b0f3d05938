import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fileIdentity } from '../transcriptFiles';
import { readForeignFile, type ForeignResume } from '../engine/foreignRead';
import type { FormatAdapter } from './adapter';
import { claudeFormat } from './claudeCode';
import { codexFormat } from './codex';
import { qwenCodeFormat } from './qwenCode';
import { geminiFormat } from './gemini';

// Stores written by the real CLIs (Claude Code 2.1.197, codex-cli 0.171.0, Gemini CLI 0.61.0), and their damaged copies.
const FIXTURES = fileURLToPath(new URL('../../../../test/agent-stores/fixtures/', import.meta.url));

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Every fixture session file of one agent (sound and damaged), with its format. */
function fixtureFiles(agent: 'claude-code' | 'codex' | 'qwen-code' | 'gemini'): string[] {
  const found: string[] = [];
  for (const base of [agent, path.join('damaged', agent)]) {
    const dir = path.join(FIXTURES, base);
    for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) if (name.endsWith('.jsonl') && name !== 'session_index.jsonl') found.push(path.join(dir, name));
  }
  return found;
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lines that may change (or pretend to change) a listing fact, and damage, for either agent. */
const EXTRA_LINES = [
  JSON.stringify({ type: 'custom-title', customTitle: 'Renamed by the test', sessionId: 'x' }),
  JSON.stringify({ type: 'custom-title', customTitle: '   ' }),
  JSON.stringify({ type: 'ai-title', aiTitle: 'An AI title' }),
  JSON.stringify({ type: 'summary', summary: 'A summary title' }),
  JSON.stringify({ type: 'user', message: { role: 'user', content: 'text that says custom-title and session_meta' }, timestamp: '2026-01-01T00:00:00Z' }),
  JSON.stringify({ type: 'assistant', message: { content: [{ type: 'custom-title', customTitle: 'nested, not a record' }] } }),
  JSON.stringify({ type: 'session_meta', payload: { id: '01a23b79-0000-7000-8000-00000000abcd', cwd: '/elsewhere', timestamp: '2020-01-01T00:00:00Z' } }),
  JSON.stringify({ type: 'session_meta', payload: { id: '' } }),
  JSON.stringify({ type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a later prompt' }] } }),
  JSON.stringify({ type: 'a-record-type-nobody-knows', session_meta: true }),
  '{"type":"custom-title","customTitle":"torn',
  'not json at all, custom-title',
  '[1, 2, 3]',
  '',
  '   {"type":"summary","summary":"indented"}   ',
  // Qwen Code: a rename, one that clears the title, a prompt, a record of another session, and its title text in a prompt.
  JSON.stringify({ uuid: 'u1', parentUuid: null, sessionId: 'q', type: 'system', subtype: 'custom_title', systemPayload: { customTitle: 'Qwen rename by the test' } }),
  JSON.stringify({ uuid: 'u2', parentUuid: 'u1', sessionId: 'q', type: 'system', subtype: 'custom_title', systemPayload: { customTitle: '' } }),
  JSON.stringify({ uuid: 'u3', parentUuid: null, sessionId: 'q-other', cwd: '/q', timestamp: '2026-02-02T00:00:00Z', type: 'user', message: { role: 'user', parts: [{ text: 'a Qwen prompt' }] } }),
  JSON.stringify({ type: 'user', message: { role: 'user', parts: [{ text: 'says "subtype":"custom_title" in a prompt' }] } }),
  JSON.stringify({ type: 'user', systemPayload: { displayText: 'shown instead' }, message: { role: 'user', parts: [{ text: 'sent' }] } }),
  // Gemini CLI's operations: a title, a new id, a rewind, a history replaced, a message.
  JSON.stringify({ $set: { summary: 'A Gemini summary' } }),
  JSON.stringify({ $set: { sessionId: 'a1000001-0000-4000-8000-00000000abcd' } }),
  JSON.stringify({ $rewindTo: 'nowhere' }),
  JSON.stringify({ $set: { messages: [{ id: 'm1', type: 'user', content: [{ text: 'a replaced history' }] }] } }),
  JSON.stringify({ id: 'm2', type: 'user', content: 'a prompt that says $set and $rewindTo' }),
];

/** The listing facts of `bytes` by the line fold. */
function skimmed(format: FormatAdapter, file: string, bytes: Buffer, mtimeMs: number) {
  const fold = format.newFold(file);
  fold.fold(bytes, 0, bytes.length);
  return format.finish(fold, file, mtimeMs);
}

describe.each([
  ['claude-code', claudeFormat],
  ['codex', codexFormat],
  ['qwen-code', qwenCodeFormat],
  ['gemini', geminiFormat],
] as const)('%s: the line fold', (agent, format) => {
  const files = fixtureFiles(agent);

  it('finds the facts a parse of every line finds, on every fixture cut at many points and with records mixed in', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    const next = random(17);
    let compared = 0;
    for (const file of files) {
      const original = readFileSync(file);
      const variants: Buffer[] = [original];
      // Cuts anywhere (mid-line, mid-character), and the whole file with extra lines spliced in at line ends.
      for (let i = 0; i < 40; i++) variants.push(original.subarray(0, Math.floor(next() * original.length)));
      const lines = original.toString('utf8').split('\n');
      for (let i = 0; i < 40; i++) {
        const mixed = [...lines];
        for (let k = 0; k < 3; k++) mixed.splice(Math.floor(next() * (mixed.length + 1)), 0, EXTRA_LINES[Math.floor(next() * EXTRA_LINES.length)]!);
        variants.push(Buffer.from(mixed.join(next() < 0.5 ? '\n' : '\r\n')));
      }
      for (const bytes of variants) {
        expect(skimmed(format, file, bytes, 1234)).toEqual(format.summarize(file, bytes.toString('utf8'), 1234));
        compared++;
      }
    }
    expect(compared).toBe(files.length * 81);
  });

  it('changes a fact found after the head (a later title or session_meta) exactly as the whole parse does', () => {
    const file = files[0]!;
    const extra = { 'claude-code': EXTRA_LINES[0]!, codex: EXTRA_LINES[6]!, 'qwen-code': EXTRA_LINES[15]!, gemini: EXTRA_LINES[20]! }[agent];
    const bytes = Buffer.concat([readFileSync(file), Buffer.from(`${extra}\n`)]);
    const whole = format.summarize(file, bytes.toString('utf8'), 0)!;
    expect(skimmed(format, file, bytes, 0)).toEqual(whole);
    if (agent === 'codex') expect(whole.id).toBe('01a23b79-0000-7000-8000-00000000abcd');
    else expect(whole.title).toBe({ 'claude-code': 'Renamed by the test', 'qwen-code': 'Qwen rename by the test', gemini: 'A Gemini summary' }[agent]);
  });
});

describe('the line fold on small hand-made files', () => {
  const rollout = '/x/sessions/2026/12/03/rollout-2026-12-03T10-35-31-01a23b79-3e7d-7300-91e8-4b425fbbb44a.jsonl';
  const transcript = '/x/projects/-p/7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01.jsonl';
  const chat = '/x/projects/-p/chats/9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01.jsonl';
  const cases: Array<[string, FormatAdapter, string, string[]]> = [
    ['a Codex file with records of no known type is a session named by its file', codexFormat, rollout, [JSON.stringify({ type: 'event_msg', payload: {} })]],
    ['a Codex file of garbage is no session', codexFormat, rollout, ['garbage', '{"torn":']],
    ['a Codex prompt before any session_meta', codexFormat, rollout, [EXTRA_LINES[8]!, EXTRA_LINES[6]!, EXTRA_LINES[7]!]],
    ['a Claude Code file with only a title record', claudeFormat, transcript, [EXTRA_LINES[0]!]],
    ['a Claude Code title before the head, and a blank one after', claudeFormat, transcript, [EXTRA_LINES[3]!, EXTRA_LINES[4]!, EXTRA_LINES[1]!]],
    ['a Qwen Code file whose first 10 lines hold no record is no session', qwenCodeFormat, chat, [...Array<string>(10).fill('garbage'), EXTRA_LINES[17]!]],
    ['a Qwen Code record on the 10th line counts, blank lines not', qwenCodeFormat, chat, [...Array<string>(9).fill('garbage'), '', '  ', EXTRA_LINES[17]!, EXTRA_LINES[15]!]],
    ['a Qwen Code title cleared by a later rename, and a display text', qwenCodeFormat, chat, [EXTRA_LINES[19]!, EXTRA_LINES[15]!, EXTRA_LINES[18]!, EXTRA_LINES[16]!]],
  ];
  it.each(cases)('%s', (_what, format, file, lines) => {
    const bytes = Buffer.from(lines.join('\n'));
    expect(skimmed(format, file, bytes, 99)).toEqual(format.summarize(file, bytes.toString('utf8'), 99));
  });
});

describe.each([
  ['claude-code', claudeFormat],
  ['codex', codexFormat],
  ['qwen-code', qwenCodeFormat],
  ['gemini', geminiFormat],
] as const)('%s: reading only what was appended', (agent, format) => {
  const source = fixtureFiles(agent)[0]!;
  const target = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'foreign-read-'));
    scratch.push(dir);
    return path.join(dir, path.basename(source));
  };
  const fromScratch = (file: string) => {
    const stats = statSync(file);
    return format.summarize(file, readFileSync(file, 'utf8'), stats.mtimeMs);
  };

  it('continues from the last complete line after appends cut anywhere, and equals a read from byte 0 each time', async () => {
    const whole = readFileSync(source);
    const next = random({ 'claude-code': 5, codex: 6, 'qwen-code': 7, gemini: 8 }[agent]);
    for (let run = 0; run < 12; run++) {
      const file = target();
      // The file grows in pieces cut anywhere (torn lines included), with title records appended at times.
      const full = Buffer.concat([whole, Buffer.from(`${EXTRA_LINES[0]}\n${EXTRA_LINES[6]}\n${EXTRA_LINES[15]}\n${EXTRA_LINES[20]}\n`)]);
      const cuts = [...new Set(Array.from({ length: 5 }, () => 1 + Math.floor(next() * (full.length - 1))))].sort((a, b) => a - b);
      let written = 0;
      let previous: { identity: ReturnType<typeof fileIdentity>; resume?: ForeignResume } | undefined;
      for (const cut of [...cuts, full.length]) {
        if (written === 0) writeFileSync(file, full.subarray(0, cut));
        else appendFileSync(file, full.subarray(written, cut));
        written = cut;
        const identity = fileIdentity(statSync(file));
        const read = await readForeignFile(format, file, identity, previous, { keepState: true });
        expect(read.summary).toEqual(fromScratch(file));
        if (previous !== undefined) expect(read).toMatchObject({ resumed: true });
        expect(read.notResumed).toBeUndefined();
        expect(read.resume!.offset).toBeLessThanOrEqual(cut);
        previous = { identity, ...(read.resume === undefined ? {} : { resume: read.resume }) };
      }
    }
  });

  it('reads from byte 0 when the bytes before the resume point changed: a rewrite in place that grows, shrinks or keeps the size', async () => {
    const original = readFileSync(source);
    const rewrites: Array<[string, (bytes: Buffer) => Buffer, 'prefix-changed' | 'not-append']> = [
      ['grows', (bytes) => Buffer.concat([Buffer.from(`${EXTRA_LINES[2]}\n`), bytes]), 'prefix-changed'],
      ['grows, one byte changed early', (bytes) => Buffer.concat([flip(bytes, 10), Buffer.from(`${EXTRA_LINES[3]}\n`)]), 'prefix-changed'],
      ['shrinks', (bytes) => bytes.subarray(0, Math.floor(bytes.length / 2)), 'not-append'],
      ['keeps the size', (bytes) => flip(bytes, 10), 'not-append'],
    ];
    for (const [what, rewrite, why] of rewrites) {
      const file = target();
      writeFileSync(file, original);
      const identity = fileIdentity(statSync(file));
      const first = await readForeignFile(format, file, identity, undefined, { keepState: true });
      // Rewritten in place (same inode), as a restore or a sync tool does.
      writeFileSync(file, rewrite(original));
      const after = fileIdentity(statSync(file));
      expect(after.ino, what).toBe(identity.ino);
      const read = await readForeignFile(format, file, after, { identity, resume: first.resume! }, { keepState: true });
      expect(read.resumed, what).toBe(false);
      expect(read.notResumed, what).toBe(why);
      expect(read.summary, what).toEqual(fromScratch(file));
    }
  });
});

/** A copy of `bytes` with the byte at `at` changed to another printable one (keeps the JSON shape when inside a string). */
function flip(bytes: Buffer, at: number): Buffer {
  const copy = Buffer.from(bytes);
  const text = copy.toString('latin1');
  // The first letter at or after `at`, so the line stays what it was in shape.
  let i = at;
  while (i < copy.length && !/[a-z]/.test(text[i]!)) i++;
  copy[i] = copy[i] === 0x61 ? 0x62 : 0x61;
  return copy;
}
