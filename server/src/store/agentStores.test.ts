import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringifyTagSafeJson, type ForeignAgent } from '@dsh-session-ls/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { InMemorySessionStore } from '../testing/inMemorySessionStore';
import { REFERENCED_SESSIONS_PROMPT_PREFIX, REFERENCED_SESSIONS_PROMPT_SUFFIX } from '../resolver/prompt';
import { createSessionReferenceResolver } from '../resolver/resolver';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import type { SessionKey, SessionStore, StoredSessionSummary } from '../resolver/sessionStore';
import type { SessionStoreService } from './service';
import { composeAgentStores, storeServesAgent } from './composite';
import { openForeignStore } from './engine/openForeignStore';
import { loadSqlite } from './engine/databaseSnapshot';

// Stores written by the real CLIs (Claude Code 2.1.197, codex-cli 0.171.0): test/agent-stores/tools/generate.mjs.
const FIXTURES = fileURLToPath(new URL('../../../test/agent-stores/fixtures/', import.meta.url));
const CLAUDE = path.join(FIXTURES, 'claude-code');
const CODEX = path.join(FIXTURES, 'codex');
const CC_RENAMED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const CC_UNTITLED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a02';
const CC_INTERRUPTED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a03';
const CX_RENAMED = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';
const CX_UNTITLED = '01a23b79-474a-78b1-9540-13f1768e6c53';
const CX_INTERRUPTED = '01a23b79-4d19-7aa1-acff-37b66a6a9e67';
// Written by Qwen Code 0.24.4: test/agent-stores/tools/generateQwen.mjs.
const QWEN = path.join(FIXTURES, 'qwen-code');
const QW_CHAT = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01';
const QW_TOOL = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e02';
const QW_COMPRESSED = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e03';

