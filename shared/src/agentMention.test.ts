import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSessionReferenceMention, parseAgentReferenceText, parseSessionReferenceText, scanAgentSessionMentions, scanSessionMentions } from './mention';
import { decodeAgentSessionUri, encodeAgentSessionUri, encodeSessionReferenceUri } from './uri';

describe('foreign session URIs', () => {
  it('use dsh payload under their own scheme, and decode back losslessly', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.constantFrom('claude-code' as const, 'codex' as const, 'qwen-code' as const), (id, agent) => {
        const uri = encodeAgentSessionUri(agent, id);
        expect(uri.slice(uri.indexOf(':'))).toBe(encodeSessionReferenceUri(id).slice('dsh-session'.length));
        expect(decodeAgentSessionUri(uri)).toEqual({ sessionId: id, agent });
      }),
    );
    expect(encodeAgentSessionUri('claude-code', 'a')).toBe('claude-session:ImEi');
    expect(encodeAgentSessionUri('codex', 'a')).toBe('codex-session:ImEi');
    expect(encodeAgentSessionUri('qwen-code', 'a')).toBe('qwen-session:ImEi');
    expect(encodeAgentSessionUri(undefined, 'a')).toBe('dsh-session:ImEi');
    expect(decodeAgentSessionUri('dsh-session:ImEi')).toEqual({ sessionId: 'a' });
  });

  it('refuse a non-canonical payload as INVALID_REFERENCE', () => {
    expect(() => decodeAgentSessionUri('codex-session:ImEj')).toThrow(/invalid session reference URI "codex-session:ImEj"/);
    expect(() => decodeAgentSessionUri('codex-session:')).toThrow(/invalid session reference URI/);
  });
});

describe('scanAgentSessionMentions', () => {
  const claude = formatSessionReferenceMention({ sessionId: 'c1', label: 'C', agent: 'claude-code' });
  const codex = formatSessionReferenceMention({ sessionId: 'x1', label: 'X', agent: 'codex' });
  const dsh = formatSessionReferenceMention({ sessionId: 'd1', label: 'D' });

  it('finds dsh mentions exactly as dsh does, plus foreign ones, in text order', () => {
    const text = `a ${claude} b ${dsh} c ${codex} codex-session:ImEi`;
    const tokens = scanAgentSessionMentions(text);
    expect(tokens.map((t) => [t.kind, t.agent, t.label])).toEqual([
      ['explicit', 'claude-code', 'C'],
      ['explicit', undefined, 'D'],
      ['explicit', 'codex', 'X'],
      ['bare', 'codex', undefined],
    ]);
    expect(tokens.filter((t) => t.agent === undefined)).toEqual([...scanSessionMentions(text)]);
  });

  it('lets dsh win where a foreign mention holds one of its mentions (dsh reads the foreign one as text)', () => {
    const inner = `dsh-session:${encodeSessionReferenceUri('d2').slice('dsh-session:'.length)}`;
    const text = `@[see ${inner}](claude-session:ImEi)`;
    expect(scanAgentSessionMentions(text).map((t) => [t.kind, t.agent, t.uri])).toEqual([['bare', undefined, inner]]);
  });

  it('parses like dsh when there is no foreign mention, and carries agents otherwise', () => {
    const plain = `x ${dsh} dsh-session:ImEi`;
    expect(parseAgentReferenceText(plain)).toEqual(parseSessionReferenceText(plain));
    expect(parseAgentReferenceText(`${claude} and ${codex}`)).toEqual({
      text: '@C and @X',
      references: [
        { sessionId: 'c1', label: 'C', agent: 'claude-code' },
        { sessionId: 'x1', label: 'X', agent: 'codex' },
      ],
    });
    expect(parseSessionReferenceText(`${claude}`)).toEqual({ text: claude, references: [] });
    expect(() => parseAgentReferenceText('@[x](codex-session:%%)')).toThrow(/invalid session reference URI/);
  });
});
