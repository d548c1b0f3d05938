/**
 * First answers (lsp-contract.md): spawn → initialize → at once, `dshSession.candidates` is the full
 * answer (it waits for the first index) and `@` completion on a small store is the full list; a request
 * cancelled while it waits answers RequestCancelled; completion past its bound answers incomplete, and a
 * newer one supersedes a waiting one; a hover right after initialize names the session by its title, and
 * hovers, document links and diagnostics wait for the first index. The full answer is the CLI's over the
 * same store (it waits for the whole index), never a hard-coded list. Stores: raw and zstd, of a few sessions and of 1,000, written
 * with the benchmark's log generator.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancellationTokenSource, type CompletionItem, type CompletionList, type Diagnostic, type DocumentLink, type Hover, type MarkupContent } from 'vscode-languageserver-protocol';
import { SessionCommands, displaySafeLabel, encodeSessionReferenceUri, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { Corpus } from '../../bench/src/generate/corpus';
import { FrameCompressor } from '../../bench/src/generate/frameCompressor';
import { Random } from '../../bench/src/generate/random';
import { generateSessionLog } from '../../bench/src/generate/sessionLog';
import { escapeMarkdownText } from '../../server/src/features/sessionPreview';
import { relativeLogPath } from '../../server/src/store/layout';
import { findProgram } from '../support/conformance';
import { buildHeldIndexServer, holdArgument } from '../support/heldIndexServerBuild';
import { SERVER_BIN, fileUri, pollUntil, responseErrorOf, type LspTestClient } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, WEATHER_APP, removeTemporary, startServer, temporaryDirectory } from './helpers';

const scratch = temporaryDirectory('first-answers');
afterAll(() => removeTemporary(scratch));

/** The server with its first index held open while a file exists (test/support/heldIndexServer.ts). */
let heldServer: string;
beforeAll(async () => {
  heldServer = await buildHeldIndexServer(path.join(scratch, 'held-server'));
}, 60_000);

const ALL = 100_000;
const DAY = 86_400_000;
const zstd = findProgram('zstd');

/**
 * A store of `count` sessions in dsh's layout, every log in `encoding`: the benchmark generator's logs,
 * kept small (2–20 kB) so a test writes it quickly; a share of them in the example sessions' cwd.
 */
async function writeStore(name: string, count: number, encoding: 'raw' | 'zstd', seed: number): Promise<string> {
  const root = path.join(scratch, name, 'sessions');
  const random = new Random(seed);
  const corpus = new Corpus(seed, 1 << 16);
  const cwds = [WEATHER_APP, '/home/sam/notes', '/srv/api', undefined];
  const logs: { file: string; parts: Buffer[] }[] = [];
  for (let index = 0; index < count; index++) {
    const id = random.uuid();
    const generated = generateSessionLog(
      {
        id,
        cwd: random.pick(cwds),
        createdAt: Date.UTC(2025, 6, 1) + random.int(0, 300 * DAY),
        targetBytes: random.int(2_000, 20_000),
        openTail: random.chance(0.02),
        untitled: random.chance(0.05),
      },
      random,
      corpus,
    );
    const parts = [Buffer.from(generated.header), ...generated.batches.map((batch) => Buffer.from(batch))];
    logs.push({ file: path.join(root, relativeLogPath(generatedCwd(generated.header), id, encoding)), parts });
  }
  const compressor = encoding === 'zstd' ? new FrameCompressor() : undefined;
  try {
    const frames = compressor === undefined ? undefined : await compressor.compress(logs.flatMap((log) => log.parts));
    let next = 0;
    for (const log of logs) {
      mkdirSync(path.dirname(log.file), { recursive: true });
      const data = frames === undefined ? Buffer.concat(log.parts) : Buffer.concat(frames.slice(next, next + log.parts.length));
      next += log.parts.length;
      writeFileSync(log.file, data);
    }
  } finally {
    compressor?.dispose();
  }
  return root;
}

function generatedCwd(header: string): string | undefined {
  return (JSON.parse(header) as { cwd?: string }).cwd;
}