/** Polls until `done` holds, failing after a generous deadline (never a timed assertion). */
async function pollFor(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(what);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function copyOf(dir: string): string {
  const target = mkdtempSync(path.join(os.tmpdir(), 'agent-store-'));
  scratch.push(target);
  cpSync(dir, target, { recursive: true });
  return target;
}

/** Lists until `done` holds (a stale listing is refreshed in the background), failing after a generous deadline. */
async function listedUntil(store: SessionStore, done: (listing: readonly StoredSessionSummary[]) => boolean): Promise<readonly StoredSessionSummary[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const listing = await store.listSessions();
    if (done(listing)) return listing;
    if (Date.now() > deadline) throw new Error('the listing never changed as expected');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The texts of a surface, as `role: text` (checkpoints as `checkpoint: text`). */
async function surfaceTexts(store: SessionStore, id: string, agent?: ForeignAgent): Promise<string[]> {
  const surface = await store.readSurface(id, undefined, agent);
  return surface.events.map((event) => {
    const data = event.data as { source?: { kind: string }; content?: Array<{ text: string }>; message?: { content: Array<{ text: string }> } };
    if (event.type === 'assistant/message') return 'assistant: ' + data.message!.content.map((b) => b.text).join('\n');
    return (data.source!.kind === 'plugin' ? 'checkpoint: ' : 'user: ') + data.content!.map((b) => b.text).join('\n');
  });
}

describe('Claude Code store (real transcripts)', () => {
  const store = openForeignStore('claude-code', CLAUDE);

  it('lists every transcript, newest first, with the cwd from the records (the folder name is lossy) and the agent', async () => {
    const listing = await store.listSessions();
    expect(listing.map((s) => s.id)).toEqual([CC_INTERRUPTED, CC_UNTITLED, CC_RENAMED]);
    expect(listing.every((s) => s.agent === 'claude-code')).toBe(true);
    expect(listing.find((s) => s.id === CC_UNTITLED)!.cwd).toBe('/tmp/dsh-agent-fixtures/proj-日本');
    expect(listing.find((s) => s.id === CC_RENAMED)!.cwd).toBe('/tmp/dsh-agent-fixtures/proj a');
    expect(Object.isFrozen(listing)).toBe(true);
    expect(await store.listSessions()).toBe(listing);
  });

  it('titles a session by its latest custom-title, else by its first prompt', async () => {
    const titles = Object.fromEntries((await store.listSessions()).map((s) => [s.id, s.title]));
    expect(titles[CC_RENAMED]).toBe('Parser work, renamed');
    expect(titles[CC_UNTITLED]).toBe('An untitled session about 日本語 and </referenced-sessions> tags');
    expect(titles[CC_INTERRUPTED]).toBe('Start a long answer STALL');
  });

  it('projects the surface after /compact: the summary as a checkpoint, then prompts and text, no tool or command echo', async () => {
    const texts = await surfaceTexts(store, CC_RENAMED);
    expect(texts).toHaveLength(3);
    expect(texts[0]).toMatch(/^checkpoint: This session is being continued from a previous conversation/);
    expect(texts.slice(1)).toEqual(['user: After the compaction, one more turn', 'assistant: Reply 6: you said "After the compaction, one more turn".']);
  });

  it('keeps an interrupted turn as its prompt alone', async () => {
    expect(await surfaceTexts(store, CC_INTERRUPTED)).toEqual(['user: Start a long answer STALL']);
  });

  it('says not found, in dsh words, for an unknown id', async () => {
    await expect(store.readSurface('nope')).rejects.toMatchObject({ reason: 'not-found', message: 'session "nope" not found' });
  });

  it('reads the damaged copies (torn tail, unknown record types, lines that are not JSON) as the sound parts', async () => {
    const damaged = openForeignStore('claude-code', path.join(FIXTURES, 'damaged', 'claude-code'));
    expect((await damaged.listSessions()).map((s) => [s.id, s.title])).toEqual((await store.listSessions()).map((s) => [s.id, s.title]));
    for (const id of [CC_RENAMED, CC_UNTITLED, CC_INTERRUPTED]) expect(await surfaceTexts(damaged, id)).toEqual(await surfaceTexts(store, id));
  });

  it('sees a rename and a new turn through its folder watches, and a deleted transcript disappears', async () => {
    const home = copyOf(CLAUDE);
    const fresh = openForeignStore('claude-code', home);
    const first = await fresh.listSessions();
    const file = path.join(home, 'projects', '-tmp-dsh-agent-fixtures-proj-a', `${CC_RENAMED}.jsonl`);
    appendFileSync(file, JSON.stringify({ type: 'custom-title', customTitle: 'Third name', sessionId: CC_RENAMED }) + '\n');
    const second = await listedUntil(fresh, (listing) => listing !== first);
    expect(second.find((s) => s.id === CC_RENAMED)!.title).toBe('Third name');
    rmSync(file);
    await listedUntil(fresh, (listing) => !listing.some((s) => s.id === CC_RENAMED));
    fresh.dispose();
  });
});

describe('Codex store (real rollouts)', () => {
  const store = openForeignStore('codex', CODEX);

  it('lists every rollout newest first, titled by the latest thread_name of session_index.jsonl, else the first prompt', async () => {
    const listing = await store.listSessions();
    expect(listing.map((s) => [s.id, s.title, s.agent])).toEqual([
      [CX_INTERRUPTED, 'Start a long answer STALL', 'codex'],
      [CX_UNTITLED, 'An untitled codex session about 日本語', 'codex'],
      [CX_RENAMED, 'Lexer work, renamed', 'codex'],
    ]);
    expect(listing[1]!.cwd).toBe('/tmp/dsh-agent-fixtures/proj-日本');
  });

  it('projects the surface after auto-compaction: the kept prompts, the summary as a checkpoint, then the new turn', async () => {
    const texts = await surfaceTexts(store, CX_RENAMED);
    expect(texts.slice(0, 3)).toEqual([
      'user: Hello codex, first turn about the lexer',
      'user: Second turn: TOOL please run a command',
      'user: Third turn: BIG answer please',
    ]);
    expect(texts[3]).toMatch(/^checkpoint: Another language model started to solve this problem[\s\S]*Summary for the next turn/);
    expect(texts.slice(4)).toEqual(['user: Fourth turn after the compaction', 'assistant: Reply 20: you said "Fourth turn after the compaction".']);
  });

  it('drops injected context (environment, turn_aborted) and keeps an interrupted prompt', async () => {
    expect(await surfaceTexts(store, CX_INTERRUPTED)).toEqual(['user: Start a long answer STALL']);
  });

  it('falls back to the first prompt without session_index.jsonl, and reads damaged rollouts as their sound parts', async () => {
    const damaged = openForeignStore('codex', path.join(FIXTURES, 'damaged', 'codex'));
    const listing = await damaged.listSessions();
    expect(listing.find((s) => s.id === CX_RENAMED)!.title).toBe('Hello codex, first turn about the lexer');
    for (const id of [CX_RENAMED, CX_UNTITLED, CX_INTERRUPTED]) expect(await surfaceTexts(damaged, id)).toEqual(await surfaceTexts(store, id));
  });

  it('sees a rename written to session_index.jsonl through the watch on the home', async () => {
    const home = copyOf(CODEX);
    const fresh = openForeignStore('codex', home);
    await fresh.listSessions();
    appendFileSync(path.join(home, 'session_index.jsonl'), JSON.stringify({ id: CX_UNTITLED, thread_name: 'Named later', updated_at: '2027-01-01T00:00:00Z' }) + '\n');
    await listedUntil(fresh, (listing) => listing.find((s) => s.id === CX_UNTITLED)?.title === 'Named later');
    fresh.dispose();
  });

  it('skips a file with no session in it, and a missing home lists nothing', async () => {
    const home = copyOf(CODEX);
    const day = path.join(home, 'sessions', '2026', '12', '03');
    writeFileSync(path.join(day, 'rollout-2026-12-03T11-00-00-00000000-0000-0000-0000-000000000000.jsonl'), '');
    expect(await openForeignStore('codex', home).listSessions()).toHaveLength(3);
    expect(await openForeignStore('codex', path.join(home, 'missing')).listSessions()).toEqual([]);
    expect(readdirSync(day)).toHaveLength(4);
  });
});

/** What Qwen Code's own `qwen sessions list --json` showed for the fixture homes (recorded by the generator). */
interface QwenListed {
  cwd: string;
  sessionId: string;
  startTime: string;
  prompt: string;
  customTitle: string | null;
}
const QWEN_LISTED = JSON.parse(readFileSync(path.join(FIXTURES, 'qwen-code-sessions-list.json'), 'utf8')) as { home: QwenListed[]; damaged: QwenListed[] };

/** Rows as Qwen Code's list shows them: id, cwd, start and label (its title, else its first prompt). */
function qwenRows(listed: readonly QwenListed[]) {
  return listed.map((row) => ({ id: row.sessionId, cwd: row.cwd, createdAt: Date.parse(row.startTime), title: row.customTitle ?? row.prompt, agent: 'qwen-code' }));
}

/** Every file under `dir` with its bytes, to check a store left it as it was. */
function treeBytes(dir: string): Map<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return new Map(files.map((entry) => path.join(entry.parentPath, entry.name)).map((file) => [file, readFileSync(file, 'base64')]));
}

describe('Qwen Code store (real chat records)', () => {
  const store = openForeignStore('qwen-code', QWEN);
  const chatsOf = (home: string, cwdFolder: string) => path.join(home, 'projects', cwdFolder, 'chats');

  it("lists every session newest first with the id, cwd, start and label Qwen Code's own session list shows", async () => {
    const listing = await store.listSessions();
    expect(listing.map((s) => s.id)).toEqual([QW_COMPRESSED, QW_CHAT, QW_TOOL]);
    expect([...listing].sort((a, b) => a.id.localeCompare(b.id))).toEqual(qwenRows(QWEN_LISTED.home));
    // The cwd comes from the records: the folder name is lossy (a space and CJK characters both became "-").
    expect(listing.find((s) => s.id === QW_CHAT)!.cwd).toBe('/tmp/dsh-agent-fixtures/proj 日本 q');
    expect(readdirSync(path.join(QWEN, 'projects'))).toContain('-tmp-dsh-agent-fixtures-proj----q');
  });

  it('labels a session by its last /rename, else by its first prompt cut to 200 code points and "..."', async () => {
    const titles = Object.fromEntries((await store.listSessions()).map((s) => [s.id, s.title]));
    expect(titles[QW_TOOL]).toBe('Qwen tool work, renamed');
    expect(titles[QW_COMPRESSED]).toBe('日本語のテキストについて話しましょう: a session to compress');
    expect(titles[QW_CHAT]!.endsWith('Words...')).toBe(true);
    expect([...titles[QW_CHAT]!.slice(0, -3)]).toHaveLength(200);
  });

  it('projects what a resume gives the model: prompts and answer text of both processes, no tool call or tool output', async () => {
    expect(await surfaceTexts(store, QW_TOOL)).toEqual([
      'user: First turn: TOOL please run a command',
      'assistant: The tool ran; its output was: fixture-tool-output.',
      'user: Second turn, another process: READ the notes file',
      'assistant: The tool ran; its output was: fixture-tool-output.',
      'user: After the renames, one more turn',
      'assistant: Reply 5: you said "After the renames, one more turn".',
    ]);
    const raw = readFileSync(path.join(chatsOf(QWEN, '-tmp-dsh-agent-fixtures-proj-a'), `${QW_TOOL}.jsonl`), 'utf8');
    // The records hold the shell call, its output and the file read: none of it is on the surface.
    for (const recorded of ['"functionCall"', 'Command: echo fixture-tool-output', 'fixture notes: 日本語のメモ']) expect(raw).toContain(recorded);
    const surface = JSON.stringify((await store.readSurface(QW_TOOL)).events);
    for (const dropped of ['functionCall', 'Command: echo', 'fixture notes', 'Session renamed']) expect(surface).not.toContain(dropped);
  });

  it('after /compress, starts from the summary (a checkpoint) and keeps the CJK text; the whole log keeps every turn', async () => {
    const texts = await surfaceTexts(store, QW_COMPRESSED);
    expect(texts[0]).toMatch(/^checkpoint: <state_snapshot>[\s\S]*日本語のテキスト[\s\S]*Resume the prior task using the summary above/);
    expect(texts[0]).not.toContain('<analysis>');
    expect(texts.slice(1)).toEqual([
      'assistant: Got it. Thanks for the additional context!',
      'user: After the compression, one more turn 最後',
      'assistant: Reply 26: you said "After the compression, one more turn 最後".',
    ]);
    const log = (await store.readLog(QW_COMPRESSED)).events;
    expect(log.map((event) => (typeof event.surfaceOp === 'string' ? event.surfaceOp : event.surfaceOp?.op))).toEqual(['append', 'append', 'append', 'append', 'replace', 'append', 'append']);
    expect(JSON.stringify(log[2]!.data)).toContain('第二のターン: the second turn, 中文也可以');
  });

  it('follows the chain a resume walks: a turn on a dead branch (a rewind) is not resumed, a fresh branch is', async () => {
    const home = copyOf(QWEN);
    const file = path.join(chatsOf(home, '-tmp-dsh-agent-fixtures-proj----q'), `${QW_CHAT}.jsonl`);
    const records = readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const firstAnswer = records.find((record) => record.type === 'assistant')!;
    // A new prompt whose parent is the first answer: "Its second turn" is now on a dead branch.
    const rewound = { ...records[0], uuid: 'f0000000-0000-4000-8000-000000000001', parentUuid: firstAnswer.uuid, message: { role: 'user', parts: [{ text: 'Rewound: a different second turn' }] } };
    appendFileSync(file, JSON.stringify(rewound) + '\n');
    const fresh = openForeignStore('qwen-code', home);
    const texts = await surfaceTexts(fresh, QW_CHAT);
    expect(texts.slice(1)).toEqual([expect.stringMatching(/^assistant: Reply 9:/), 'user: Rewound: a different second turn']);
    fresh.dispose();
  });

  it("reads the damaged copies (torn tail, unknown records, lines that are not JSON) as Qwen Code lists them, and their sound parts", async () => {
    const damaged = openForeignStore('qwen-code', path.join(FIXTURES, 'damaged', 'qwen-code'));
    const listing = await damaged.listSessions();
    expect([...listing].sort((a, b) => a.id.localeCompare(b.id))).toEqual(qwenRows(QWEN_LISTED.damaged));
    for (const id of [QW_CHAT, QW_TOOL, QW_COMPRESSED]) expect(await surfaceTexts(damaged, id)).toEqual(await surfaceTexts(store, id));
  });

  it('skips, as Qwen Code does, a file with no record in its first 10 lines, archived sessions and other files, and never writes into the home', async () => {
    const home = copyOf(QWEN);
    const chats = chatsOf(home, '-tmp-dsh-agent-fixtures-proj-a');
    const garbageId = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5eff';
    const sound = readFileSync(path.join(chats, `${QW_TOOL}.jsonl`), 'utf8').replaceAll(QW_TOOL, garbageId);
    writeFileSync(path.join(chats, `${garbageId}.jsonl`), 'not json\n'.repeat(10) + sound);
    writeFileSync(path.join(chats, `${QW_TOOL}.ledger.jsonl`), sound);
    // An archived session (Qwen Code's list leaves those out) and a subagent's transcript.
    const archivedId = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5eaa';
    mkdirSync(path.join(chats, 'archive'));
    writeFileSync(path.join(chats, 'archive', `${archivedId}.jsonl`), sound.replaceAll(garbageId, archivedId));
    mkdirSync(path.join(home, 'projects', '-tmp-dsh-agent-fixtures-proj-a', 'subagents', QW_TOOL), { recursive: true });
    writeFileSync(path.join(home, 'projects', '-tmp-dsh-agent-fixtures-proj-a', 'subagents', QW_TOOL, 'agent-explore.jsonl'), sound);
    const before = treeBytes(home);
    const logged: string[] = [];
    const fresh = openForeignStore('qwen-code', home, (message) => logged.push(message));
    const listing = await fresh.listSessions();
    expect(listing.map((s) => s.id).sort()).toEqual([QW_CHAT, QW_TOOL, QW_COMPRESSED]);
    expect(logged.some((message) => message.includes(garbageId))).toBe(true);
    for (const session of listing) await fresh.readSurface(session.id);
    await fresh.readLog(QW_TOOL);
    expect(treeBytes(home)).toEqual(before);
    fresh.dispose();
  });

  it('reads records of every wrong shape as what is sound in them, never throwing: cycles, bad parts, bad compressions', async () => {
    const id = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e77';
    const base = { sessionId: id, cwd: '/w', timestamp: '2026-01-01T00:00:00Z' };
    const lines = [
      { ...base, uuid: 'a', parentUuid: null, type: 'user', message: { role: 'user', parts: [{ text: 'first' }, null, 5, { text: 5 }, { thought: true, text: 'hidden' }] } },
      { ...base, uuid: 'b', parentUuid: 'a', type: 'assistant', message: 5 },
      { ...base, uuid: 'c', parentUuid: 'b', type: 'assistant', message: { role: 'model', parts: 'not an array' } },
      { ...base, uuid: 'd', parentUuid: 'c', type: 'system', subtype: 'chat_compression', systemPayload: { compressedHistory: 'not an array' } },
      { ...base, uuid: 'e', parentUuid: 'd', type: 'system', subtype: 'chat_compression', systemPayload: { compressedHistory: [null, 7, { role: 'user', parts: 'x' }, { role: 'model', parts: [{ text: 'kept' }] }] } },
      { ...base, uuid: 'f', parentUuid: 'e', type: 'system', subtype: 'slash_command', systemPayload: { phase: 'result', outputHistoryItems: 'x' } },
      { ...base, uuid: 'g', parentUuid: 'g', type: 'user', message: { role: 'user', parts: [{ text: 'a cycle to itself' }] } },
      { ...base, uuid: 'h', parentUuid: 'missing', type: 'assistant', message: { role: 'model', parts: [{ text: 'after a gap' }] } },
      { ...base, uuid: 'i', parentUuid: 'h', type: 'system', subtype: 'custom_title', systemPayload: { customTitle: 42 } },
      { uuid: 5, parentUuid: 'i', type: 'user' },
    ];
    const home = mkdtempSync(path.join(os.tmpdir(), 'agent-store-'));
    scratch.push(home);
    const chats = path.join(home, 'projects', '-w', 'chats');
    mkdirSync(chats, { recursive: true });
    writeFileSync(path.join(chats, `${id}.jsonl`), lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    const fresh = openForeignStore('qwen-code', home);
    expect(await fresh.listSessions()).toMatchObject([{ id, cwd: '/w', title: 'first' }]);
    // The walk stops where a parent is missing, as Qwen Code's resume does.
    expect(await surfaceTexts(fresh, id)).toEqual(['assistant: after a gap']);
    expect((await fresh.readLog(id)).events).toHaveLength(1);
    // Cut at the cycle instead: the record that is its own parent is read once.
    writeFileSync(path.join(chats, `${id}.jsonl`), lines.slice(0, 7).map((line) => JSON.stringify(line)).join('\n') + '\n');
    const cycle = openForeignStore('qwen-code', home);
    expect(await surfaceTexts(cycle, id)).toEqual(['user: a cycle to itself']);
    // Up to the compressions: the last one's kept history, its non-messages skipped.
    writeFileSync(path.join(chats, `${id}.jsonl`), lines.slice(0, 6).map((line) => JSON.stringify(line)).join('\n') + '\n');
    expect(await surfaceTexts(openForeignStore('qwen-code', home), id)).toEqual(['assistant: kept']);
  });

  it('sees a rename and a deleted session through its folder watches', async () => {
    const home = copyOf(QWEN);
    const fresh = openForeignStore('qwen-code', home);
    const first = await fresh.listSessions();
    const file = path.join(chatsOf(home, '-tmp-dsh-agent-fixtures-proj----q'), `${QW_CHAT}.jsonl`);
    const head = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!) as Record<string, unknown>;
    const rename = { ...head, uuid: 'f0000000-0000-4000-8000-000000000002', type: 'system', subtype: 'custom_title', message: undefined, systemPayload: { customTitle: 'Named later', titleSource: 'manual' } };
    appendFileSync(file, JSON.stringify(rename) + '\n');
    const second = await listedUntil(fresh, (listing) => listing !== first);
    expect(second.find((s) => s.id === QW_CHAT)!.title).toBe('Named later');
    rmSync(file);
    await listedUntil(fresh, (listing) => !listing.some((s) => s.id === QW_CHAT));
    fresh.dispose();
  });

  it('prepares a mention into one tag-safe context naming its agent and cwd, the compression summary kept within the budget', async () => {
    const resolver = createSessionReferenceResolver(composeAgentStores(dshService(), [store]), { maxReferenceBytes: 700 });
    const prepared = await resolver.prepare(undefined, [], [
      { sessionId: QW_CHAT, label: 'Q', agent: 'qwen-code' },
      { sessionId: QW_COMPRESSED, agent: 'qwen-code' },
    ]);
    const text = (prepared.additionalContext!.content[0] as { text: string }).text;
    // The chat's prompt holds `</referenced-sessions>`: only the real closing tag ends the block.
    expect(text.match(/<\/referenced-sessions>/g)).toHaveLength(1);
    const data = JSON.parse(text.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, -REFERENCED_SESSIONS_PROMPT_SUFFIX.length)) as Array<Record<string, unknown>>;
    expect(data[0]).toMatchObject({ agent: 'qwen-code', sessionId: QW_CHAT, label: 'Q', cwd: '/tmp/dsh-agent-fixtures/proj 日本 q' });
    const [, compressed] = prepared.additionalContext!.source.references;
    // Older messages give way to the budget; the compression summary (a checkpoint) never does.
    expect(compressed).toMatchObject({ agent: 'qwen-code', compacted: true });
    expect(compressed!.omittedMessages).toBeGreaterThan(0);
    expect(text).toContain('overall_goal>Generate fixture sessions: a tool call, a file read');
  });
});

