import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionCommands } from '@dsh-session-ls/shared';
import { findProgram, fixtureStore } from '../../../test/support/conformance';
import { foldSessionTitle, type InMemorySession } from '../testing/inMemorySessionStore';
import { TRANSCRIPT_NAMES } from '../store/layout';
import { initZstdSupport, loadSessionLog } from '../store/log';
import { DEMO_2, DshLog as SessionLogBuilder, rawTranscript, zstdTranscript } from '../testing/testLogs';
import { openSessionStore } from '../store';
import { readSessionLogFile } from '../store/sessionLogFile';
import { executeSessionCommand } from './commands';
import type { SessionLogs } from './services';
import { testWorkspace } from '../testing/testWorkspace';
import { sessionTranscriptMarkdown, transcriptCommand, type SessionLog } from './transcript';

await initZstdSupport();

const demo2 = (): SessionLog => {
  const loaded = loadSessionLog(rawTranscript(DEMO_2), 'raw');
  return { header: { id: 'demo-2', cwd: '/home/alice/proj', createdAt: 1767225700000 }, events: loaded.events, whole: true, title: loaded.title! };
};

/** A reader of whole logs over in-memory sessions, as a store with full-log access gives them. */
function inMemoryLogs(sessions: InMemorySession[]): SessionLogs {
  return {
    read: async (sessionId) => {
      const session = sessions.find((candidate) => candidate.header.id === sessionId);
      if (session === undefined) throw new Error(`session ${JSON.stringify(sessionId)} not found`);
      const title = foldSessionTitle(session.events ?? []);
      return { header: session.header, events: session.events ?? [], ...(title === undefined ? {} : { title }) };
    },
  };
}

function nestedCompaction(): InMemorySession {
  const log = new SessionLogBuilder();
  const u1 = log.user('first prompt');
  log.assistant('first answer');
  log.user('injected', { kind: 'plugin', plugin: 'tool-goal' });
  const u2 = log.user('second prompt');
  const a2 = log.assistant('second answer');
  const c1 = log.checkpoint('summary one', u1, u2);
  log.user('third prompt');
  log.checkpoint('summary two', c1, a2);
  log.assistant([{ type: 'text', text: 'see ```code``` and [x](command:evil) <img src=x>\n\u202ebidi\tline two' }]);
  log.title('Nested `work`');
  return { header: { id: 'nested', createdAt: Date.UTC(2026, 0, 1) }, events: log.events() };
}

describe('the transcript Markdown', () => {
  it('shows the prompts and answers the user saw, and notes where compaction replaced them (store doc demo-2)', () => {
    expect(sessionTranscriptMarkdown(demo2())).toBe(
      [
        '# Alpha file check',
        '',
        '- session: demo-2',
        '- cwd: /home/alice/proj',
        '- created: 2026-01-01 00:01 UTC',
        '- 2 messages, as the user saw them',
        '',
        '---',
        '',
        '### User · 2026-01-01 00:01 UTC',
        '',
        '```text',
        'Read a.txt',
        '```',
        '',
        '### Assistant · 2026-01-01 00:01 UTC',
        '',
        '```text',
        'a.txt contains: alpha',
        '```',
        '',
        '> **Compaction checkpoint · 2026-01-01 00:03 UTC**: from here on the model sees this summary instead of the 1 earlier message it replaced.',
        '',
        '```text',
        '<compacted-summary>',
        'User asked to read a.txt; it contains alpha.',
        '</compacted-summary>',
        '```',
        '',
      ].join('\n'),
    );
  });

  it('counts what nested checkpoints replaced, skips injected context, and fences session text safely', () => {
    const session = nestedCompaction();
    const markdown = sessionTranscriptMarkdown({ header: session.header, events: session.events!, whole: true, title: 'Nested `work`' });
    expect(markdown).toContain('# Nested \\`work\\`');
    expect(markdown).not.toContain('injected');
    // The first checkpoint replaced two prompts and an answer (the injected message in between was never shown).
    expect(markdown).toContain('instead of the 3 earlier messages it replaced');
    // The second checkpoint replaced the first checkpoint and the second answer.
    expect(markdown).toContain('instead of the 2 earlier messages it replaced');
    // A fence longer than any backtick run inside: the text cannot close it.
    expect(markdown).toContain('````text\nsee ```code``` and [x](command:evil) <img src=x>\nbidi line two\n````');
    expect(markdown).not.toContain('\u202e');
    // Outside fences, nothing from the session is left unescaped.
    const outsideFences = markdown.replace(/^(`{3,})text\n[\s\S]*?\n\1$/gm, '');
    expect(outsideFences).not.toMatch(/(^|[^\\])[[<`]/m);
  });

  it('from the current surface alone, says the earlier messages are gone', () => {
    const loaded = loadSessionLog(rawTranscript(DEMO_2), 'raw');
    const markdown = sessionTranscriptMarkdown({ header: { id: 'demo-2', createdAt: 0 }, events: loaded.surface, whole: false });
    expect(markdown).toContain('earlier messages were replaced by this summary and are no longer part of the session’s surface');
    expect(markdown).toContain('- 1 message on the current surface (the full log could not be read)');
    expect(markdown).not.toContain('Read a.txt');
  });
});

