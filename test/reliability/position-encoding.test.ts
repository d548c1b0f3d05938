/**
 * Position encodings, against the built server: a client that offers only UTF-8
 * gets `positionEncoding: 'utf-8'`, and then every position it sends or receives counts UTF-8 bytes:
 * incremental edits around `会` and astral characters (one change per notification and several), the
 * completion edit, document links, diagnostics, code actions and hover. The server's copy of the text
 * (shown by `dshSession.preview`) stays equal to the client's, with no U+FFFD anywhere. Clients that do
 * not offer UTF-8 first keep UTF-16.
 */
import fc from 'fast-check';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { CompletionItem, Diagnostic, DocumentLink, Hover, Position, Range, TextEdit } from 'vscode-languageserver-protocol';
import { SessionCommands, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { FULL_CLIENT_CAPABILITIES, LspTestClient, REPO_ROOT, fileUri, pollUntil } from '../support/lspClient';
import { recordFigure, scaled } from './support/scale';
import { TemporaryDirectories } from './support/stores';

const temporary = new TemporaryDirectories();
const clients: LspTestClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.dispose();
});
afterAll(() => temporary.removeAll());

const EXAMPLE_STORE = path.join(REPO_ROOT, 'examples', 'store');
const WEATHER_APP = '/home/sam/weather-app';
const EDIT_RUNS = scaled(40, 400);

async function start(positionEncodings: string[] | undefined): Promise<{ client: LspTestClient; encoding: unknown }> {
  const home = temporary.make('encoding');
  const client = LspTestClient.start({ env: { XDG_CACHE_HOME: path.join(home, 'cache'), DSH_HOME: path.join(home, 'dsh') } });
  clients.push(client);
  const result = await client.initialize({
    capabilities: { ...FULL_CLIENT_CAPABILITIES, workspace: {}, ...(positionEncodings === undefined ? {} : { general: { positionEncodings } }) },
    initializationOptions: { sessionsRoot: EXAMPLE_STORE },
    workspaceFolders: [{ uri: fileUri(WEATHER_APP), name: 'weather-app' }],
    rootUri: fileUri(WEATHER_APP),
  });
  return { client, encoding: result.capabilities.positionEncoding };
}

// ---- the client's side, in UTF-8 bytes ------------------------------------------------------

const lineStarts = (text: string): number[] => [0, ...[...text.matchAll(/\n/g)].map((match) => match.index! + 1)];

/** A UTF-16 offset of `text` as a position counted in UTF-8 bytes. */
function bytePosition(text: string, offset: number): Position {
  const starts = lineStarts(text);
  let line = 0;
  while (line + 1 < starts.length && starts[line + 1]! <= offset) line++;
  return { line, character: Buffer.byteLength(text.slice(starts[line], offset)) };
}

/** A position counted in UTF-8 bytes as a UTF-16 offset of `text` (it must fall on a character boundary). */
function byteOffset(text: string, position: Position): number {
  const start = lineStarts(text)[position.line]!;
  const end = text.indexOf('\n', start) < 0 ? text.length : text.indexOf('\n', start);
  const bytes = Buffer.from(text.slice(start, end));
  const prefix = bytes.subarray(0, position.character).toString('utf8');
  expect(Buffer.byteLength(prefix), `a byte column inside a character: ${JSON.stringify(position)}`).toBe(Math.min(position.character, bytes.length));
  return start + prefix.length;
}

function applyByteEdit(text: string, range: Range, newText: string): string {
  return text.slice(0, byteOffset(text, range.start)) + newText + text.slice(byteOffset(text, range.end));
}