/** A dsh store service over an in-memory store (only listing and surfaces matter here). */
function dshService(): SessionStoreService {
  const log = new SessionLogBuilder();
  log.user('dsh prompt');
  log.assistant('dsh answer');
  const memory = new InMemorySessionStore([
    { header: { id: 'dsh-new', cwd: '/tmp/dsh-agent-fixtures/proj a', createdAt: 1796294200000 }, events: log.events() },
    { header: { id: 'dsh-old', createdAt: 1 }, events: log.events() },
  ]);
  return {
    root: '/dsh',
    status: () => ({ indexing: false, indexed: 2, discovered: 2, rootExists: true }),
    onDidChange: () => ({ dispose() {} }),
    onDidChangeContent: () => ({ dispose() {} }),
    onProblem: () => ({ dispose() {} }),
    onStatus: () => ({ dispose() {} }),
    whenIndexed: async () => undefined,
    dispose() {},
    listSessions: (signal) => memory.listSessions(signal),
    readSurface: (id, signal) => memory.readSurface(id, signal),
  };
}

describe('composite store', () => {
  const claude = openForeignStore('claude-code', CLAUDE);
  const codex = openForeignStore('codex', CODEX);

  it('with no other agent, is the dsh listing itself', async () => {
    const dsh = dshService();
    const composite = composeAgentStores(dsh, []);
    expect(await composite.listSessions()).toBe(await dsh.listSessions());
    expect(storeServesAgent(composite, 'codex')).toBe(false);
  });

  it('merges the enabled stores in store order and ranks them together by cwd affinity', async () => {
    const composite = composeAgentStores(dshService(), [claude, codex]);
    const listing = await composite.listSessions();
    const times = listing.map((s) => s.createdAt);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(listing.map((s) => s.agent ?? 'dsh')).toEqual(['dsh', 'codex', 'codex', 'codex', 'claude-code', 'claude-code', 'claude-code', 'dsh']);
    const resolver = createSessionReferenceResolver(composite);
    const candidates = await resolver.listCandidates({ cwd: '/tmp/dsh-agent-fixtures/proj a' });
    expect(candidates.slice(0, 3).map((c) => [c.sessionId, c.agent])).toEqual([
      ['dsh-new', undefined],
      [CX_RENAMED, 'codex'],
      [CC_RENAMED, 'claude-code'],
    ]);
    expect(Object.keys(candidates[0]!)).toEqual(['sessionId', 'label', 'cwd', 'createdAt']);
    expect(candidates[1]).toMatchObject({ label: 'Lexer work, renamed', agent: 'codex' });
    const mentions = await resolver.listMentionCandidates({ cwd: '/tmp/dsh-agent-fixtures/proj a' }, 'work');
    expect(mentions.map((m) => m.mention)).toEqual([
      '@[Lexer work, renamed](codex-session:IjAxYTIzYjc5LTNlN2QtNzMwMC05MWU4LTRiNDI1ZmJiYjQ0YSI)',
      '@[Parser work, renamed](claude-session:IjdiMGU0YTUyLTNjMWQtNGY3ZS05YTYxLTBjNWUyZjFkOGEwMSI)',
    ]);
  });

  it('tells a listener of the composite about a change of the dsh store and of every foreign store, until disposed', async () => {
    const dshListeners = new Set<() => void>();
    const dsh: SessionStoreService = { ...dshService(), onDidChange: (listener) => (dshListeners.add(listener), { dispose: () => dshListeners.delete(listener) }) };
    const home = copyOf(CLAUDE);
    const claudeStore = openForeignStore('claude-code', home);
    const codexStore = openForeignStore('codex', copyOf(CODEX));
    const composite = composeAgentStores(dsh, [claudeStore, codexStore]);
    let fired = 0;
    const subscription = composite.onDidChange(() => fired++);
    expect(await composite.listSessions()).toHaveLength(8);
    [...dshListeners].forEach((listener) => listener());
    expect(fired).toBe(1);
    // A Claude Code session written while listed: the composite's listener hears it.
    const source = readdirSync(path.join(home, 'projects'), { recursive: true, encoding: 'utf8' }).find((name) => name.endsWith(`${CC_UNTITLED}.jsonl`))!;
    const newId = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8abc';
    writeFileSync(path.join(home, 'projects', path.dirname(source), `${newId}.jsonl`), readFileSync(path.join(home, 'projects', source), 'utf8').replaceAll(CC_UNTITLED, newId));
    await pollFor(() => fired >= 2, 'the new Claude Code session was never told');
    expect((await composite.listSessions()).map((s) => s.id)).toContain(newId);
    subscription.dispose();
    expect(dshListeners.size).toBe(0);
    composite.dispose();
  });

  it('tells a content listener of the composite which sessions of dsh and of a foreign store were re-read, until disposed', async () => {
    const dshListeners = new Set<(sessions: readonly SessionKey[]) => void>();
    const onDidChangeContent = (listener: (sessions: readonly SessionKey[]) => void) => (dshListeners.add(listener), { dispose: () => dshListeners.delete(listener) });
    const dsh: SessionStoreService = { ...dshService(), onDidChangeContent };
    const home = copyOf(CLAUDE);
    const claudeStore = openForeignStore('claude-code', home);
    const composite = composeAgentStores(dsh, [claudeStore]);
    const told: string[] = [];
    let fired = 0;
    composite.onDidChange(() => fired++);
    const subscription = composite.onDidChangeContent((sessions) => told.push(...sessions.map((key) => `${key.agent ?? 'dsh'}:${key.id}`)));
    const listed = await composite.listSessions();
    [...dshListeners].forEach((listener) => listener([{ id: 'dsh-new' }]));
    expect(told).toEqual(['dsh:dsh-new']);
    // A Claude Code session appended to (no row changes): the composite's content listener hears it.
    const source = readdirSync(path.join(home, 'projects'), { recursive: true, encoding: 'utf8' }).find((name) => name.endsWith(`${CC_UNTITLED}.jsonl`))!;
    appendFileSync(path.join(home, 'projects', source), JSON.stringify({ type: 'unknown-record-type' }) + '\n');
    await pollFor(() => told.length >= 2, 'the append was never told');
    expect(told).toEqual(['dsh:dsh-new', `claude-code:${CC_UNTITLED}`]);
    expect(await composite.listSessions()).toBe(listed);
    expect(fired).toBe(0);
    subscription.dispose();
    expect(dshListeners.size).toBe(0);
    composite.dispose();
  });

  it('tells no content change of dsh sessions while they are not listed', () => {
    const dshListeners = new Set<unknown>();
    const dsh: SessionStoreService = { ...dshService(), onDidChangeContent: (listener) => (dshListeners.add(listener), { dispose: () => dshListeners.delete(listener) }) };
    const composite = composeAgentStores(dsh, [openForeignStore('claude-code', copyOf(CLAUDE))], { dshListed: false });
    composite.onDidChangeContent(() => undefined);
    expect(dshListeners.size).toBe(0);
    composite.dispose();
  });

  it('prepares a mix into ONE snapshot; foreign sources name their agent first, the dsh source stays byte for byte', async () => {
    const composite = composeAgentStores(dshService(), [claude, codex]);
    const resolver = createSessionReferenceResolver(composite);
    const dshOnly = await createSessionReferenceResolver(dshService()).prepare(undefined, [], [{ sessionId: 'dsh-new', label: 'D' }]);
    const mixed = await resolver.prepare(undefined, [], [
      { sessionId: 'dsh-new', label: 'D' },
      { sessionId: CC_UNTITLED, label: 'C', agent: 'claude-code' },
      { sessionId: CX_RENAMED, label: 'X', agent: 'codex' },
    ]);
    const text = (mixed.additionalContext!.content[0] as { text: string }).text;
    expect(text.startsWith(REFERENCED_SESSIONS_PROMPT_PREFIX) && text.endsWith(REFERENCED_SESSIONS_PROMPT_SUFFIX)).toBe(true);
    const data = JSON.parse(text.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, -REFERENCED_SESSIONS_PROMPT_SUFFIX.length)) as Array<Record<string, unknown>>;
    const dshText = (dshOnly.additionalContext!.content[0] as { text: string }).text;
    // The dsh entry is the very same bytes as when dsh alone prepares it.
    expect(stringifyTagSafeJson([data[0]])).toBe(dshText.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, -REFERENCED_SESSIONS_PROMPT_SUFFIX.length));
    expect(Object.keys(data[1]!)).toEqual(['agent', 'sessionId', 'label', 'cwd', 'capturedThroughSeq', 'conversation']);
    expect(data[1]).toMatchObject({ agent: 'claude-code', sessionId: CC_UNTITLED, label: 'C', cwd: '/tmp/dsh-agent-fixtures/proj-日本' });
    expect(data[2]).toMatchObject({ agent: 'codex', sessionId: CX_RENAMED });
    // Tag safety: the Claude prompt's own closing tag never ends the block.
    expect(text.match(/<\/referenced-sessions>/g)).toHaveLength(1);
    expect(mixed.additionalContext!.source.references.map((r) => r.agent)).toEqual([undefined, 'claude-code', 'codex']);
    expect(Object.keys(mixed.additionalContext!.source.references[0]!)).not.toContain('agent');
    expect(mixed.additionalContext!.source.references[2]).toMatchObject({ compacted: true, retainedMessages: 6 });
  });

  it('keeps the per-source byte budget, never dropping a compaction checkpoint', async () => {
    const resolver = createSessionReferenceResolver(composeAgentStores(dshService(), [codex]), { maxReferenceBytes: 900 });
    const prepared = await resolver.prepare(undefined, [], [{ sessionId: CX_RENAMED, agent: 'codex' }]);
    const record = prepared.additionalContext!.source.references[0]!;
    expect(record.omittedMessages).toBeGreaterThan(0);
    expect((prepared.additionalContext!.content[0] as { text: string }).text).toContain('Another language model');
  });

  it('fails READ_FAILED for an agent that is not enabled, and a dsh id is not a foreign one', async () => {
    const resolver = createSessionReferenceResolver(composeAgentStores(dshService(), [claude]));
    await expect(resolver.prepare(undefined, [], [{ sessionId: CX_RENAMED, agent: 'codex' }])).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_READ_FAILED',
    });
    await expect(resolver.prepare(undefined, [], [{ sessionId: 'dsh-new', agent: 'claude-code' }])).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_READ_FAILED',
      message: 'failed to read referenced session: session "dsh-new" not found',
    });
    await expect(resolver.prepare(undefined, [], [{ sessionId: 'x', agent: 'dsh' }])).rejects.toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
  });

  it('does not treat a foreign session with the target id as the target', async () => {
    const resolver = createSessionReferenceResolver(composeAgentStores(dshService(), [claude]));
    const prepared = await resolver.prepare({ sessionId: CC_UNTITLED }, [], [{ sessionId: CC_UNTITLED, agent: 'claude-code' }]);
    expect(prepared.additionalContext!.source.references).toHaveLength(1);
    const candidates = await resolver.listCandidates({ sessionId: CC_UNTITLED }, '', 50);
    expect(candidates.map((c) => c.sessionId)).toContain(CC_UNTITLED);
    expect(readFileSync(path.join(FIXTURES, 'GENERATED.txt'), 'utf8')).toContain('codex-cli 0.171.0');
  });
});

