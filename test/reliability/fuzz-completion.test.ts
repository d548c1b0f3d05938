/**
 * Fuzzing completion positions: random documents full of `@`, mention fragments,
 * CRLF and surrogates; random (also out-of-range) positions; sessions with hostile titles and ids.
 * Through the server's completion feature (sessions and files), nothing throws; session items
 * appear exactly at an `@` token, in the resolver's order, display-safe, and each accepted item
 * inserts a mention of its session; file items come as one group, first only for a path-like token,
 * in `sortText` order, and are display-safe too.
 */
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { TextEdit } from 'vscode-languageserver/node';
import { parseSessionReferenceText, scanSessionMentions } from '@dsh-session-ls/shared';
import { isSessionCompletionData, type SessionCompletionData } from '../../server/src/features/completion';
import { provideMentionCompletion } from '../../server/src/features/fileMentions';
import { testWorkspace } from '../../server/src/testing/testWorkspace';
import type { InMemorySession } from '../../server/src/testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../../server/src/testing/testLogs';
import { UNSAFE_DISPLAY_CHARACTERS, grammarText, hostileText, sessionIdArb } from './support/arbitraries';
import { FUZZ_RUNS, recordFigure, scaled } from './support/scale';
import { TemporaryDirectories } from './support/stores';

const RUNS = Math.max(50, Math.floor(FUZZ_RUNS / 2));
recordFigure('fuzz-completion', 'runs', RUNS);

/** The `@` token rule of lsp-contract.md, written independently: [at, end, query] or undefined. */
function tokenAt(text: string, offset: number): { at: number; end: number; query: string } | undefined {
  let start = offset;
  while (start > 0 && !/\s/.test(text[start - 1]!)) start--;
  if (start === offset || text[start] !== '@') return undefined;
  let end = offset;
  while (end < text.length && !/\s/.test(text[end]!)) end++;
  const query = text.slice(start + 1, offset);
  if (query.startsWith('"')) return undefined;
  const insideMention = [...scanSessionMentions(text)].some((mention) => mention.start < end && mention.end > start);
  return insideMention ? undefined : { at: start, end, query };
}

const sessionsArb = fc.uniqueArray(
  fc.record({
    id: sessionIdArb,
    title: fc.option(hostileText(5), { nil: undefined }),
    cwd: fc.option(fc.oneof(fc.constant('/w'), hostileText(3)), { nil: undefined }),
    createdAt: fc.integer({ min: 0, max: 2_000_000_000_000 }),
  }),
  { selector: (s) => s.id, minLength: 1, maxLength: 8 },
);

const documentArb = fc
  .array(fc.oneof(grammarText(8), hostileText(4), fc.constantFrom('@', ' @', '\n@', '\r\n@', '@"quoted', 'me@example.com', ' @a', '\t@')), {
    maxLength: 8,
  })
  .map((parts) => parts.join(''));

function sessionsOf(generated: ReadonlyArray<{ id: string; title?: string; cwd?: string; createdAt: number }>): InMemorySession[] {
  return generated.map((s) => {
    const log = new SessionLogBuilder();
    log.user('hello');
    if (s.title !== undefined) log.title(s.title);
    return { header: { id: s.id, ...(s.cwd === undefined ? {} : { cwd: s.cwd }), createdAt: s.createdAt }, events: log.events() };
  });
}

const temporary = new TemporaryDirectories();
/** A workspace folder with ordinary and hostile file names, for the file half of completion. */
let folder: string;
beforeAll(() => {
  folder = temporary.make('completion-folder');
  for (const name of ['notes.md', 'src/app.ts', 'my file.md', 'a\u202eb.md', '[x](command:y).md', 'dsh-session:IiI.md', '@at.md', 'x\u0007y.md']) {
    mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
    writeFileSync(path.join(folder, name), 'x');
  }
});
afterAll(() => temporary.removeAll());

