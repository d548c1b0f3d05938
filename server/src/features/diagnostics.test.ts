import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DIAGNOSTIC_SOURCE,
  SessionCommands,
  encodeSessionReferenceUri,
  formatSessionReferenceMention,
  isSessionReferenceError,
} from '@dsh-session-ls/shared';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver-types';
import { SessionReadError } from '../resolver';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { executeSessionCommand } from './commands';
import { MAX_DIAGNOSTICS_PER_DOCUMENT, computeDiagnostics } from './diagnostics';
import { DSH_ERROR_ORDER, predictedPrepareError } from '../testing/prepareError';
import { conversationSession } from '../testing/mentionFixtures';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

const URI = { a: encodeSessionReferenceUri('a'), b: encodeSessionReferenceUri('b') };

const SESSIONS: InMemorySession[] = [
  conversationSession('a', { cwd: '/w', title: 'Alpha work' }),
  conversationSession('b', { cwd: '/w' }),
  conversationSession('c', { cwd: '/w', title: 'Gamma' }),
  conversationSession('d', { cwd: '/w' }),
  conversationSession('huge', { cwd: '/w', title: 'Huge', exchanges: 40, size: 300 }),
  conversationSession('long-cwd', { cwd: '/' + 'x'.repeat(3000) }),
  conversationSession('damaged', { cwd: '/w' }),
];

interface Setup {
  section?: Record<string, unknown>;
  indexing?: boolean;
  sessions?: InMemorySession[];
}

function workspaceFor(text: string, setup: Setup = {}) {
  const document = openDocument('file:///w/message.md', text);
  const { workspace, store } = testWorkspace(setup.sessions ?? SESSIONS, {
    folders: ['/w'],
    documents: [document],
    indexing: setup.indexing,
    ...(setup.section === undefined ? {} : { section: setup.section }),
  });
  store.failRead('damaged', new SessionReadError('corrupt', 'corrupt session log: bad checksum'));
  return { document, workspace, store };
}

async function diagnose(text: string, setup: Setup = {}): Promise<Diagnostic[]> {
  const { document, workspace } = workspaceFor(text, setup);
  // As the server runs diagnostics: over what is indexed so far.
  return computeDiagnostics(document, workspace.view({ partial: true }));
}

/** The code `dshSession.prepare {text}` fails with, or undefined when it succeeds. */
async function prepareOutcome(text: string, setup: Setup = {}): Promise<string | undefined> {
  const { workspace } = workspaceFor(text, setup);
  try {
    await executeSessionCommand(SessionCommands.prepare, [{ text }], workspace);
    return undefined;
  } catch (error) {
    if (!isSessionReferenceError(error)) throw error;
    return error.code;
  }
}

const summary = (diagnostics: Diagnostic[]) => diagnostics.map((d) => [d.severity, d.code ?? null, (d.data as { kind: string }).kind]);