describe('Codex compressed rollouts (.jsonl.zst, compressed by the zstd CLI as Codex rewrites idle ones)', () => {
  const CODEX_ZST = path.join(FIXTURES, 'codex-zst');
  const plain = openForeignStore('codex', CODEX);

  it('lists and reads them exactly as the plain rollouts', async () => {
    const compressed = openForeignStore('codex', CODEX_ZST);
    const listing = await compressed.listSessions();
    expect(listing.length).toBe(3);
    expect(listing).toEqual(await plain.listSessions());
    for (const id of [CX_RENAMED, CX_UNTITLED, CX_INTERRUPTED]) {
      expect(await compressed.readSurface(id)).toEqual(await plain.readSurface(id));
      expect(await compressed.readLog(id)).toEqual(await plain.readLog(id));
    }
  });

  it('never fails on a torn or garbage .zst, and lists an id once when a rollout and its compressed copy both exist', async () => {
    const home = copyOf(CODEX_ZST);
    const day = path.join(home, 'sessions', '2026', '12', '03');
    const zst = (id: string) => path.join(day, readdirSync(day).find((name) => name.includes(id))!);
    // Torn: the file cut mid-frame (a writer still writing, or a crash).
    const torn = readFileSync(zst(CX_UNTITLED));
    writeFileSync(zst(CX_UNTITLED), torn.subarray(0, Math.floor(torn.length / 2)));
    // Garbage under a rollout's name.
    writeFileSync(zst(CX_INTERRUPTED), 'not zstd at all\n');
    // The plain rollout next to its compressed copy.
    cpSync(path.join(CODEX, 'sessions', '2026', '12', '03', readdirSync(path.join(CODEX, 'sessions', '2026', '12', '03')).find((n) => n.includes(CX_RENAMED))!), path.join(day, path.basename(zst(CX_RENAMED), '.zst')));
    const logged: string[] = [];
    const store = openForeignStore('codex', home, (message) => logged.push(message));
    const listing = await store.listSessions();
    expect(listing.filter((s) => s.id === CX_RENAMED)).toHaveLength(1);
    expect(listing.find((s) => s.id === CX_RENAMED)!.title).toBe('Lexer work, renamed');
    // Garbage is not a session: skipped and logged once.
    expect(listing.some((s) => s.id === CX_INTERRUPTED)).toBe(false);
    expect(logged.some((message) => message.includes(CX_INTERRUPTED))).toBe(true);
    // Torn inside its one block (zstd's blocks hold 128 KiB of plaintext), the rollout has no whole
    // record yet: not listed, and reading it is not-found, never a crash.
    expect(listing.some((s) => s.id === CX_UNTITLED)).toBe(false);
    await expect(store.readSurface(CX_UNTITLED)).rejects.toMatchObject({ name: 'SessionReadError', reason: 'not-found' });
  });
});