describe('dshSession.transcript', () => {
  const sessions = [nestedCompaction()];

  it('answers the transcript of a whole log', async () => {
    const { workspace } = testWorkspace(sessions);
    const markdown = await executeSessionCommand(SessionCommands.transcript, [{ sessionId: 'nested' }], { ...workspace.view({}), sessionLogs: inMemoryLogs(sessions) });
    expect(markdown).toContain('### User');
    expect(markdown).toContain('first prompt');
  });

  it('falls back to the current surface, titled from the listing, when the services have no whole logs', async () => {
    const { workspace } = testWorkspace(sessions);
    const { sessionLogs: _wholeLogs, ...surfaceOnly } = workspace.view({});
    const markdown = await transcriptCommand({ sessionId: 'nested' }, surfaceOnly);
    expect(markdown).toContain('# Nested \\`work\\`');
    expect(markdown).not.toContain('first prompt');
    expect(markdown).toContain('third prompt');
  });

  it('is READ_FAILED for a session that cannot be read, INVALID_REFERENCE for a bad argument', async () => {
    const { workspace } = testWorkspace(sessions);
    await expect(transcriptCommand({ sessionId: 'nope' }, { ...workspace.view({}), sessionLogs: inMemoryLogs(sessions) })).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_READ_FAILED',
      message: 'failed to read referenced session: session "nope" not found',
    });
    await expect(executeSessionCommand(SessionCommands.transcript, [{ sessionId: 3 }], workspace)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_INVALID_REFERENCE',
    });
    await expect(executeSessionCommand(SessionCommands.transcript, [], workspace)).rejects.toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
  });
});

describe('whole logs from transcript files', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  function storeWith(files: Record<string, Uint8Array>): string {
    const root = mkdtempSync(path.join(os.tmpdir(), 'dsh-transcript-'));
    roots.push(root);
    for (const [relative, bytes] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
      writeFileSync(path.join(root, relative), bytes);
    }
    return root;
  }

  /** A whole log read from the transcript files under `root`, as a transcript takes it. */
  async function readFrom(root: string, sessionId: string): Promise<SessionLog> {
    const store = openSessionStore({ root });
    try {
      return { ...(await readSessionLogFile(root, store, sessionId)), whole: true };
    } finally {
      store.dispose();
    }
  }

  it('reads every message and tool result of a raw log, as the decoder gives them, and no other event', async () => {
    const root = storeWith({ '--home-alice-proj--/demo-2/session.jsonl': rawTranscript(DEMO_2) });
    const log = await readFrom(root, 'demo-2');
    expect(log).toMatchObject({ title: 'Alpha file check', header: { id: 'demo-2', cwd: '/home/alice/proj' } });
    const surfaceTypes = new Set(['user/message', 'assistant/message', 'tool/result']);
    expect(log.events).toEqual(demo2().events.filter((event) => surfaceTypes.has(event.type)));
    expect(log.events.map((event) => event.type)).toContain('tool/result');
    expect(sessionTranscriptMarkdown(log)).toBe(sessionTranscriptMarkdown(demo2()));
  });

  describe('on the fixture store', () => {
    for (const encoding of ['raw', 'zstd'] as const) {
      it(`${encoding}: every session's transcript is the one of all its events`, async () => {
        const root = fixtureStore(encoding);
        const store = openSessionStore({ root });
        let sessions = 0;
        try {
          for (const project of readdirSync(root)) {
            for (const session of readdirSync(path.join(root, project))) {
              const bytes = new Uint8Array(readFileSync(path.join(root, project, session, TRANSCRIPT_NAMES[encoding])));
              const whole = loadSessionLog(bytes, encoding);
              const header = { id: whole.header.id, createdAt: whole.header.createdAt, ...(whole.header.cwd === undefined ? {} : { cwd: whole.header.cwd }) };
              const expected = sessionTranscriptMarkdown({ header, events: whole.events, whole: true, ...(whole.title === undefined ? {} : { title: whole.title }) });
              expect(sessionTranscriptMarkdown({ ...(await readSessionLogFile(root, store, whole.header.id)), whole: true })).toBe(expected);
              sessions++;
            }
          }
        } finally {
          store.dispose();
        }
        expect(sessions).toBeGreaterThanOrEqual(11);
      });
    }
  });

  const zstd = findProgram('zstd');
  it.skipIf(!zstd.found)(`reads a zstd log the same way${zstd.reason === undefined ? '' : ` (${zstd.reason})`}`, async () => {
    const root = storeWith({ '--home-alice-proj--/demo-2/session.jsonl.zstd': zstdTranscript([DEMO_2.slice(0, 1), DEMO_2.slice(1, 13), DEMO_2.slice(13)]) });
    expect(sessionTranscriptMarkdown(await readFrom(root, 'demo-2'))).toBe(sessionTranscriptMarkdown(demo2()));
  });

  it('fails as readSurface does for a missing session, and never reads through a linked session directory', async () => {
    const root = storeWith({});
    await expect(readFrom(root, 'demo-2')).rejects.toMatchObject({ reason: 'not-found' });
    const outside = storeWith({ 'demo-2/session.jsonl': rawTranscript(DEMO_2) });
    mkdirSync(path.join(root, '--home-alice-proj--'));
    symlinkSync(path.join(outside, 'demo-2'), path.join(root, '--home-alice-proj--', 'demo-2'));
    await expect(readFrom(root, 'demo-2')).rejects.toMatchObject({ name: 'SessionReadError' });
  });
});