describe('diagnostics: mention text', () => {
  it('publishes nothing for valid mentions of readable sessions and plain text', async () => {
    const text = `see ${formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha work' })} and ${URI.b}. me@example.com dsh-session: x`;
    expect(await diagnose(text)).toEqual([]);
  });

  it('flags a malformed explicit mention over its whole range, as an INVALID_REFERENCE error', async () => {
    const text = 'x @[Alpha](dsh-session:IiJ) y';
    const [diagnostic, ...rest] = await diagnose(text);
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({
      source: DIAGNOSTIC_SOURCE,
      code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      severity: DiagnosticSeverity.Error,
      range: { start: { line: 0, character: 2 }, end: { line: 0, character: 27 } },
      data: { kind: 'malformed' },
    });
    expect(diagnostic!.message).toContain('invalid session reference URI "dsh-session:IiJ"');
  });

  it('flags @[x](dsh-session:), an explicit mention with an empty URI, as dsh does', async () => {
    const text = 'x @[Alpha](dsh-session:) y';
    expect(await diagnose(text)).toMatchObject([
      {
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
        range: { start: { line: 0, character: 2 }, end: { line: 0, character: 24 } },
        data: { kind: 'malformed' },
        message: expect.stringContaining('invalid session reference URI "dsh-session:"'),
      },
    ]);
    expect(await prepareOutcome(text)).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
  });

  it('does not read a label whose backslash comes before a line break as an explicit mention', async () => {
    // The label stops at `\` + line break, so only the bare URI inside is a mention (here a non-canonical one).
    const text = '@[x\\\ny](dsh-session:IiJ)';
    expect(await diagnose(text)).toMatchObject([
      { range: { start: { line: 1, character: 3 }, end: { line: 1, character: 18 } }, data: { kind: 'non-canonical' } },
    ]);
    expect(await diagnose(`@[x\\\u2028y](${URI.a})`)).toEqual([]);
  });

  it('flags a non-canonical bare URI', async () => {
    expect(summary(await diagnose('see dsh-session:IiJ now'))).toEqual([[DiagnosticSeverity.Error, 'SESSION_REFERENCE_INVALID_REFERENCE', 'non-canonical']]);
  });

  it.each([['abc'], ['1'], ['-x'], ['_']])('flags a bare URI glued on the right to %j as an error naming the glued text', async (glued) => {
    const [diagnostic, ...rest] = await diagnose(`see ${URI.a}${glued} now`);
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE', severity: DiagnosticSeverity.Error, data: { kind: 'glued' } });
    expect(diagnostic!.message).toContain(JSON.stringify(glued));
    expect(diagnostic!.range.end.character).toBe(4 + URI.a.length + glued.length);
  });

  it.each([['https://x/'], ['word'], ['@'], ['a=']])('warns (no code) about a bare URI right after %j, which dsh still rewrites', async (before) => {
    const [diagnostic, ...rest] = await diagnose(`see ${before}${URI.a} now`);
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ severity: DiagnosticSeverity.Warning, data: { kind: 'inside-text', sessionId: 'a' } });
    expect(diagnostic!.code).toBeUndefined();
    expect(diagnostic!.message).toContain(JSON.stringify(before));
    expect(diagnostic!.message).toContain('"@a"');
    expect(await prepareOutcome(`see ${before}${URI.a} now`)).toBeUndefined();
  });

  it('does not warn about a bare URI after whitespace or an opening bracket', async () => {
    expect(await diagnose(`(${URI.a}) "${URI.b}"\n${URI.a}`)).toEqual([]);
  });

  it('keeps ranges in UTF-16 positions on later lines (CRLF too)', async () => {
    const [diagnostic] = await diagnose('😀 first\r\nsecond 会话 dsh-session:IiJ');
    expect(diagnostic!.range).toEqual({ start: { line: 1, character: 10 }, end: { line: 1, character: 25 } });
  });
});