describe('completion at random positions in random documents', () => {
  it('never throws, answers only at an @ token, in the resolver’s order, with safe labels and edits that insert the mention', { timeout: scaled(60_000, 600_000) }, async () => {
    const scenario = fc.record({
      sessions: sessionsArb,
      text: documentArb,
      // Either any position (out of range too), or one near the k-th `@`, where tokens are.
      cursor: fc.oneof(
        fc.record({ line: fc.nat({ max: 12 }), character: fc.oneof(fc.nat({ max: 40 }), fc.constantFrom(0, 1, 2 ** 31 - 1)) }),
        fc.record({ at: fc.nat(), delta: fc.nat({ max: 6 }) }),
      ),
      candidateLimit: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 5 })),
      folders: fc.constantFrom('none', 'files', 'missing'),
    });
    let atToken = 0;
    let fileAnswers = 0;
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ sessions, text, cursor, candidateLimit, folders }) => {
        const uri = `file://${folder}/PROMPT.md`;
        const document = TextDocument.create(uri, 'markdown', 1, text);
        const section = candidateLimit === undefined ? undefined : { candidateLimit };
        const roots = folders === 'none' ? [] : folders === 'files' ? [folder] : ['/nowhere'];
        const { workspace } = testWorkspace(sessionsOf(sessions), { documents: [document], folders: roots, section });
        const ats: number[] = [];
        for (let i = text.indexOf('@'); i !== -1; i = text.indexOf('@', i + 1)) ats.push(i);
        const position =
          'line' in cursor
            ? cursor
            : document.positionAt(ats.length === 0 ? cursor.delta : ats[cursor.at % ats.length]! + 1 + cursor.delta);
        const list = await provideMentionCompletion(document, position, workspace);
        const items = list.items.filter((item) => isSessionCompletionData(item.data));
        const files = list.items.filter((item) => !isSessionCompletionData(item.data));
        // One group of files, before or after the sessions, and `sortText` keeps that order (clients sort by it).
        const filesFirst = files[0]?.sortText!.startsWith('a') === true;
        expect(list.items).toEqual(filesFirst ? [...files, ...items] : [...items, ...files]);
        expect(list.items.map((item) => item.sortText)).toEqual(list.items.map((item) => item.sortText).sort());
        for (const file of files) {
          expect(file.sortText![0]).toBe(filesFirst ? 'a' : 'c');
          expect(file.label).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
          expect((file.textEdit as TextEdit | undefined)?.newText ?? '').not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
        }
        if (files.length > 0) fileAnswers++;

        const offset = document.offsetAt(position);
        const token = offset >= 1 ? tokenAt(text, offset) : undefined;
        if (token === undefined) {
          expect(items).toEqual([]);
          return;
        }
        atToken++;
        // The default order: files lead only when what is typed looks like a path.
        if (files.length > 0) expect(filesFirst).toBe(/\//.test(token.query) || /^[.~]/.test(token.query));
        const resolver = workspace.resolver();
        const limit = resolver.config.candidateLimit;
        const target = await workspace.resolveTarget(undefined, uri);
        const candidates = await resolver.listCandidates(target, token.query, limit + 1);
        expect(items.map((item) => (item.data as SessionCompletionData).sessionId)).toEqual(
          candidates.slice(0, limit).map((candidate) => candidate.sessionId),
        );
        if (candidates.length > limit) expect(list.isIncomplete).toBe(true);
        if (files.length === 0) expect(list.isIncomplete).toBe(candidates.length > limit);
        if (items.length > 0) answered++;

        const range = { start: document.positionAt(token.at + 1), end: document.positionAt(token.end) };
        items.forEach((item, rank) => {
          expect(item.label).not.toBe('');
          expect(item.label).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
          expect(item.detail ?? '').not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
          expect(item.labelDetails?.description ?? '').not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
          expect(item.filterText!.startsWith(token.query + ' ')).toBe(true);
          expect(item.sortText).toBe('b' + String(rank).padStart(6, '0'));
          const edit = item.textEdit as TextEdit;
          expect(edit.range).toEqual(range);
          expect(edit.newText.startsWith('@')).toBe(false);
          expect(edit.newText).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
          // Accepting the item leaves `@` + a mention that parses back to this session, labelled as shown.
          const accepted = TextDocument.applyEdits(document, [edit]);
          const inserted = accepted.slice(token.at, token.at + 1 + edit.newText.length);
          expect(inserted).toBe('@' + edit.newText);
          const sessionId = (item.data as SessionCompletionData).sessionId;
          expect(parseSessionReferenceText(inserted).references).toEqual([{ sessionId, label: item.label }]);
        });
      }),
      { numRuns: RUNS },
    );
    recordFigure('fuzz-completion', 'runs at an @ token', atToken);
    recordFigure('fuzz-completion', 'runs with session items', answered);
    recordFigure('fuzz-completion', 'runs with file items', fileAnswers);
  });
});
