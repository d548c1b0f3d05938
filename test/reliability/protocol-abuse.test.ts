/**
 * Protocol abuse against the real server process: malformed params for every
 * method and notification, every command with arguments of every wrong shape, unknown methods and
 * commands, a 10 MB document, a document with 10,000 mentions, bursts of edits and completions with
 * cancellations. Every request is answered (a result or the contract's error), nothing escapes a
 * handler, the server keeps serving, its memory stays bounded and the store is never written.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc/node';
import type { CompletionList, Diagnostic } from 'vscode-languageserver-protocol';
import {
  JsonRpcErrorCodes,
  SessionCommands,
  formatSessionReferenceMention,
  type PreparedReferencedMessage,
} from '@dsh-session-ls/shared';
import { fileUri, pollUntil, responseErrorOf } from '../support/lspClient';
import { MAX_DIAGNOSTICS_PER_DOCUMENT } from '../../server/src/features/diagnostics';
import { MESSAGE_TOO_LARGE_CODE } from '../../server/src/wiring/documentLimits';
import { MAX_DOCUMENT_LENGTH, MAX_MESSAGE_BYTES } from '../../server/src/wiring/sizeLimits';
import { recordFigure, scaled } from './support/scale';
import { escapedFaults, startMeasuredServer, waitForListing, type MeasuredServer } from './support/serverProcess';
import { useReadOnlyStore } from './support/readOnlyStore';
import type { SessionSpec } from './support/stores';

const SESSIONS: SessionSpec[] = [
  { id: 'alpha', cwd: '/home/alice/proj', createdAt: 3000, turns: [{ prompt: 'Say hi', answer: 'Hi!', title: 'Alpha title' }] },
  { id: 'beta', cwd: '/home/alice/proj', createdAt: 2000, turns: [{ prompt: 'Read a.txt', answer: 'alpha', title: 'Beta title' }] },
  { id: 'gamma', createdAt: 1000, turns: [{ prompt: 'q', answer: 'a' }] },
];

const { temporary, servers, root } = useReadOnlyStore('abuse', SESSIONS);

const DOC = fileUri('/home/alice/proj/PROMPT.md');

async function server(): Promise<MeasuredServer> {
  const started = await startMeasuredServer(temporary, root());
  servers.push(started);
  await waitForListing(started.client, SESSIONS.length);
  return started;
}

type Answer = { ok: true; value: unknown } | { ok: false; code: number; message: string; data: unknown };

/** Send a raw request and classify its answer; a request that is never answered fails at the deadline. */
async function answerOf(server: MeasuredServer, method: string, params: unknown, deadlineMs = 30_000): Promise<Answer> {
  const request = params === undefined ? server.client.connection.sendRequest(method) : server.client.connection.sendRequest(method, params);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${method} was never answered`)), deadlineMs);
  });
  try {
    return { ok: true, value: await Promise.race([request, late]) };
  } catch (error) {
    if (!(error instanceof ResponseError)) throw error;
    return { ok: false, code: error.code, message: error.message, data: error.data };
  } finally {
    clearTimeout(timer);
  }
}

/** The server still answers a plain request correctly. */
async function expectServing(server: MeasuredServer): Promise<void> {
  expect(server.running()).toBe(true);
  const parsed = await answerOf(server, 'workspace/executeCommand', { command: SessionCommands.parse, arguments: [{ text: 'still here' }] });
  expect(parsed).toEqual({ ok: true, value: { text: 'still here', references: [] } });
}

/** One framed JSON-RPC message, as bytes on the wire. */
function framed(body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`), bytes]);
}

