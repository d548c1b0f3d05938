/**
 * Other agents' big files through the built server: a Claude Code session made of one 60 MB line
 * (dense in JSON values, as a hostile file, sound lines after it; or a prompt that parses), and a 400 MB Codex `session_index.jsonl` (mostly a sparse hole: one
 * line past the limit, then sound lines) read, then read again after a rename. Every file is read
 * in bounded lines, so the server's peak RSS stays under one bound whatever the files' sizes, and
 * what a read took is given back. Memory is read from the child's /proc status, never timed.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync, appendFileSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SessionCommands, formatSessionReferenceMention, type PreparedReferencedMessage, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { pollUntil } from '../support/lspClient';
import { escapedFaults, startMeasuredServer, type MeasuredServer } from './support/serverProcess';
import { recordFigure } from './support/scale';
import { TemporaryDirectories, treeHash } from './support/stores';

const temporary = new TemporaryDirectories();
const servers: MeasuredServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.kill();
});
afterAll(() => temporary.removeAll());

const MiB = 1024 * 1024;
/** The server's peak resident set, whatever the other agents' files hold (it starts at ≈ 70 MiB). */
const PEAK_RSS_BOUND_BYTES = 512 * MiB;
/** What a second read of the same big file may add to the resident set the first one left. */
const KEPT_BOUND_BYTES = 32 * MiB;
const CWD = '/home/alice/proj';

/** Writes `file` as `head`, then `fill` repeated to `bytes`, then `tail`, 4 MiB at a time. */
function writeLong(file: string, head: string, fill: string, bytes: number, tail: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, head);
    const chunk = Buffer.alloc(4 * MiB - (4 * MiB) % fill.length, fill);
    for (let written = 0; written < bytes; written += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - written));
    writeSync(fd, tail);
  } finally {
    closeSync(fd);
  }
}

const claudeLine = (record: Record<string, unknown>): string => JSON.stringify({ cwd: CWD, timestamp: '2026-12-01T10:00:00.000Z', ...record }) + '\n';
const userLine = (text: string): string => claudeLine({ type: 'user', message: { role: 'user', content: text } });

/** A Claude Code home: a sound session, one whose first line is 60 MB dense in JSON values (sound lines after it), one of one 60 MB prompt. */
function claudeHome(): string {
  const home = temporary.make('claude-home');
  const project = path.join(home, 'projects', '-home-alice-proj');
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'good.jsonl'), userLine('A good session') + claudeLine({ type: 'assistant', message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'Hello' }] } }));
  // Parsed whole, this line's ~20 million empty objects take over a gigabyte.
  const dense = path.join(project, 'dense.jsonl');
  writeLong(dense, '{"type":"user","cwd":"/home/alice/proj","message":{"role":"user","content":[', '{},', 60 * 1000 * 1000, '{}]}}\n');
  appendFileSync(dense, claudeLine({ type: 'custom-title', customTitle: 'Kept after the dense line' }) + userLine('After the dense line'));
  writeLong(path.join(project, 'prompt.jsonl'), '{"type":"user","cwd":"/home/alice/proj","timestamp":"2026-12-01T10:00:00.000Z","message":{"role":"user","content":"Long prompt ', 'x', 60 * 1000 * 1000, '"}}\n');
  return home;
}

/** The server over the agents' homes (no dsh sessions), measured. */
async function startOver(settings: Record<string, unknown>): Promise<MeasuredServer> {
  const emptyRoot = temporary.make('dsh-root');
  const server = await startMeasuredServer(temporary, emptyRoot, { folder: CWD, initializationOptions: settings });
  servers.push(server);
  return server;
}

/** The candidates the server lists once `done` holds (polling, generous deadline). */
function candidatesUntil(server: MeasuredServer, done: (rows: SessionReferenceMentionCandidate[]) => boolean, what: string): Promise<SessionReferenceMentionCandidate[]> {
  return pollUntil(async () => {
    const rows = await server.client.executeCommand<SessionReferenceMentionCandidate[]>(SessionCommands.candidates, { limit: 100_000 });
    return done(rows) ? rows : undefined;
  }, 120_000, what);
}

const rowsOf = (rows: SessionReferenceMentionCandidate[]) => rows.map((row) => [row.sessionId, row.label]).sort();