describe('diagnostics: sessions', () => {
  it('flags an unknown session as READ_FAILED with dsh’s reason', async () => {
    const text = formatSessionReferenceMention({ sessionId: 'nope' });
    const [diagnostic, ...rest] = await diagnose(text);
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ code: 'SESSION_REFERENCE_READ_FAILED', severity: DiagnosticSeverity.Error, data: { kind: 'unknown-session', sessionId: 'nope' } });
    expect(diagnostic!.message).toContain('session "nope" not found');
  });

  it('does not publish an unknown session while the store is still indexing', async () => {
    expect(await diagnose(formatSessionReferenceMention({ sessionId: 'nope' }), { indexing: true })).toEqual([]);
  });

  it('flags a damaged session with the read failure’s reason, indexing or not', async () => {
    for (const indexing of [false, true]) {
      const [diagnostic] = await diagnose(formatSessionReferenceMention({ sessionId: 'damaged' }), { indexing });
      expect(diagnostic).toMatchObject({ code: 'SESSION_REFERENCE_READ_FAILED', data: { kind: 'unreadable' } });
      expect(diagnostic!.message).toContain('corrupt session log: bad checksum');
    }
  });

  it('flags every mention of the target session when the target is known, and none otherwise', async () => {
    const text = `${URI.a} and ${URI.b} and ${formatSessionReferenceMention({ sessionId: 'a', label: 'Alpha work' })}`;
    const withTarget = await diagnose(text, { section: { targetSessionId: 'a' } });
    expect(summary(withTarget)).toEqual([
      [DiagnosticSeverity.Error, 'SESSION_REFERENCE_SELF_REFERENCE', 'self'],
      [DiagnosticSeverity.Error, 'SESSION_REFERENCE_SELF_REFERENCE', 'self'],
    ]);
    expect(withTarget[0]!.message).toContain('session "a" cannot reference itself');
    expect(await diagnose(text)).toEqual([]);
  });

  it('flags each mention of every distinct session past maxReferences', async () => {
    const mention = (id: string) => formatSessionReferenceMention({ sessionId: id });
    const text = [mention('a'), mention('b'), mention('a'), mention('c'), mention('d'), mention('c')].join(' ');
    const diagnostics = (await diagnose(text, { section: { maxReferences: 2 } })).filter((d) => d.severity === DiagnosticSeverity.Error);
    expect(diagnostics.map((d) => [d.range.start.character, d.code])).toEqual([
      [text.indexOf(mention('c')), 'SESSION_REFERENCE_TOO_MANY'],
      [text.indexOf(mention('d')), 'SESSION_REFERENCE_TOO_MANY'],
      [text.lastIndexOf(mention('c')), 'SESSION_REFERENCE_TOO_MANY'],
    ]);
    expect(diagnostics[0]!.message).toContain('a message may reference at most 2 sessions; this is the 3rd distinct one');
  });

  it('reports a session that will be shortened as information, with how much is omitted', async () => {
    const [diagnostic, ...rest] = await diagnose(formatSessionReferenceMention({ sessionId: 'huge', label: 'Huge' }), { section: { maxReferenceBytes: 2000 } });
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ severity: DiagnosticSeverity.Information, data: { kind: 'truncated' } });
    expect(diagnostic!.code).toBeUndefined();
    expect(diagnostic!.message).toMatch(/^dsh will shorten this session to fit 2000 bytes: \d+ of 80 messages dropped, \d+ UTF-8 bytes omitted\.$/);
  });

  it('flags a session that cannot fit the budget as BUDGET_EXCEEDED', async () => {
    const [diagnostic, ...rest] = await diagnose(formatSessionReferenceMention({ sessionId: 'long-cwd' }), { section: { maxReferenceBytes: 1000 } });
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ code: 'SESSION_REFERENCE_BUDGET_EXCEEDED', severity: DiagnosticSeverity.Error });
    expect(diagnostic!.message).toContain('referenced session snapshot cannot fit the configured byte budget');
  });

  it('measures the budget with the first mention’s label, as prepare does', async () => {
    const long = 'L'.repeat(1500);
    const text = `${formatSessionReferenceMention({ sessionId: 'b', label: long })} ${formatSessionReferenceMention({ sessionId: 'b', label: 'b' })}`;
    const diagnostics = await diagnose(text, { section: { maxReferenceBytes: 1000 } });
    expect(diagnostics.map((d) => d.code)).toEqual(['SESSION_REFERENCE_BUDGET_EXCEEDED', 'SESSION_REFERENCE_BUDGET_EXCEEDED']);
    expect(await prepareOutcome(text, { section: { maxReferenceBytes: 1000 } })).toBe('SESSION_REFERENCE_BUDGET_EXCEEDED');
  });

  it('hints when a label no longer matches the latest title (display-safe titles match too)', async () => {
    const text = `${formatSessionReferenceMention({ sessionId: 'a', label: 'Old name' })} ${formatSessionReferenceMention({ sessionId: 'c', label: 'Gamma' })}`;
    const [diagnostic, ...rest] = await diagnose(text);
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ severity: DiagnosticSeverity.Hint, data: { kind: 'stale-label', sessionId: 'a' } });
    expect(diagnostic!.message).toBe('The label "Old name" no longer matches the session\'s title "Alpha work".');
    const bidi = [conversationSession('t', { title: 'Say \u202ehi' })];
    expect(await diagnose(formatSessionReferenceMention({ sessionId: 't', label: 'Say hi' }), { sessions: bidi })).toEqual([]);
    expect(await diagnose(`${encodeSessionReferenceUri('a')}`)).toEqual([]);
  });

  it('quotes a huge title and label as bounded one-line labels; the bounded label is not stale', async () => {
    const title = 'Huge\ntitle '.repeat(20_000);
    const sessions = [conversationSession('t', { title })];
    const [diagnostic] = await diagnose(formatSessionReferenceMention({ sessionId: 't', label: 'old\n'.repeat(1_000) }), { sessions });
    const shown = `${'Huge title '.repeat(18)}H…`;
    expect(diagnostic!.message).toBe(`The label "${'old '.repeat(49)}old…" no longer matches the session's title "${shown}".`);
    expect(await diagnose(formatSessionReferenceMention({ sessionId: 't', label: shown }), { sessions })).toEqual([]);
  });

  it('keeps session text in messages display-safe', async () => {
    const sessions = [conversationSession('t', { title: 'evil\u202e\u0007title' })];
    const [diagnostic] = await diagnose(formatSessionReferenceMention({ sessionId: 't', label: 'x' }), { sessions });
    expect(diagnostic!.message).toContain('"eviltitle"');
  });
});

