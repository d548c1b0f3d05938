import { encodeAgentSessionUri, encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { mentionAtOffset, mentionsIn } from './mentionAtCursor';

const alpha = formatSessionReferenceMention({ sessionId: 'sess-alpha', label: 'Alpha [draft]' });
const bareBeta = encodeSessionReferenceUri('sess-beta');

describe('mentionAtOffset', () => {
  const text = `see ${alpha} and ${bareBeta} here`;
  const alphaStart = text.indexOf('@[');
  const alphaEnd = alphaStart + alpha.length;
  const betaStart = text.indexOf(bareBeta);

  it('finds the mention from its @ to just after its closing parenthesis', () => {
    for (const offset of [alphaStart, alphaStart + 5, alphaEnd - 1, alphaEnd]) {
      expect(mentionAtOffset(text, offset)).toEqual({
        start: alphaStart,
        end: alphaEnd,
        label: 'Alpha [draft]',
        sessionId: 'sess-alpha',
      });
    }
  });

  it('finds a bare URI, which has no label', () => {
    expect(mentionAtOffset(text, betaStart + 3)).toEqual({ start: betaStart, end: betaStart + bareBeta.length, sessionId: 'sess-beta' });
  });

  it('finds nothing between or outside mentions', () => {
    expect(mentionAtOffset(text, 0)).toBeUndefined();
    expect(mentionAtOffset(text, alphaStart - 1)).toBeUndefined();
    expect(mentionAtOffset(text, alphaEnd + 2)).toBeUndefined();
    expect(mentionAtOffset(text, text.length)).toBeUndefined();
  });

  it('reports a mention whose URI is not canonical with the INVALID_REFERENCE code', () => {
    const bad = 'x @[Broken](dsh-session:IiJ) y';
    const found = mentionAtOffset(bad, 4);
    expect(found?.sessionId).toBeUndefined();
    expect(found?.error?.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
  });

  it('uses the grammar across lines (offsets are UTF-16 positions in the whole text)', () => {
    const multi = `first line\n${alpha}`;
    expect(mentionAtOffset(multi, 11)?.sessionId).toBe('sess-alpha');
  });
});

describe('mentionsIn', () => {
  it('lists every mention in order, duplicates kept', () => {
    const found = mentionsIn(`${alpha} ${bareBeta} ${alpha}`);
    expect(found.map((m) => m.sessionId)).toEqual(['sess-alpha', 'sess-beta', 'sess-alpha']);
  });
});

describe('other agents’ mentions', () => {
  const claude = formatSessionReferenceMention({ sessionId: 'cc-1', label: 'Parser', agent: 'claude-code' });
  const bareCodex = encodeAgentSessionUri('codex', 'cx-1');
  const text = `${claude} then ${bareCodex} and ${alpha}`;

  it('are found with their agent, between dsh’s, which stay exactly as before', () => {
    expect(mentionsIn(text).map((m) => [m.agent ?? 'dsh', m.sessionId, m.label])).toEqual([
      ['claude-code', 'cc-1', 'Parser'],
      ['codex', 'cx-1', undefined],
      ['dsh', 'sess-alpha', 'Alpha [draft]'],
    ]);
    expect(mentionAtOffset(text, 3)).toEqual({ start: 0, end: claude.length, label: 'Parser', agent: 'claude-code', sessionId: 'cc-1' });
    expect(mentionAtOffset(text, text.indexOf(alpha) + 2)).toEqual({ start: text.indexOf(alpha), end: text.length, label: 'Alpha [draft]', sessionId: 'sess-alpha' });
  });

  it('keep the decoding error of a malformed foreign URI', () => {
    expect(mentionAtOffset('@[x](codex-session:IiJ)', 2)).toMatchObject({ agent: 'codex', error: { code: 'SESSION_REFERENCE_INVALID_REFERENCE' } });
  });
});