describe("other agents' big files", () => {
  it('a 60 MB single-line Claude Code session: a line dense in JSON values skipped as damage (the lines after it kept), a 60 MB prompt read; memory bounded', async () => {
    const home = claudeHome();
    const before = treeHash(home);
    const server = await startOver({ agents: ['dsh', 'claude-code'], claudeCodeHome: home });
    const baselineKb = server.rssKb();
    const rows = await candidatesUntil(server, (found) => found.length >= 3, 'the Claude Code sessions listed');
    expect(rowsOf(rows)).toEqual([
      ['dense', 'Kept after the dense line'],
      ['good', 'A good session'],
      ['prompt', `Long prompt ${'x'.repeat(88)}…`],
    ]);
    const prepare = (sessionId: string) =>
      server.client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { text: formatSessionReferenceMention({ sessionId, agent: 'claude-code' }) });
    const good = await prepare('good');
    expect(good.additionalContext!.source.references[0]!.retainedMessages).toBe(2);
    const dense = await prepare('dense');
    expect(dense.additionalContext!.source.references[0]!.retainedMessages).toBe(1);
    expect((dense.additionalContext!.content[0] as { text: string }).text).toContain('After the dense line');
    const prompt = await prepare('prompt');
    expect(prompt.additionalContext!.source.references[0]!.sessionId).toBe('prompt');
    const peakKb = server.peakRssKb();
    recordFigure('foreign-large-files', 'Claude Code 60 MB single lines (dense, prompt): server peak RSS KiB', peakKb);
    recordFigure('foreign-large-files', 'Claude Code 60 MB single lines (dense, prompt): peak RSS growth KiB', peakKb - baselineKb);
    expect(peakKb * 1024).toBeLessThan(PEAK_RSS_BOUND_BYTES);
    expect(escapedFaults(server.stderr())).toEqual([]);
    expect(treeHash(home)).toBe(before);
  }, 120_000);

  it('a 400 MB Codex session_index.jsonl: its titles after a line past the limit kept, memory bounded, and given back after a re-read', async () => {
    const home = temporary.make('codex-home');
    const id = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';
    const rollout = path.join(home, 'sessions', '2026', '12', '01', `rollout-2026-12-01T10-00-00-${id}.jsonl`);
    mkdirSync(path.dirname(rollout), { recursive: true });
    const meta = { timestamp: '2026-12-01T10:00:00.000Z', type: 'session_meta', payload: { id, cwd: CWD, timestamp: '2026-12-01T10:00:00.000Z' } };
    const prompt = { timestamp: '2026-12-01T10:00:01.000Z', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Codex prompt' }] } };
    writeFileSync(rollout, `${JSON.stringify(meta)}\n${JSON.stringify(prompt)}\n`);
    const index = path.join(home, 'session_index.jsonl');
    const rename = (name: string, at: string) => JSON.stringify({ id, thread_name: name, updated_at: at }) + '\n';
    // Names of sessions that are not there (never kept), a rename, a 400 MB hole (one line of NUL bytes), and a later rename.
    const others = Array.from({ length: 100_000 }, (_, i) => JSON.stringify({ id: `other-${i}`, thread_name: `Other ${i} ${'n'.repeat(40)}`, updated_at: '2026-12-01T10:00:00Z' })).join('\n');
    writeFileSync(index, `${others}\n${rename('First name', '2026-12-01T10:01:00Z')}`);
    const fd = openSync(index, 'r+');
    ftruncateSync(fd, 400 * MiB);
    closeSync(fd);
    appendFileSync(index, `\n${rename('Name after the hole', '2026-12-01T10:02:00Z')}`);
    const server = await startOver({ agents: ['dsh', 'codex'], codexHome: home });
    const baselineKb = server.rssKb();
    await candidatesUntil(server, (rows) => rows.some((row) => row.label === 'Name after the hole'), 'the title after the hole');
    const firstPeakKb = server.peakRssKb();
    const afterFirstKb = server.rssKb();
    // A rename appended: the index is read again, whole.
    appendFileSync(index, rename('Renamed again', '2026-12-01T10:03:00Z'));
    const rows = await candidatesUntil(server, (found) => found.some((row) => row.label === 'Renamed again'), 'the index read again');
    expect(rowsOf(rows)).toEqual([[id, 'Renamed again']]);
    const peakKb = server.peakRssKb();
    // A re-read keeps nothing more than the first read did.
    const keptKb = server.rssKb() - afterFirstKb;
    recordFigure('foreign-large-files', 'Codex 400 MB session_index.jsonl: server peak RSS KiB (first read / after a re-read)', `${firstPeakKb} / ${peakKb}`);
    recordFigure('foreign-large-files', 'Codex 400 MB session_index.jsonl: RSS after the first read over the start / kept by the re-read KiB', `${afterFirstKb - baselineKb} / ${keptKb}`);
    expect(peakKb * 1024).toBeLessThan(PEAK_RSS_BOUND_BYTES);
    expect(keptKb * 1024).toBeLessThan(KEPT_BOUND_BYTES);
    expect(escapedFaults(server.stderr())).toEqual([]);
  }, 120_000);
});
