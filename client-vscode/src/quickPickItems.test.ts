import { formatSessionReferenceMention, parseSessionReferenceText, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { candidateQuickPickItems, errorQuickPickItem, escapeThemeIcons, mentionToInsert, parseCandidates } from './quickPickItems';

const NOW = Date.UTC(2026, 11, 2);
const DAY = 24 * 3600 * 1000;

function candidate(sessionId: string, label: string, createdAt: number, cwd?: string): SessionReferenceMentionCandidate {
  return { sessionId, label, createdAt, ...(cwd !== undefined ? { cwd } : {}), mention: formatSessionReferenceMention({ sessionId, label }) };
}

describe('candidateQuickPickItems', () => {
  it('shows title, age and cwd in the server order, and keeps every row VS Code would filter away', () => {
    const rows = [candidate('s-1', 'Fix the parser', NOW - 3 * DAY, '/work/app'), candidate('s-2', 'No cwd here', NOW - 60_000)];
    const items = candidateQuickPickItems(rows, NOW);
    expect(items.map(({ label, description, detail, alwaysShow }) => ({ label, description, detail, alwaysShow }))).toEqual([
      { label: 'Fix the parser', description: '3 days ago', detail: '/work/app', alwaysShow: true },
      { label: 'No cwd here', description: '1 minute ago', detail: '(no cwd)', alwaysShow: true },
    ]);
    expect(items.map((item) => item.candidate)).toEqual(rows);
  });

  it('shows labels and cwds display-safe: no bidi overrides or line breaks', () => {
    const [item] = candidateQuickPickItems([candidate('s-1', 'evil\u202Etxt.exe\nline', NOW, '/a\u2066b')], NOW);
    expect(item!.label).toBe('eviltxt.exe line');
    expect(item!.detail).toBe('/ab');
  });

  it('falls back to the session id when nothing of the label is left', () => {
    const [item] = candidateQuickPickItems([candidate('s-only-id', '\u200E\u200F', NOW)], NOW);
    expect(item!.label).toBe('s-only-id');
  });

  it('shows a huge multi-line title as one bounded line, and inserts that label', () => {
    const title = 'Huge\u2028title\n\n'.repeat(100_000);
    const [item] = candidateQuickPickItems([candidate('s-1', title, NOW)], NOW);
    expect(item!.label).toBe('Huge title '.repeat(18) + 'H…');
    expect(parseSessionReferenceText(mentionToInsert({ sessionId: 's-1', label: title })).references).toEqual([{ sessionId: 's-1', label: item!.label }]);
  });

  it('falls back to the session id for a title of marks and zero-width characters', () => {
    const [item] = candidateQuickPickItems([candidate('s-blank', '\u0301\u200b'.repeat(300), NOW)], NOW);
    expect(item!.label).toBe('s-blank');
  });

  it('keeps $(icon) syntax in session text literal', () => {
    const [item] = candidateQuickPickItems([candidate('s-1', 'run $(zap) now', NOW, '/p/$(home)')], NOW);
    expect(item!.label).toBe('run \\$(zap) now');
    expect(item!.detail).toBe('/p/\\$(home)');
  });
});

describe('escapeThemeIcons', () => {
  it('escapes icon syntax once and leaves other dollars alone', () => {
    expect(escapeThemeIcons('$(a) \\$(b) $x $(c~spin)')).toBe('\\$(a) \\$(b) $x \\$(c~spin)');
  });
});

describe('errorQuickPickItem', () => {
  it('is a row without a candidate that names the failure', () => {
    const row = errorQuickPickItem('SESSION_REFERENCE_INVALID_CONFIG: bad');
    expect(row).toEqual({ label: '$(error) SESSION_REFERENCE_INVALID_CONFIG: bad', alwaysShow: true });
    expect(row.candidate).toBeUndefined();
  });
});

describe('mentionToInsert', () => {
  it('is the server mention when the label is already safe', () => {
    const row = candidate('s-1', 'Alpha [v2] \\ done', NOW);
    expect(mentionToInsert(row)).toBe(row.mention);
  });

  it('uses the display-safe label, and still names the same session', () => {
    const row = candidate('s-1', 'A\u202Eb', NOW);
    const mention = mentionToInsert(row);
    expect(mention).toBe(formatSessionReferenceMention({ sessionId: 's-1', label: 'Ab' }));
    expect(parseSessionReferenceText(mention).references).toEqual([{ sessionId: 's-1', label: 'Ab' }]);
  });
});

describe('parseCandidates', () => {
  it('keeps well-formed rows and drops the rest', () => {
    const good = candidate('s-1', 'Alpha', NOW, '/w');
    const noCwd = candidate('s-2', 'Beta', NOW);
    expect(parseCandidates([good, { sessionId: 3 }, null, 'x', { ...noCwd, cwd: 5 }, noCwd])).toEqual([good, noCwd]);
  });

  it('reads anything but an array as no candidates', () => {
    expect(parseCandidates({ items: [] })).toEqual([]);
    expect(parseCandidates(null)).toEqual([]);
  });
});