/** The full answer: the CLI's candidates over the same store, ranked for the same cwd, after its whole index. */
function fullAnswer(root: string): SessionReferenceMentionCandidate[] {
  const result = spawnSync(process.execPath, [SERVER_BIN, 'candidates', '--root', root, '--cwd', WEATHER_APP, '--limit', String(ALL), '--json'], {
    cwd: scratch,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cli-cache'), DSH_HOME: path.join(scratch, 'no-dsh-home') },
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`the CLI failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as SessionReferenceMentionCandidate[];
}

/** The session ids of a completion list's session items, in order. */
function sessionIds(list: CompletionList): string[] {
  return list.items
    .map((item: CompletionItem) => item.data as { kind?: string; sessionId?: string } | undefined)
    .filter((data) => data?.kind === 'dsh-session')
    .map((data) => data!.sessionId!);
}

const PROMPT = fileUri(path.join(WEATHER_APP, 'PROMPT.md'));
const AT = { line: 0, character: 1 };

/** The stores of the suite, made once. */
const stores: Record<string, string> = {};
const ALL_STORES = [
  { name: 'raw-few', count: 6, encoding: 'raw' },
  { name: 'zstd-few', count: 6, encoding: 'zstd' },
  { name: 'raw-1000', count: 1_000, encoding: 'raw' },
  { name: 'zstd-1000', count: 1_000, encoding: 'zstd' },
] as const;
/** The zstd stores need the `zstd` program to be written (Node 20 has no zstd compressor); CI installs it. */
const STORES = ALL_STORES.filter((store) => store.encoding === 'raw' || zstd.found);
const FEW = STORES.filter((store) => store.count < 1_000).map((store) => store.name);

beforeAll(async () => {
  let seed = 12;
  for (const store of STORES) stores[store.name] = await writeStore(store.name, store.count, store.encoding, seed++);
  stores.example = EXAMPLE_STORE;
}, 300_000);
/** Said in the suite titles when the zstd stores are left out (locally, without `zstd`). */
const LEFT_OUT = zstd.found ? '' : ` (zstd stores left out: ${zstd.reason})`;

describe(`at once after initialize, dshSession.candidates is the full answer${LEFT_OUT}`, () => {
  it.each(['example', ...STORES.map((store) => store.name)])(
    'on the %s store (root in initializationOptions)',
    async (name) => {
      const root = stores[name]!;
      const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
      try {
        const first = await client.executeCommand<SessionReferenceMentionCandidate[]>(SessionCommands.candidates, { limit: ALL });
        const expected = fullAnswer(root);
        expect(expected.length).toBeGreaterThan(0);
        expect(first).toEqual(expected);
      } finally {
        await cleanup();
      }
    },
    120_000,
  );

  it.each(FEW)(
    'on the %s store, its root pulled with workspace/configuration after initialize',
    async (name) => {
      const root = stores[name]!;
      const { client, cleanup } = await startServer({}, { settings: { sessionsRoot: root } });
      try {
        expect(await client.executeCommand(SessionCommands.candidates, { limit: ALL })).toEqual(fullAnswer(root));
      } finally {
        await cleanup();
      }
    },
    120_000,
  );
});

describe(`at once after initialize, @ completion on a small store is the full list${LEFT_OUT}`, () => {
  it.each(['example', ...FEW])(
    'on the %s store',
    async (name) => {
      const root = stores[name]!;
      const { client, cleanup } = await startServer({}, { settings: { sessionsRoot: root } });
      try {
        await client.openDocument(PROMPT, '@');
        const list = await client.completion(PROMPT, AT);
        expect(list.isIncomplete).toBe(false);
        expect(sessionIds(list)).toEqual(fullAnswer(root).map((candidate) => candidate.sessionId));
      } finally {
        await cleanup();
      }
    },
    120_000,
  );
});

/** The first line of a hover on a session: its name in bold, as the server escapes it. */
function hoverTitle(hover: Hover | null): string | undefined {
  return (hover?.contents as MarkupContent | undefined)?.value.split('\n')[0];
}

/** A titled session of the full answer (its label is its title, not its id). */
function titledSession(root: string): SessionReferenceMentionCandidate {
  const titled = fullAnswer(root).filter((candidate) => candidate.label !== candidate.sessionId);
  expect(titled.length).toBeGreaterThan(0);
  // The last one listed: the least likely to be indexed early.
  return titled.at(-1)!;
}

describe(`at once after initialize, a hover names the session by its title${LEFT_OUT}`, () => {
  it.each(['example', ...STORES.map((store) => store.name)])(
    'on the %s store',
    async (name) => {
      const root = stores[name]!;
      const session = titledSession(root);
      const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
      try {
        await client.openDocument(PROMPT, `see ${encodeSessionReferenceUri(session.sessionId)}`);
        const hover = await client.request<Hover | null>('textDocument/hover', { textDocument: { uri: PROMPT }, position: { line: 0, character: 8 } });
        expect(hoverTitle(hover)).toBe(`**${escapeMarkdownText(displaySafeLabel(session.label, session.sessionId))}**`);
      } finally {
        await cleanup();
      }
    },
    120_000,
  );
});

describe('hover, document links and diagnostics while the first index is held open (the held-index store double)', () => {
  it('wait for it (hover with progress on its token, cancellable), then answer with the session as indexed', async () => {
    const holdFile = path.join(scratch, 'hold-hover');
    writeFileSync(holdFile, '');
    const { client, cleanup } = await startServer(
      { initializationOptions: { sessionsRoot: EXAMPLE_STORE } },
      { server: heldServer, args: [holdArgument(holdFile)] },
    );
    try {
      const session = fullAnswer(EXAMPLE_STORE).find((candidate) => candidate.sessionId === EXAMPLE_SESSIONS.hourly)!;
      expect(session.label).not.toBe(session.sessionId);
      await client.openDocument(PROMPT, `see ${encodeSessionReferenceUri(session.sessionId)} and ${encodeSessionReferenceUri('no-such-session')}`);
      const position = { line: 0, character: 8 };
      const progressOf = (token: string) =>
        client
          .messages('$/progress')
          .filter((message) => (message.params as { token: unknown }).token === token)
          .map((message) => (message.params as { value: { kind: string } }).value.kind);

      const source = new CancellationTokenSource();
      const cancelled = client.connection.sendRequest('textDocument/hover', { textDocument: { uri: PROMPT }, position, workDoneToken: 'hover-cancel' }, source.token);
      await pollUntil(() => (progressOf('hover-cancel').includes('begin') ? true : undefined));
      source.cancel();
      expect(await responseErrorOf(cancelled)).toMatchObject({ code: -32800 });
      await pollUntil(() => (progressOf('hover-cancel').at(-1) === 'end' ? true : undefined));

      const hover = client.request<Hover | null>('textDocument/hover', { textDocument: { uri: PROMPT }, position, workDoneToken: 'hover-wait' });
      const links = client.request<DocumentLink[]>('textDocument/documentLink', { textDocument: { uri: PROMPT } });
      await pollUntil(() => (progressOf('hover-wait').includes('begin') ? true : undefined));
      // Nothing is published from an unfinished first index.
      expect(client.messages('textDocument/publishDiagnostics').filter((message) => (message.params as { uri: string }).uri === PROMPT)).toEqual([]);
      rmSync(holdFile);
      expect(hoverTitle(await hover)).toBe(`**${escapeMarkdownText(session.label)}**`);
      expect((await links).map((link) => link.target)).toEqual([encodeSessionReferenceUri(session.sessionId), encodeSessionReferenceUri('no-such-session')]);
      const published = await client.waitForMessage('textDocument/publishDiagnostics', (params: { uri: string }) => params.uri === PROMPT);
      // The first publication already knows the unknown session is unknown.
      expect((published.params as { diagnostics: Diagnostic[] }).diagnostics.map((diagnostic) => diagnostic.code)).toEqual(['SESSION_REFERENCE_READ_FAILED']);
    } finally {
      rmSync(holdFile, { force: true });
      await cleanup();
    }
  }, 120_000);
});

// The held-index double makes the store look as if its first index had found nothing yet while a file exists: the same
// requests then tell a waiting server from one answering from an unfinished index, however fast indexing is.
describe('while the first index is held open (the held-index store double)', () => {
  let client: LspTestClient;
  let cleanup: () => Promise<void>;
  let holdFile: string;

  beforeAll(async () => {
    holdFile = path.join(scratch, 'hold');
    writeFileSync(holdFile, '');
    ({ client, cleanup } = await startServer(
      { initializationOptions: { sessionsRoot: EXAMPLE_STORE } },
      { server: heldServer, args: [holdArgument(holdFile)] },
    ));
    await client.openDocument(PROMPT, '@');
  }, 60_000);

  afterAll(async () => {
    rmSync(holdFile, { force: true });
    await cleanup();
  });

  const progressOf = (token: string) =>
    client
      .messages('$/progress')
      .filter((message) => (message.params as { token: unknown }).token === token)
      .map((message) => (message.params as { value: { kind: string } }).value.kind);

  it('a command cancelled while it waits answers RequestCancelled, with its progress begun and ended', async () => {
    const source = new CancellationTokenSource();
    const answer = client.connection.sendRequest(
      'workspace/executeCommand',
      { command: SessionCommands.candidates, arguments: [{ limit: ALL }], workDoneToken: 'first-answers-cancel' },
      source.token,
    );
    await pollUntil(() => (progressOf('first-answers-cancel').includes('begin') ? true : undefined));
    source.cancel();
    expect(await responseErrorOf(answer)).toMatchObject({ code: -32800 });
    await pollUntil(() => (progressOf('first-answers-cancel').at(-1) === 'end' ? true : undefined));
  });

  it('completion: a newer request supersedes a waiting one (RequestCancelled); past the bound it answers incomplete', async () => {
    const completion = {
      method: 'textDocument/completion',
      params: { textDocument: { uri: PROMPT }, position: AT, context: { triggerKind: 2, triggerCharacter: '@' } },
    };
    const [older, newer] = await client.requestsAtOnce<CompletionList>([completion, completion]);
    expect(await responseErrorOf(older!)).toMatchObject({ code: -32800 });
    // What is indexed so far: nothing.
    expect(await newer!).toEqual({ isIncomplete: true, items: [] });
  });

  it('a command waiting when the first index is built answers the full listing; completion is then complete', async () => {
    const waiting = client.request<SessionReferenceMentionCandidate[]>('workspace/executeCommand', {
      command: SessionCommands.candidates,
      arguments: [{ limit: ALL }],
      workDoneToken: 'first-answers-wait',
    });
    await pollUntil(() => (progressOf('first-answers-wait').includes('begin') ? true : undefined));
    rmSync(holdFile);
    const expected = fullAnswer(EXAMPLE_STORE);
    expect(expected.length).toBeGreaterThan(0);
    expect(await waiting).toEqual(expected);
    const list = await client.completion(PROMPT, AT);
    expect(list.isIncomplete).toBe(false);
    expect(sessionIds(list)).toEqual(expected.map((candidate) => candidate.sessionId));
  });
});