const MALFORMED_PARAMS: unknown[] = [
  undefined,
  null,
  0,
  'text',
  [],
  [1, 2],
  {},
  { textDocument: null },
  { textDocument: { uri: 42 }, position: { line: 0, character: 0 } },
  { textDocument: { uri: DOC }, position: null },
  { textDocument: { uri: DOC }, position: { line: -1, character: -1 } },
  { textDocument: { uri: DOC }, position: { line: 1e15, character: 1e15 } },
  { textDocument: { uri: DOC }, position: { line: '0', character: '1' } },
  { textDocument: { uri: DOC }, range: 'everything', context: null },
  { textDocument: { uri: DOC }, range: { start: { line: 5, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: 'x' } },
  { label: 5, data: { kind: 'dsh-session', sessionId: { toString: 1 }, label: null, createdAt: 'x' } },
  { label: 'x', data: { kind: 'dsh-session', sessionId: '../../etc/passwd', label: 'x', createdAt: 0 } },
  { command: 42, arguments: 'not an array' },
  { command: SessionCommands.prepare, arguments: { text: 'not an array' } },
];

const REQUESTS = [
  'textDocument/completion',
  'completionItem/resolve',
  'textDocument/hover',
  'textDocument/codeAction',
  'textDocument/documentLink',
  'workspace/executeCommand',
];

const NOTIFICATIONS = [
  'textDocument/didOpen',
  'textDocument/didChange',
  'textDocument/didClose',
  'textDocument/didSave',
  'workspace/didChangeConfiguration',
  'workspace/didChangeWorkspaceFolders',
  'workspace/didChangeWatchedFiles',
  '$/cancelRequest',
  '$/setTrace',
  'initialized',
  'dsh/unknownNotification',
];

const MALFORMED_NOTIFICATION_PARAMS: unknown[] = [
  ...MALFORMED_PARAMS,
  { textDocument: { uri: DOC, languageId: 5, version: 'one', text: 42 } },
  { textDocument: { uri: DOC, version: 2 }, contentChanges: 'all of it' },
  { textDocument: { uri: DOC, version: 3 }, contentChanges: [{ range: { start: { line: 99, character: 99 }, end: { line: -4, character: 0 } }, text: 7 }] },
  { textDocument: { uri: 'file:///never-opened.md', version: 2 }, contentChanges: [{ text: '@' }] },
  { settings: { dshSessions: { sessionsRoot: 42, maxReferences: 'many', candidateLimit: -1 } } },
  { settings: { dshSessions: null } },
  { event: { added: 'x', removed: null } },
  { id: { nested: true } },
  { value: 'verbose-ish' },
];

/** Arguments of every wrong shape a command can get. */
const MALFORMED_ARGUMENTS: unknown[][] = [
  [],
  [null],
  [1],
  ['{not json'],
  ['"a JSON string that is not an object"'],
  [[]],
  [{}, {}],
  [{ text: 5 }],
  [{ text: null }],
  [{ sessionId: 5 }],
  [{ sessionId: 'alpha', label: 7 }],
  [{ textDocument: { uri: 'file:///not-open.md' } }],
  [{ textDocument: 'x' }],
  [{ content: 'x', references: 'y' }],
  [{ content: [], references: [null] }],
  [{ content: [], references: [{ sessionId: 'alpha' }], text: 'both forms' }],
  [{ config: { maxReferences: 9 } }],
  [{ config: 'small' }],
  [{ target: 'me' }],
  [{ target: { sessionId: 5, cwd: [] } }],
  [{ limit: -1 }],
  [{ limit: 'ten' }],
  [{ query: {} }],
];

describe('malformed traffic', () => {
  it('answers every request with malformed params with a result or a JSON-RPC error, and keeps serving', async () => {
    const s = await server();
    await s.client.openDocument(DOC, 'hello @al');
    const codes = new Map<string, number>();
    for (const method of REQUESTS) {
      for (const params of MALFORMED_PARAMS) {
        const answer = await answerOf(s, method, params);
        const key = answer.ok ? 'result' : String(answer.code);
        codes.set(key, (codes.get(key) ?? 0) + 1);
        if (!answer.ok) {
          // Params are checked at the wiring boundary: a malformed request is never an internal fault.
          expect([JsonRpcErrorCodes.InvalidParams, JsonRpcErrorCodes.MethodNotFound]).toContain(answer.code);
        }
      }
      await expectServing(s);
    }
    // Unknown methods.
    expect(await answerOf(s, 'dsh/launchMissiles', { now: true })).toMatchObject({ ok: false, code: JsonRpcErrorCodes.MethodNotFound });
    expect(await answerOf(s, 'textDocument/unknownFeature', {})).toMatchObject({ ok: false, code: JsonRpcErrorCodes.MethodNotFound });
    // Params nested 100,000 deep (too deep for a recursive walk), sent as raw bytes to every method.
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    for (const [index, method] of [...REQUESTS, ...NOTIFICATIONS].entries()) {
      const id = index < REQUESTS.length ? `"id":"deep-${index}",` : '';
      s.client.writeRaw(framed(`{"jsonrpc":"2.0",${id}"method":"${method}","params":{"textDocument":{"uri":"${DOC}"},"position":${deep},"arguments":${deep}}}`));
    }
    await expectServing(s);
    recordFigure('protocol-abuse', 'malformed requests (answers by code)', JSON.stringify(Object.fromEntries(codes)));
    await expectServing(s);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });

  it('survives every notification with malformed params', async () => {
    const s = await server();
    let sent = 0;
    for (const method of NOTIFICATIONS) {
      for (const params of MALFORMED_NOTIFICATION_PARAMS) {
        if (params === undefined) await s.client.connection.sendNotification(method);
        else await s.client.connection.sendNotification(method, params);
        sent++;
      }
      await expectServing(s);
    }
    // The features still work on a document opened properly afterwards.
    await s.client.openDocument(fileUri('/home/alice/proj/AFTER.md'), '@');
    const list = await s.client.completion(fileUri('/home/alice/proj/AFTER.md'), { line: 0, character: 1 });
    expect(list.items.map((item) => item.label)).toEqual(expect.arrayContaining(['Alpha title', 'Beta title', 'gamma']));
    recordFigure('protocol-abuse', 'malformed notifications', sent);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });

  it('answers every command with arguments of the wrong shape with the contract’s codes, never an internal error', async () => {
    const s = await server();
    // Every command the server announces (the contract's commands, and the editor's when wired).
    const commands = s.initialized.capabilities.executeCommandProvider?.commands ?? [];
    expect(commands).toEqual(expect.arrayContaining([SessionCommands.candidates, SessionCommands.prepare, SessionCommands.parse, SessionCommands.formatMention]));
    let sent = 0;
    for (const command of commands) {
      for (const args of MALFORMED_ARGUMENTS) {
        const answer = await answerOf(s, 'workspace/executeCommand', { command, arguments: args });
        sent++;
        if (answer.ok) continue;
        // The argument is the client's mistake: InvalidParams with a SESSION_REFERENCE code, never a fault.
        expect({ command, args, code: answer.code }).toEqual({ command, args, code: JsonRpcErrorCodes.InvalidParams });
        expect(['SESSION_REFERENCE_INVALID_REFERENCE', 'SESSION_REFERENCE_INVALID_CONFIG']).toContain((answer.data as { code?: string }).code);
      }
    }
    for (const unknown of ['dshSession.launchMissiles', '', 'DSHSESSION.PARSE', 'dshSession.parse ', '__proto__', 'constructor']) {
      expect(await answerOf(s, 'workspace/executeCommand', { command: unknown, arguments: [{ text: 'x' }] })).toMatchObject({
        ok: false,
        code: JsonRpcErrorCodes.MethodNotFound,
      });
    }
    recordFigure('protocol-abuse', 'malformed command calls', sent);
    await expectServing(s);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });
});

/** A document of `bytes` bytes: prose lines with `@` tokens, e-mail addresses and mention fragments. */
function bigDocument(bytes: number): string {
  const line = 'Some prose with @al and me@example.com and @[half](dsh-session: and dsh-session:%%% here.\n';
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

describe('large documents', () => {
  it('a 10 MB document: opened, edited, completed, prepared, hovered, linked and checked, with memory bounded', async () => {
    const s = await server();
    const baselineKb = s.rssKb();
    const size = 10 * 1024 * 1024;
    const text = bigDocument(size);
    const lines = text.split('\n').length;
    await s.client.openDocument(DOC, text);
    // Complete at the very end, hover in the middle, links for the whole document.
    await s.client.changeDocument(DOC, [{ range: { start: { line: lines - 1, character: 0 }, end: { line: lines - 1, character: 0 } }, text: '@Alpha' }]);
    const list = await s.client.completion(DOC, { line: lines - 1, character: '@Alpha'.length });
    expect(list.items.map((item) => item.label)).toContain('Alpha title');
    // Its `dsh-session:%%%` fragments are plain text, its half mentions too: it prepares with nothing referenced.
    const prepared = await answerOf(s, 'workspace/executeCommand', { command: SessionCommands.prepare, arguments: [{ textDocument: { uri: DOC } }] });
    expect(prepared.ok).toBe(true);
    expect((prepared as { value: PreparedReferencedMessage }).value.additionalContext).toBeUndefined();
    expect(await answerOf(s, 'textDocument/hover', { textDocument: { uri: DOC }, position: { line: Math.floor(lines / 2), character: 17 } })).toMatchObject({ ok: true });
    expect(await answerOf(s, 'textDocument/documentLink', { textDocument: { uri: DOC } })).toMatchObject({ ok: true, value: [] });
    expect(await answerOf(s, 'textDocument/codeAction', { textDocument: { uri: DOC }, range: { start: { line: 0, character: 0 }, end: { line: lines, character: 0 } }, context: { diagnostics: [] } })).toMatchObject({ ok: true });
    // Its `dsh-session:%%%` fragments are plain text to dsh, so it publishes no error for them.
    const published = await pollUntil(() => s.client.messages('textDocument/publishDiagnostics').find((m) => (m.params as { uri: string }).uri === DOC), 60_000, 'diagnostics of the 10 MB document');
    expect((published.params as { diagnostics: Diagnostic[] }).diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    await expectServing(s);
    const growthKb = s.peakRssKb() - baselineKb;
    recordFigure('protocol-abuse', '10 MB document: peak RSS growth KiB', growthKb);
    // Bounded: a small multiple of the document (its text, line offsets, one scan), not unbounded growth.
    expect(growthKb * 1024).toBeLessThan(15 * size);
    await s.client.closeDocument(DOC);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });

  it('a document with 10,000 mentions: parse, prepare, links, hover and diagnostics answer; TOO_MANY as dsh would say', async () => {
    const s = await server();
    const count = 10_000;
    const ids = ['alpha', 'beta', 'gamma', 'missing'];
    const mentions = Array.from({ length: count }, (_, i) => formatSessionReferenceMention({ sessionId: ids[i % ids.length]!, label: `m${i}` }));
    const text = mentions.map((mention, i) => (i % 10 === 9 ? `${mention}\n` : `${mention} `)).join('');
    await s.client.openDocument(DOC, text);
    const parsed = await answerOf(s, 'workspace/executeCommand', { command: SessionCommands.parse, arguments: [{ text }] });
    expect((parsed as { value: { references: unknown[] } }).value.references).toHaveLength(count);
    const prepared = await answerOf(s, 'workspace/executeCommand', { command: SessionCommands.prepare, arguments: [{ textDocument: { uri: DOC } }] });
    expect(prepared).toMatchObject({ ok: false, code: JsonRpcErrorCodes.InvalidParams, data: { code: 'SESSION_REFERENCE_TOO_MANY' } });
    // Completion inside that document still answers, after the last mention.
    const lastLine = text.split('\n').length - 1;
    await s.client.changeDocument(DOC, [{ range: { start: { line: lastLine, character: 0 }, end: { line: lastLine, character: 0 } }, text: '@gam ' }]);
    const list = await s.client.completion(DOC, { line: lastLine, character: 4 });
    expect(list.items.map((item) => item.label)).toEqual(['gamma']);
    const links = await answerOf(s, 'textDocument/documentLink', { textDocument: { uri: DOC } });
    expect(links.ok && Array.isArray(links.value) && links.value.length).toBe(count);
    const hover = await answerOf(s, 'textDocument/hover', { textDocument: { uri: DOC }, position: { line: 500, character: 3 } });
    expect(hover.ok && hover.value !== null).toBe(true);
    const diagnostics = await pollUntil(() => {
      const published = s.client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === DOC);
      const latest = published.at(-1)?.params as { diagnostics: Diagnostic[] } | undefined;
      return latest !== undefined && latest.diagnostics.length > 0 ? latest.diagnostics : undefined;
    }, 60_000, 'diagnostics of 10,000 mentions');
    expect(diagnostics.some((d) => d.code === 'SESSION_REFERENCE_TOO_MANY')).toBe(true);
    // The same mentions, one session only: dedupe makes it one reference, and it prepares.
    const one = Array.from({ length: count }, () => formatSessionReferenceMention({ sessionId: 'alpha' })).join(' ');
    const single = await answerOf(s, 'workspace/executeCommand', { command: SessionCommands.prepare, arguments: [{ text: one }] });
    expect(single.ok).toBe(true);
    expect((single as { value: PreparedReferencedMessage }).value.additionalContext!.source.references.map((r) => r.sessionId)).toEqual(['alpha']);
    recordFigure('protocol-abuse', 'mentions in one document', count);
    await expectServing(s);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });
});

/**
 * A document of about `bytes` bytes dense with mentions: a problem every ~20 bytes (unknown sessions,
 * malformed, non-canonical and glued URIs), as the hostile probe wrote them.
 */
function denseDocument(bytes: number): string {
  const line = `${formatSessionReferenceMention({ sessionId: 'missing', label: 'm' })} dsh-session:b1 @[x](dsh-session:) dsh-session:zz%\n`;
  return line.repeat(Math.ceil(bytes / line.length));
}

describe('documents too big or too dense', () => {
  it('a 20 MB document dense with mentions: another document is answered while its diagnostics are computed; at most 1,000 are listed', async () => {
    const s = await server();
    const small = fileUri('/home/alice/proj/small.md');
    await s.client.openDocument(small, '@');
    await s.client.openDocument(DOC, denseDocument(20_000_000));
    const bigPublished = () => s.client.messages('textDocument/publishDiagnostics').find((m) => (m.params as { uri: string }).uri === DOC);
    // Completions on the small document, one after the other, until the big one's diagnostics are out:
    // each answered before them was answered while they were being computed.
    let answeredBefore = 0;
    const deadline = Date.now() + 120_000;
    while (bigPublished() === undefined) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the diagnostics of the dense document');
      const list = await s.client.completion(small, { line: 0, character: 1 });
      expect(list.items.map((item) => item.label)).toContain('Alpha title');
      if (bigPublished() === undefined) answeredBefore++;
    }
    recordFigure('protocol-abuse', '20 MB dense document: small-document completions answered while its diagnostics were computed', answeredBefore);
    expect(answeredBefore).toBeGreaterThanOrEqual(10);
    const diagnostics = (bigPublished()!.params as { diagnostics: Diagnostic[] }).diagnostics;
    expect(diagnostics.length).toBeLessThanOrEqual(MAX_DIAGNOSTICS_PER_DOCUMENT + 6);
    expect(diagnostics.at(-1)).toMatchObject({ severity: 3, data: { kind: 'more-left-out' } });
    await expectServing(s);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });

  it('a document over the size limit: the user is told once, its features answer empty, and a small text brings it back', async () => {
    const s = await server();
    const huge = fileUri('/home/alice/proj/huge.md');
    const text = '@Alpha and some prose\n'.repeat(Math.ceil((MAX_DOCUMENT_LENGTH + 1) / 22)).slice(0, MAX_DOCUMENT_LENGTH + 1);
    await s.client.openDocument(huge, text);
    const told = (): unknown[] => s.client.messages('window/showMessage').filter((m) => (m.params as { message: string }).message.includes(huge));
    await pollUntil(() => (told().length > 0 ? true : undefined), 60_000, 'the message about the document too large');
    expect(told()[0]).toMatchObject({ params: { type: 2, message: expect.stringMatching(/too large \(32\.0 MB of text; the limit is 32\.0 MB\)/) } });
    expect(s.stderr()).toContain(`${huge} is too large`);
    expect(await s.client.completion(huge, { line: 0, character: 6 })).toEqual({ isIncomplete: false, items: [] });
    expect(await answerOf(s, 'textDocument/hover', { textDocument: { uri: huge }, position: { line: 0, character: 2 } })).toEqual({ ok: true, value: null });
    expect(await answerOf(s, 'textDocument/documentLink', { textDocument: { uri: huge } })).toEqual({ ok: true, value: [] });
    // Edits of a refused document are not applied (its text is not kept), and nothing more is said.
    await s.client.changeDocument(huge, [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: 'x' }]);
    await expectServing(s);
    expect(told()).toHaveLength(1);
    // Replaced whole by a text under the limit, it is a document again.
    await s.client.changeDocument(huge, '@Alp');
    expect((await s.client.completion(huge, { line: 0, character: 4 })).items.map((item) => item.label)).toContain('Alpha title');
    expect(escapedFaults(s.stderr())).toEqual([]);
  });

  it('a request over the message limit is answered with an error, without being read, and the server goes on', async () => {
    const s = await server();
    const error = await responseErrorOf(s.client.executeCommand(SessionCommands.parse, { text: 'x'.repeat(MAX_MESSAGE_BYTES) }));
    expect(error).toMatchObject({ code: JsonRpcErrorCodes.RequestFailed, data: { code: MESSAGE_TOO_LARGE_CODE, limit: MAX_MESSAGE_BYTES } });
    expect(error.message).toMatch(/^workspace\/executeCommand is \d+ bytes, over the limit of \d+: it was not read$/);
    await expectServing(s);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });

  it('a message declaring Content-Length 2,000,000,000: its body is dropped as it streams in, memory stays flat, the user is told', async () => {
    const s = await server();
    const baselineKb = s.peakRssKb();
    const huge = fileUri('/home/alice/proj/stream.md');
    const head = `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"${huge}","languageId":"markdown","version":1,"text":"`;
    await s.client.writeRawDrained(`Content-Length: 2000000000\r\n\r\n${head}`);
    const piece = Buffer.alloc(4 * 1024 * 1024, 0x61);
    const streamed = scaled(400, 1500) * 1024 * 1024;
    for (let sent = 0; sent < streamed; sent += piece.length) await s.client.writeRawDrained(piece);
    await pollUntil(() => s.client.messages('window/showMessage').find((m) => (m.params as { message: string }).message.includes(huge)), 30_000, 'the message about the unread document');
    expect(s.stderr()).toMatch(/a message of 2000000000 bytes is over the limit of \d+ and is not read \(textDocument\/didOpen of file:/);
    expect(s.running()).toBe(true);
    const growthKb = s.peakRssKb() - baselineKb;
    recordFigure('protocol-abuse', `Content-Length 2e9, ${streamed / 1024 / 1024} MB streamed: peak RSS growth KiB`, growthKb);
    // Flat: the chunks in flight and those the collector has not freed yet (tens of MB), not the body.
    expect(growthKb).toBeLessThan(128 * 1024);
  });
});

describe('paths no file system can hold', () => {
  it('a file mention whose path holds a NUL is answered, and nothing escapes a handler', async () => {
    const folder = temporary.make('nul-workspace');
    mkdirSync(path.join(folder, 'src'));
    writeFileSync(path.join(folder, 'src', 'a.md'), 'x');
    const s = await startMeasuredServer(temporary, root(), { folder });
    servers.push(s);
    await waitForListing(s.client, SESSIONS.length);
    const doc = fileUri(path.join(folder, 'PROMPT.md'));
    for (const token of ['@src\u0000x/', '@\u0000', '@"src/\u0000 x/', '@src/a\u0000.md']) {
      await s.client.openDocument(doc, token);
      const answer = await answerOf(s, 'textDocument/completion', { textDocument: { uri: doc }, position: { line: 0, character: token.length } });
      expect(answer).toMatchObject({ ok: true });
      await s.client.closeDocument(doc);
    }
    await expectServing(s);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });
});

describe('bursts', () => {
  it('edits and completions with cancellations: every completion answers or is cancelled, the last one sees the last text', async () => {
    const s = await server();
    const rounds = scaled(300, 3000);
    await s.client.openDocument(DOC, '');
    let text = '';
    const pending: Array<Promise<'answered' | 'cancelled'>> = [];
    const sources: CancellationTokenSource[] = [];
    for (let i = 0; i < rounds; i++) {
      const piece = i % 7 === 0 ? '\n@' : i % 3 === 0 ? ' @' : 'a';
      const end = { line: text.split('\n').length - 1, character: text.length - text.lastIndexOf('\n') - 1 };
      await s.client.changeDocument(DOC, [{ range: { start: end, end }, text: piece }]);
      text += piece;
      const position = { line: text.split('\n').length - 1, character: text.length - text.lastIndexOf('\n') - 1 };
      const source = new CancellationTokenSource();
      sources.push(source);
      const request = s.client.connection.sendRequest<CompletionList>(
        'textDocument/completion',
        { textDocument: { uri: DOC }, position, context: { triggerKind: 1 } },
        source.token,
      );
      pending.push(
        request.then(
          (list) => {
            expect(Array.isArray(list.items)).toBe(true);
            return 'answered' as const;
          },
          (error: unknown) => {
            expect(error).toBeInstanceOf(ResponseError);
            expect((error as ResponseError<unknown>).code).toBe(JsonRpcErrorCodes.RequestCancelled);
            return 'cancelled' as const;
          },
        ),
      );
      // Cancel every other request: some at once, some a little later, some after they were answered.
      if (i % 2 === 0) {
        if (i % 4 === 0) source.cancel();
        else setTimeout(() => source.cancel(), i % 5);
      }
    }
    const outcomes = await Promise.all(pending);
    const cancelled = outcomes.filter((o) => o === 'cancelled').length;
    expect(outcomes.length).toBe(rounds);
    expect(cancelled).toBeLessThanOrEqual(Math.ceil(rounds / 2));
    // The server's copy of the document is the client's: the final completion answers for the final text.
    await s.client.changeDocument(DOC, [{ range: { start: { line: text.split('\n').length - 1, character: 0 }, end: { line: text.split('\n').length - 1, character: text.length - text.lastIndexOf('\n') - 1 } }, text: '@Beta' }]);
    const finalList = await s.client.completion(DOC, { line: text.split('\n').length - 1, character: 5 });
    expect(finalList.items.map((item) => item.label)).toEqual(['Beta title']);
    recordFigure('protocol-abuse', 'burst: completions sent / cancelled', `${rounds} / ${cancelled}`);
    await expectServing(s);
    expect(escapedFaults(s.stderr())).toEqual([]);
  });
});