/** The message text inside the preview's first fenced block (the server's copy of the document). */
async function serverText(client: LspTestClient, uri: string): Promise<string> {
  const markdown = await client.executeCommand<string>(SessionCommands.preview, { textDocument: { uri } });
  const match = /^(`{3,})text\n([\s\S]*?)\n\1$/m.exec(markdown);
  if (!match) throw new Error(`no fenced message in the preview:\n${markdown}`);
  return match[2]!;
}

/** Code point boundaries of `text` (UTF-16 offsets), so edits never split a character. */
function boundaries(text: string): number[] {
  const offsets = [0];
  for (const character of text) offsets.push(offsets[offsets.length - 1]! + character.length);
  return offsets;
}

const PIECES = ['a', 'é', '会', '议', '😀', '𝒜', ' ', '\n', 'x1'];

describe('position encoding negotiation', () => {
  it.each([
    [['utf-8'], 'utf-8'],
    [['utf-8', 'utf-16'], 'utf-8'],
    [['utf-32', 'utf-8'], 'utf-8'],
    [['utf-16', 'utf-8'], 'utf-16'],
    [['utf-32'], 'utf-16'],
    [undefined, 'utf-16'],
  ] as const)('a client offering %j gets %s', async (offered, expected) => {
    const { encoding } = await start(offered === undefined ? undefined : [...offered]);
    expect(encoding).toBe(expected);
  });
});

describe('a client that counts UTF-8 bytes', () => {
  it(`keeps the server's text equal to its own through ${EDIT_RUNS} runs of byte-ranged edits around 会 and astral characters`, async () => {
    const { client, encoding } = await start(['utf-8']);
    expect(encoding).toBe('utf-8');
    let changes = 0;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: fc.constantFrom(...PIECES), maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.string({ unit: fc.constantFrom(...PIECES), maxLength: 6 })), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (lines, edits, batched) => {
          const uri = `file:///work/note-${run++}.md`;
          let text = lines.join('\n');
          await client.openDocument(uri, text);
          const batch: Array<{ range: Range; text: string }> = [];
          for (const [a, b, inserted] of edits) {
            const points = boundaries(text);
            const start = points[a % points.length]!;
            const end = points[Math.max(a % points.length, b % points.length)]!;
            const range = { start: bytePosition(text, start), end: bytePosition(text, end) };
            text = text.slice(0, start) + inserted + text.slice(end);
            if (batched) batch.push({ range, text: inserted });
            else await client.changeDocument(uri, [{ range, text: inserted }]);
            changes++;
          }
          if (batched) await client.changeDocument(uri, batch);
          const seen = await serverText(client, uri);
          expect(seen).not.toContain('\uFFFD');
          expect(seen).toBe(text);
          await client.closeDocument(uri);
        },
      ),
      { numRuns: EDIT_RUNS },
    );
    recordFigure('position encoding', 'UTF-8 edit runs / changes applied', `${EDIT_RUNS} / ${changes}`);
  }, 300_000);

  it('gets completion edits, links, diagnostics, code actions and hovers in bytes', async () => {
    const { client } = await start(['utf-8']);
    const uri = 'file:///home/sam/weather-app/note.md';
    // Wait for the example sessions (the first index).
    await pollUntil(async () => ((await client.executeCommand<unknown[]>(SessionCommands.candidates, {})).length >= 5 ? true : undefined), 20_000, 'the example sessions');

    // Completion after 会 and an astral character: the edit replaces the query, counted in bytes.
    let text = '会议 😀 𝒜 see @hourl';
    await client.openDocument(uri, text);
    const list = await client.completion(uri, bytePosition(text, text.length));
    const item = list.items.find((candidate: CompletionItem) => candidate.kind !== 17 && candidate.detail !== undefined) ?? list.items[0]!;
    expect(item, JSON.stringify(list.items.slice(0, 3))).toBeDefined();
    const edit = item.textEdit as TextEdit;
    expect(edit.range).toEqual({ start: bytePosition(text, text.indexOf('@') + 1), end: bytePosition(text, text.length) });
    const accepted = applyByteEdit(text, edit.range, edit.newText);
    expect(accepted.startsWith('会议 😀 𝒜 see @')).toBe(true);
    expect(accepted).not.toContain('\uFFFD');
    await client.changeDocument(uri, [{ range: edit.range, text: edit.newText }]);
    expect(await serverText(client, uri)).toBe(accepted.replace(/@\[([^\]]*)\]\([^)]*\)/, '@$1'));

    // A mention of a missing session after multi-byte text: its link, diagnostic, code action and hover in bytes.
    const missing = formatSessionReferenceMention({ sessionId: 'no-such-session', label: 'gone 会' });
    text = `会😀 ${missing} 𝒜\n${accepted}`;
    await client.changeDocument(uri, text);
    const mentionRange = { start: bytePosition(text, text.indexOf('@')), end: bytePosition(text, text.indexOf('@') + missing.length) };
    const links = await client.request<DocumentLink[]>('textDocument/documentLink', { textDocument: { uri } });
    expect(links.map((link) => link.range)).toContainEqual(mentionRange);
    const published = await pollUntil(() => {
      const last = [...client.fromServer].reverse().find((message) => message.method === 'textDocument/publishDiagnostics' && (message.params as { uri: string }).uri === uri);
      const diagnostics = (last?.params as { diagnostics: Diagnostic[] } | undefined)?.diagnostics;
      return diagnostics?.some((diagnostic) => diagnostic.range.start.line === 0) ? diagnostics : undefined;
    }, 20_000, 'the diagnostic of the missing session');
    const diagnostic = published.find((candidate) => candidate.range.start.line === 0)!;
    expect(diagnostic.range).toEqual(mentionRange);
    const actions = await client.request<Array<{ title: string; diagnostics?: Diagnostic[]; edit?: { changes: Record<string, TextEdit[]> } }>>('textDocument/codeAction', {
      textDocument: { uri },
      range: mentionRange,
      context: { diagnostics: [diagnostic] },
    });
    const removal = actions.find((action) => action.edit !== undefined)!;
    expect(removal.diagnostics).toEqual([diagnostic]);
    const removalEdit = removal.edit!.changes[uri]![0]!;
    const removed = applyByteEdit(text, removalEdit.range, removalEdit.newText);
    expect(removed.startsWith('会😀 ')).toBe(true);
    expect(removed).not.toContain('no-such-session');
    expect(removed).not.toContain('\uFFFD');
    // Hover over the label's 会 (its first byte), and inside it (its second byte): same mention, same range.
    const labelAt = text.indexOf('gone 会') + 'gone '.length;
    for (const nudge of [0, 1]) {
      const at = bytePosition(text, labelAt);
      const hover = await client.request<Hover | null>('textDocument/hover', { textDocument: { uri }, position: { line: at.line, character: at.character + nudge } });
      expect(hover?.range).toEqual(mentionRange);
    }
  }, 120_000);
});