describe('diagnostics agree with dshSession.prepare', () => {
  it.each([
    ['grammar before self', `${URI.a} dsh-session:IiJ`, { targetSessionId: 'a' }],
    ['self before too many', `${URI.a} ${URI.b} ${encodeSessionReferenceUri('c')}`, { targetSessionId: 'c', maxReferences: 1 }],
    ['too many before read failures', `${encodeSessionReferenceUri('nope')} ${URI.b}`, { maxReferences: 1 }],
    ['read failures before the budget', `${encodeSessionReferenceUri('long-cwd')} ${encodeSessionReferenceUri('damaged')}`, { maxReferenceBytes: 500 }],
  ])('%s', async (_what, text, section) => {
    const expected = await prepareOutcome(text, { section });
    expect(expected).toBeDefined();
    expect(predictedPrepareError(await diagnose(text, { section }))).toBe(expected);
  });

  // 'long-cwd' twice: it is the only session that can exceed the budget whatever the label.
  const ids = ['a', 'b', 'c', 'd', 'huge', 'long-cwd', 'long-cwd', 'damaged', 'nope', ''];
  const label = fc.oneof(fc.constantFrom('Alpha work', 'x', 'a]b\\', 'L'.repeat(600)), fc.string({ maxLength: 8 }));
  const validFragment = fc.oneof(
    fc.record({ id: fc.constantFrom(...ids), label }).map(({ id, label }) => formatSessionReferenceMention({ sessionId: id, label })),
    fc.constantFrom(...ids).map((id) => encodeSessionReferenceUri(id)),
    fc.constantFrom(' ', '\n', 'text ', 'https://x/', '@', '(', ')', ']', 'dsh-session: ', 'me@x.org '),
  );
  const brokenFragment = fc.oneof(
    fc.constantFrom(...ids).map((id) => encodeSessionReferenceUri(id) + 'x'),
    fc.constantFrom('@[', '](', '\\', 'dsh-session:', 'dsh-session:IiJ', '@[x](dsh-session:abc)', '@[y](dsh-session:ImEi.)', '@[z](dsh-session:)', '\\\n', '@[w\\\r'),
  );
  // Valid-only and mixed documents, so every outcome is reached, not just the grammar errors.
  const document = fc
    .oneof(fc.array(validFragment, { maxLength: 7 }), fc.array(fc.oneof(validFragment, validFragment, brokenFragment), { maxLength: 7 }))
    .map((parts) => parts.join(''));
  const section = fc.record({
    maxReferences: fc.integer({ min: 1, max: 3 }),
    maxReferenceBytes: fc.constantFrom(400, 2000, 65536),
    targetSessionId: fc.constantFrom(null, 'a', 'nope'),
  });

  it('a document without error diagnostics prepares, one with errors fails with the first one’s code (generated documents)', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(document, section, async (text, settings) => {
        const predicted = predictedPrepareError(await diagnose(text, { section: settings }));
        expect(predicted).toBe(await prepareOutcome(text, { section: settings }));
        const outcome = predicted ?? 'prepares';
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
      }),
      { numRuns: 600 },
    );
    // The generator must reach every outcome, or the property proves less than it claims.
    expect([...seen.keys()].sort()).toEqual(['prepares', ...DSH_ERROR_ORDER].sort());
  });
});

describe('diagnostics: a document with more problems than are listed', () => {
  it(`lists ${MAX_DIAGNOSTICS_PER_DOCUMENT}, then the first error of each code, then one Information counting the rest; prepare is still predicted`, async () => {
    const warnings = MAX_DIAGNOSTICS_PER_DOCUMENT + 500;
    // Each line a bare URI inside a path (a Warning, no code); the last line a malformed mention (the one error).
    const text = `${Array.from({ length: warnings }, () => `see/${URI.a}`).join('\n')}\nand @[x](dsh-session:IiJ)`;
    const diagnostics = await diagnose(text);
    expect(diagnostics).toHaveLength(MAX_DIAGNOSTICS_PER_DOCUMENT + 2);
    expect(diagnostics.slice(0, MAX_DIAGNOSTICS_PER_DOCUMENT).every((d) => (d.data as { kind: string }).kind === 'inside-text')).toBe(true);
    expect(diagnostics.at(-2)).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE', data: { kind: 'malformed' }, range: { start: { line: warnings } } });
    const last = diagnostics.at(-1)!;
    expect(last).toMatchObject({ severity: DiagnosticSeverity.Information, source: DIAGNOSTIC_SOURCE, data: { kind: 'more-left-out' } });
    // On the first one left out, saying how many.
    expect(last.range.start.line).toBe(MAX_DIAGNOSTICS_PER_DOCUMENT);
    expect(last.message).toMatch(/^500 more problems .* at most 1,000 are/);
    expect(predictedPrepareError(diagnostics)).toBe(await prepareOutcome(text));
    expect(await prepareOutcome(text)).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
  });

  it('lists every problem of a document up to the cap, with nothing added', async () => {
    const text = Array.from({ length: MAX_DIAGNOSTICS_PER_DOCUMENT }, () => `see/${URI.a}`).join('\n');
    const diagnostics = await diagnose(text);
    expect(diagnostics).toHaveLength(MAX_DIAGNOSTICS_PER_DOCUMENT);
    expect(diagnostics.some((d) => (d.data as { kind: string }).kind === 'more-left-out')).toBe(false);
  });
});