// opencode's database, written by opencode 1.18.33: test/agent-stores/tools/generateOpencode.mjs. Its rows
// are in opencode.db-wal (never checkpointed), as opencode leaves them.
const OPENCODE = path.join(FIXTURES, 'opencode');
const OC_CHAT = 'ses_db528adf7ffesWQ0nGNsMTymth';
const OC_TOOLS = 'ses_db5289112ffeePBiDfPO1FfEZw';
const OC_COMPACTED = 'ses_db52854d9ffe6CloKsBV65ABRm';
const OC_CWD = '/tmp/dsh-opencode-fixtures/proj ü 日本';
const HAS_SQLITE = loadSqlite() !== undefined;

/** Every file of a folder: name → bytes and modification time (what reading must leave as it was). */
function folderState(dir: string): Record<string, { bytes: string; mtimeMs: number }> {
  return Object.fromEntries(
    readdirSync(dir).map((name) => [name, { bytes: readFileSync(path.join(dir, name)).toString('base64'), mtimeMs: statSync(path.join(dir, name)).mtimeMs }]),
  );
}

describe.skipIf(!HAS_SQLITE)('opencode store (real database; needs node:sqlite, Node 22.13 or newer)', () => {
  it('lists every session with its title as opencode session list shows it, its cwd and its start', async () => {
    const store = openForeignStore('opencode', OPENCODE);
    const listing = await store.listSessions();
    expect(listing.map((s) => [s.id, s.title, s.cwd, s.agent])).toEqual([
      [OC_COMPACTED, '圧縮された 日本語 session', OC_CWD, 'opencode'],
      [OC_TOOLS, 'Tool and file read', OC_CWD, 'opencode'],
      [OC_CHAT, 'Fixture title: hello, a short chat', OC_CWD, 'opencode'],
    ]);
    expect(listing[0]!.createdAt).toBe(1796551977766);
    store.dispose();
  });

  it('reads the rows still in the write-ahead log exactly as the checkpointed database', async () => {
    const live = openForeignStore('opencode', OPENCODE);
    const checkpointed = openForeignStore('opencode', path.join(FIXTURES, 'opencode-checkpointed'));
    expect(await live.listSessions()).toEqual(await checkpointed.listSessions());
    for (const id of [OC_CHAT, OC_TOOLS, OC_COMPACTED]) expect(await surfaceTexts(live, id)).toEqual(await surfaceTexts(checkpointed, id));
    live.dispose();
    checkpointed.dispose();
  });

  it('projects what opencode resumes: after a compaction its summary as a checkpoint, prompts and answers, no tool output', async () => {
    const store = openForeignStore('opencode', OPENCODE);
    expect(await surfaceTexts(store, OC_COMPACTED)).toEqual([
      'checkpoint: Summary: the user asked about fixtures, 日本語のテキストと圧縮. Continue from here.',
      'user: 圧縮の後の質問',
      'assistant: Reply 14: you said "圧縮の後の質問".',
    ]);
    expect(await surfaceTexts(store, OC_TOOLS)).toEqual([
      'user: please run TOOL now',
      'assistant: The tool ran; its output began: fixture-tool-output\n',
      `user: READ "${OC_CWD}/notes.txt"`,
      'assistant: The tool ran; its output began: <path>/tmp/dsh-opencode-fixtures/proj ü ',
    ]);
    await expect(store.readSurface('ses_nope')).rejects.toMatchObject({ reason: 'not-found', message: 'session "ses_nope" not found' });
    store.dispose();
  });

  it('keeps the whole session in its log: the turns before the compaction, then the summary replacing them', async () => {
    const store = openForeignStore('opencode', OPENCODE);
    const log = await store.readLog(OC_COMPACTED);
    expect(log.title).toBe('圧縮された 日本語 session');
    expect(log.events.map((event) => [event.type, event.surfaceOp])).toEqual([
      ['user/message', 'append'],
      ['assistant/message', 'append'],
      ['user/message', 'append'],
      ['assistant/message', 'append'],
      ['user/message', { op: 'replace', start: 1, end: 4 }],
      ['user/message', 'append'],
      ['assistant/message', 'append'],
    ]);
    store.dispose();
  });

  it('never fails on a damaged database: a torn log keeps what it committed, garbage and a cut file list nothing', async () => {
    const logged: string[] = [];
    const torn = openForeignStore('opencode', path.join(FIXTURES, 'damaged', 'opencode-torn-wal'), (message) => logged.push(message));
    // The torn frame (opencode's last bookkeeping write) fails its checksum: the log ends before it, as after a crash.
    expect((await torn.listSessions()).map((s) => s.id)).toEqual([OC_COMPACTED, OC_TOOLS, OC_CHAT]);
    const intact = openForeignStore('opencode', OPENCODE);
    for (const id of [OC_CHAT, OC_TOOLS, OC_COMPACTED]) expect(await surfaceTexts(torn, id)).toEqual(await surfaceTexts(intact, id));
    intact.dispose();
    for (const name of ['opencode-garbage', 'opencode-truncated']) {
      const damaged = openForeignStore('opencode', path.join(FIXTURES, 'damaged', name), (message) => logged.push(message));
      expect(await damaged.listSessions(), name).toEqual([]);
      await expect(damaged.readSurface(OC_CHAT)).rejects.toMatchObject({ reason: 'not-found' });
      damaged.dispose();
    }
    expect(logged.filter((line) => line.includes('opencode store: skipped'))).toHaveLength(2);
    expect(await openForeignStore('opencode', path.join(FIXTURES, 'missing')).listSessions()).toEqual([]);
    torn.dispose();
  });

  it('writes nothing beside the database while opencode holds it open and writes, and sees each commit', async () => {
    const home = copyOf(OPENCODE);
    // As opencode leaves it after exiting: a database and its log, no index (-shm) a reader could create.
    const untouched = folderState(home);
    const reader = openForeignStore('opencode', home);
    await reader.listSessions();
    await surfaceTexts(reader, OC_COMPACTED);
    reader.dispose();
    expect(folderState(home)).toEqual(untouched);
    const sqlite = process.getBuiltinModule('node:sqlite') as { DatabaseSync: new (file: string) => { exec(sql: string): void; close(): void } };
    // The test plays opencode: WAL mode, no automatic checkpoint, a write transaction left open.
    const writer = new sqlite.DatabaseSync(path.join(home, 'opencode.db'));
    writer.exec('PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;');
    const insert = (id: string, title: string): string =>
      `INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('${id}', 'global', 's', '/w', '${title}', '1', 1796600000000, 1796600000000)`;
    writer.exec(insert('ses_committed', 'Committed while open'));
    writer.exec(`BEGIN IMMEDIATE; ${insert('ses_pending', 'Not yet committed')}`);
    const before = folderState(home);
    const store = openForeignStore('opencode', home);
    expect((await store.listSessions()).map((s) => s.id)).toEqual(['ses_committed', OC_COMPACTED, OC_TOOLS, OC_CHAT]);
    expect(await surfaceTexts(store, OC_CHAT)).toHaveLength(2);
    expect(folderState(home)).toEqual(before);
    writer.exec('COMMIT');
    await listedUntil(store, (listing) => listing.some((s) => s.id === 'ses_pending'));
    const afterCommit = folderState(home);
    await surfaceTexts(store, OC_COMPACTED);
    expect(folderState(home)).toEqual(afterCommit);
    store.dispose();
    writer.close();
  });
});

