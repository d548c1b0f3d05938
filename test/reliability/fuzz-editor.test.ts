/**
 * Fuzzing the editor features with random documents (beyond completion): mentions of
 * sessions that exist, are missing, are the target, cannot be read or cannot fit the budget; bare,
 * glued and non-canonical URIs; grammar fragments and hostile text; random limits. Diagnostics agree
 * with `prepare` (no error diagnostic ⇔ it prepares; else it fails with the first error's code), and
 * diagnostics, hovers, links and code actions never throw and only show display-safe, inert text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic, MarkupContent, Range } from 'vscode-languageserver/node';
import { SessionCommands, encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { provideCodeActions } from '../../server/src/features/codeActions';
import { executeSessionCommand } from '../../server/src/features/commands';
import { computeDiagnostics } from '../../server/src/features/diagnostics';
import { predictedPrepareError } from '../../server/src/testing/prepareError';
import { provideDocumentLinks } from '../../server/src/features/documentLinks';
import { provideMentionHover } from '../../server/src/features/hover';
import { testWorkspace } from '../../server/src/testing/testWorkspace';
import { SessionReadError } from '../../server/src/resolver';
import type { InMemorySession } from '../../server/src/testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../../server/src/testing/testLogs';
import { UNSAFE_DISPLAY_CHARACTERS, grammarText, hostileText } from './support/arbitraries';
import { activeMarkdownProblems } from './support/inertMarkdown';
import { asyncOutcomeOf } from './support/outcome';
import { FUZZ_RUNS, recordFigure, scaled } from './support/scale';

const RUNS = Math.max(50, Math.floor(FUZZ_RUNS / 3));

/** The store every document is checked against: ordinary, hostile, big, unreadable sessions, and the target. */
function sessions(): InMemorySession[] {
  const log = (title: string | undefined, ...texts: string[]) => {
    const builder = new SessionLogBuilder();
    texts.forEach((text, i) => (i % 2 === 0 ? builder.user(text) : builder.assistant(text)));
    if (title !== undefined) builder.title(title);
    return builder.events();
  };
  return [
    { header: { id: 'alpha', cwd: '/w', createdAt: 50 }, events: log('Alpha title', 'hi', 'hello') },
    { header: { id: 'beta', cwd: '/w', createdAt: 40 }, events: log(undefined, 'q', 'a') },
    { header: { id: 'hostile', cwd: '/w\u202e', createdAt: 30 }, events: log('\u202e[x](command:evil) <b>', '[x](https://evil.example)', '\u0007') },
    { header: { id: 'big', createdAt: 20 }, events: log('Big', 'x'.repeat(5000), 'y'.repeat(5000)) },
    { header: { id: 'broken', createdAt: 10 }, events: log('Broken', 'p') },
    { header: { id: 'me', cwd: '/w', createdAt: 5 }, events: log('Target', 'p') },
  ];
}
const IDS = ['alpha', 'beta', 'hostile', 'big', 'broken', 'me', 'missing', ''];

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.record({ sessionId: fc.constantFrom(...IDS), label: fc.option(fc.oneof(hostileText(3), fc.constantFrom('Alpha title', 'old label', 'L'.repeat(400))), { nil: undefined }) }).map((ref) => formatSessionReferenceMention(ref.label === undefined ? { sessionId: ref.sessionId } : { sessionId: ref.sessionId, label: ref.label })) },
  { weight: 2, arbitrary: fc.constantFrom(...IDS).map((id) => encodeSessionReferenceUri(id)) },
  { weight: 1, arbitrary: fc.constantFrom(...IDS).map((id) => `${encodeSessionReferenceUri(id)}x`) },
  { weight: 1, arbitrary: fc.constantFrom('dsh-session:IiJ', '@[x](dsh-session:IiJ)', '@[x](dsh-session:%%%)', 'https://x/dsh-session:ImFscGhhIg', 'dsh-session: ', '@[x](dsh-session:)') },
  { weight: 3, arbitrary: fc.constantFrom(' ', '\n', '\r\n', ' and ', '@', '@al') },
  { weight: 2, arbitrary: grammarText(6) },
  { weight: 1, arbitrary: hostileText(3) },
);

const scenario = fc.record({
  text: fc.array(piece, { maxLength: 10 }).map((pieces) => pieces.join('')),
  section: fc.record(
    {
      maxReferences: fc.integer({ min: 1, max: 3 }),
      maxReferenceBytes: fc.constantFrom(300, 2000, 65536),
      targetSessionId: fc.constantFrom('me', 'alpha'),
    },
    { requiredKeys: [] },
  ),
  line: fc.nat({ max: 12 }),
  character: fc.nat({ max: 120 }),
});

/** Where a range lies is a real place in the document. */
function expectInside(document: TextDocument, range: Range): void {
  const start = document.offsetAt(range.start);
  const end = document.offsetAt(range.end);
  expect(start).toBeLessThanOrEqual(end);
  expect(document.positionAt(start)).toEqual(range.start);
  expect(document.positionAt(end)).toEqual(range.end);
}

describe('editor features on random documents', () => {
  it('diagnostics agree with prepare, and nothing shown is unsafe or active', { timeout: scaled(60_000, 600_000) }, async () => {
    const tally = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(scenario, async ({ text, section, line, character }) => {
        const document = TextDocument.create('file:///w/PROMPT.md', 'markdown', 1, text);
        const { workspace, store } = testWorkspace(sessions(), { documents: [document], folders: ['/w'], section });
        store.failRead('broken', new SessionReadError('corrupt', 'corrupt session log "broken": injected'));

        const diagnostics: Diagnostic[] = await computeDiagnostics(document, workspace);
        const predicted = predictedPrepareError(diagnostics);
        const prepared = await asyncOutcomeOf(() => executeSessionCommand(SessionCommands.prepare, [{ textDocument: { uri: document.uri } }], workspace));
        const actual = prepared.ok ? undefined : prepared.error.code;
        expect({ text, section, code: actual }).toEqual({ text, section, code: predicted });
        tally.set(actual ?? 'prepares', (tally.get(actual ?? 'prepares') ?? 0) + 1);

        for (const diagnostic of diagnostics) {
          expectInside(document, diagnostic.range);
          expect(diagnostic.source).toBe('dsh-session');
          const text = typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value;
          expect(text.replace(/\n/g, ' ')).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
        }
        const hover = await provideMentionHover(document, { line, character }, workspace);
        if (hover !== null) {
          expect(activeMarkdownProblems((hover.contents as MarkupContent).value)).toEqual([]);
          expectInside(document, hover.range!);
        }
        for (const link of provideDocumentLinks(document)) {
          expectInside(document, link.range);
          expect(link.target!.startsWith('dsh-session:')).toBe(true);
          expect(link.tooltip ?? '').not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
        }
        const whole = { start: { line: 0, character: 0 }, end: document.positionAt(text.length) };
        const actions = await provideCodeActions(document, whole, { diagnostics }, workspace);
        for (const action of actions) {
          expect(action.title).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
          const edits = Object.values(action.edit?.changes ?? {}).flat();
          for (const edit of edits) {
            expectInside(document, edit.range);
            expect(edit.newText).not.toMatch(UNSAFE_DISPLAY_CHARACTERS);
          }
          // Each action's edits apply cleanly (no overlaps).
          if (edits.length > 0) expect(() => TextDocument.applyEdits(document, edits)).not.toThrow();
        }
      }),
      { numRuns: RUNS },
    );
    recordFigure('fuzz-editor', 'runs', RUNS);
    recordFigure('fuzz-editor', 'prepare outcomes', JSON.stringify(Object.fromEntries(tally)));
  });
});