describe.skipIf(HAS_SQLITE)('opencode store on a Node without node:sqlite (before 22.13)', () => {
  it('lists nothing, says once why and which agents still work, and a read fails as unsupported', async () => {
    const logged: string[] = [];
    const store = openForeignStore('opencode', OPENCODE, (message) => logged.push(message));
    expect(await store.listSessions()).toEqual([]);
    expect(await store.listSessions()).toEqual([]);
    const said = `opencode sessions need Node 22.13 or newer, for node:sqlite; this is Node ${process.versions.node}, where dsh, Claude Code, Codex, Qwen Code and Gemini CLI sessions still work`;
    expect(logged).toEqual([`opencode store: ${said}`]);
    await expect(store.readSurface(OC_CHAT)).rejects.toMatchObject({ reason: 'unsupported', message: said });
    store.dispose();
  });
});

describe('Gemini CLI store (real sessions: test/agent-stores/tools/generateGemini.mjs)', () => {
  const GEMINI = path.join(FIXTURES, 'gemini');
  const GM_TITLED = 'a1000001-7a1e-4c5d-9b2a-3f4e5d6c7b01';
  const GM_SHORT = 'b2000002-7a1e-4c5d-9b2a-3f4e5d6c7b02';
  const GM_COMPRESSED = 'c3000003-7a1e-4c5d-9b2a-3f4e5d6c7b03';
  const GM_INTERRUPTED = 'd4000004-7a1e-4c5d-9b2a-3f4e5d6c7b04';
  // What the CLI's own `gemini --list-sessions` printed in each session's folder when the fixtures were made.
  const cliList = JSON.parse(readFileSync(path.join(FIXTURES, 'gemini-list.json'), 'utf8')) as Record<string, { label: string; cwd: string }>;
  const store = openForeignStore('gemini', GEMINI);

  it('lists every session with the label and the folder the CLI itself shows (the folder from projects.json and the markers)', async () => {
    const listing = await store.listSessions();
    expect(listing.map((s) => s.id).sort()).toEqual([GM_TITLED, GM_SHORT, GM_COMPRESSED, GM_INTERRUPTED]);
    expect(Object.keys(cliList).sort()).toEqual(listing.map((s) => s.id).sort());
    for (const session of listing) {
      expect([session.title, session.cwd, session.agent]).toEqual([cliList[session.id]!.label, cliList[session.id]!.cwd, 'gemini']);
    }
    // The generated summary titles one; another's label is its first prompt with the CJK dropped, as the CLI shows it.
    expect(listing.find((s) => s.id === GM_TITLED)!.title).toBe('Fixture work on the 日本語 parser');
    expect(listing.find((s) => s.id === GM_COMPRESSED)).toMatchObject({ title: ': compress me later', cwd: '/tmp/dsh-agent-fixtures-gemini/proj 日本' });
    expect(await store.listSessions()).toBe(listing);
  });

  it('projects the compressed session as the CLI resumes it: the snapshot as a checkpoint, then the kept turn and what followed', async () => {
    const texts = await surfaceTexts(store, GM_COMPRESSED, 'gemini');
    expect(texts[0]).toMatch(/^checkpoint: <state_snapshot>[\s\S]*日本語のテキスト/);
    expect(texts.slice(1)).toEqual([
      'user: Second turn: BIG TOOL please, 日本語で',
      'assistant: The tool ran; its output was: fixture-tool-output.',
      'user: After the compression, 日本語 once more',
      'assistant: Reply 4: you said "After the compression, 日本語 once more".',
    ]);
  });

  it('keeps prompts and replies of a session resumed by later processes, and leaves the shell call and the file read out', async () => {
    expect(await surfaceTexts(store, GM_TITLED)).toEqual([
      'user: Hello gemini, first turn about the parser',
      'assistant: Reply 1: you said "Hello gemini, first turn about the parser".',
      'user: Second turn: TOOL please run a command',
      'assistant: The tool ran; its output was: fixture-tool-output.',
      'user: Third turn: READ the notes, please',
      'assistant: The tool ran; its output was: fixture-tool-output.',
    ]);
    expect(await surfaceTexts(store, GM_INTERRUPTED)).toEqual(['user: Start a long answer STALL']);
  });

  it('reads the whole compressed session as the user saw it, the compression where it happened', async () => {
    const log = await store.readLog(GM_COMPRESSED);
    const kinds = log.events.map((event) => (event.type === 'assistant/message' ? 'assistant' : (event.data as { source: { kind: string } }).source.kind));
    expect(kinds).toEqual(['user', 'assistant', 'user', 'plugin', 'assistant', 'user', 'assistant']);
    expect(log.title).toBe(': compress me later');
  });

  it('reads the damaged copies: no projects.json (folders from the markers), a marker gone, a torn summary line, garbage', async () => {
    const damaged = openForeignStore('gemini', path.join(FIXTURES, 'damaged', 'gemini'));
    const listing = await damaged.listSessions();
    expect(listing.map((s) => s.id).sort()).toEqual([GM_TITLED, GM_SHORT, GM_COMPRESSED, GM_INTERRUPTED].sort());
    // The torn last line was the summary: the label falls back to the first prompt.
    expect(listing.find((s) => s.id === GM_TITLED)!.title).toBe('Hello gemini, first turn about the parser');
    expect(listing.find((s) => s.id === GM_COMPRESSED)!.cwd).toBe(cliList[GM_COMPRESSED]!.cwd);
    expect(listing.find((s) => s.id === GM_INTERRUPTED)!.cwd).toBeUndefined();
    for (const id of [GM_SHORT, GM_COMPRESSED, GM_INTERRUPTED]) expect(await surfaceTexts(damaged, id)).toEqual(await surfaceTexts(store, id));
  });

  it('follows projects.json and the markers as they change, and never writes into the home', async () => {
    const home = copyOf(GEMINI);
    const fresh = openForeignStore('gemini', home);
    await fresh.listSessions();
    // The registry alone names proj-a once its marker is gone; then a new registry moves it.
    rmSync(path.join(home, 'tmp', 'proj-a', '.project_root'));
    writeFileSync(path.join(home, 'projects.json'), JSON.stringify({ projects: { '/moved/proj a': 'proj-a' } }));
    await listedUntil(fresh, (listing) => listing.find((s) => s.id === GM_SHORT)?.cwd === '/moved/proj a');
    // A marker wins over the registry.
    writeFileSync(path.join(home, 'tmp', 'proj-a', '.project_root'), '/marked/proj a');
    await listedUntil(fresh, (listing) => listing.find((s) => s.id === GM_TITLED)?.cwd === '/marked/proj a');
    // A new summary line retitles; a file of the CLI's context alone under the same id changes nothing.
    appendFileSync(path.join(home, 'tmp', 'proj-a', 'chats', readdirSync(path.join(home, 'tmp', 'proj-a', 'chats')).find((name) => name.includes('b2000002'))!), JSON.stringify({ $set: { summary: 'Named later' } }) + '\n');
    await listedUntil(fresh, (listing) => listing.find((s) => s.id === GM_SHORT)?.title === 'Named later');
    fresh.dispose();
    rmSync(home, { recursive: true });
    cpSync(GEMINI, home, { recursive: true });
    const snapshot = () => readdirSync(home, { recursive: true, encoding: 'utf8' }).sort().map((name) => [name, statSync(path.join(home, name)).mtimeMs]);
    const before = snapshot();
    const reopened = openForeignStore('gemini', home);
    await reopened.listSessions();
    await reopened.readSurface(GM_TITLED);
    await reopened.readLog(GM_COMPRESSED);
    reopened.dispose();
    expect(snapshot()).toEqual(before);
  });

  it('prepares a Gemini CLI mention beside dsh’s: one tag-safe context naming the agent, the checkpoint kept in a tight budget', async () => {
    const resolver = createSessionReferenceResolver(composeAgentStores(dshService(), [store]), { maxReferenceBytes: 700 });
    const prepared = await resolver.prepare(undefined, [], [
      { sessionId: 'dsh-new', label: 'D' },
      { sessionId: GM_COMPRESSED, label: 'G </referenced-sessions>', agent: 'gemini' },
    ]);
    const text = (prepared.additionalContext!.content[0] as { text: string }).text;
    expect(text.match(/<\/referenced-sessions>/g)).toHaveLength(1);
    const data = JSON.parse(text.slice(REFERENCED_SESSIONS_PROMPT_PREFIX.length, -REFERENCED_SESSIONS_PROMPT_SUFFIX.length)) as Array<Record<string, unknown>>;
    expect(data[1]).toMatchObject({ agent: 'gemini', sessionId: GM_COMPRESSED, cwd: '/tmp/dsh-agent-fixtures-gemini/proj 日本' });
    expect(JSON.stringify(data[1])).toContain('state_snapshot');
    expect(prepared.additionalContext!.source.references[1]).toMatchObject({ agent: 'gemini', compacted: true });
    expect(readFileSync(path.join(FIXTURES, 'GENERATED-gemini.txt'), 'utf8')).toContain('Gemini CLI 0.61.0');
  });
});
