import { encodeAgentSessionUri, encodeSessionReferenceUri } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import {
  FOREIGN_TRANSCRIPT_SCHEMES,
  agentSessionOfTranscriptDocument,
  agentTranscriptDocumentUri,
  previewDocumentUri,
  sessionOfTranscriptDocument,
  sourceOfPreviewDocument,
  transcriptDocumentUri,
} from './documentUris';

describe('transcript documents', () => {
  it('name their session in the query and round-trip any id', () => {
    for (const id of ['sess-1', 'with space/and slash', 'ünïcødé 🎉', '']) {
      const uri = transcriptDocumentUri(id, 'Title');
      expect(uri.scheme).toBe('dsh-session');
      expect(sessionOfTranscriptDocument(uri)).toBe(id);
    }
  });

  it('are titled after the display-safe label as one Markdown path segment', () => {
    expect(transcriptDocumentUri('s', 'Fix a/b\\c').path).toBe('/Fix a-b-c.md');
    expect(transcriptDocumentUri('s', 'x\u202Ey').path).toBe('/xy.md');
    expect(transcriptDocumentUri('sess-9').path).toBe('/sess-9.md');
    const long = transcriptDocumentUri('s', 'L'.repeat(200)).path;
    expect(long.length).toBeLessThan(70);
    expect(long.endsWith('….md')).toBe(true);
  });

  it("also open from a mention's own URI followed as a link", () => {
    const link = encodeSessionReferenceUri('sess-link');
    expect(sessionOfTranscriptDocument({ path: link.slice('dsh-session:'.length), query: '' })).toBe('sess-link');
  });

  it('refuse a payload that is not canonical', () => {
    expect(() => sessionOfTranscriptDocument({ path: '/x.md', query: 'IiJ' })).toThrow(
      expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' }),
    );
  });
});

describe('other agents’ transcript documents', () => {
  it('use the mention schemes, round-trip any id with its agent, and leave dsh’s exactly as they were', () => {
    expect(FOREIGN_TRANSCRIPT_SCHEMES).toEqual(['claude-session', 'codex-session', 'qwen-session', 'gemini-session', 'opencode-session']);
    const schemes = { 'claude-code': 'claude-session', codex: 'codex-session', 'qwen-code': 'qwen-session', gemini: 'gemini-session', opencode: 'opencode-session' } as const;
    for (const agent of ['claude-code', 'codex', 'qwen-code', 'gemini', 'opencode'] as const) {
      for (const id of ['7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01', 'ünïcødé 🎉']) {
        const uri = agentTranscriptDocumentUri(id, 'Title', agent);
        expect(uri.scheme).toBe(schemes[agent]);
        expect(agentSessionOfTranscriptDocument(uri)).toEqual({ sessionId: id, agent });
      }
    }
    expect(agentTranscriptDocumentUri('s', 'T', undefined)).toEqual(transcriptDocumentUri('s', 'T'));
    expect(agentSessionOfTranscriptDocument(transcriptDocumentUri('s', 'T'))).toEqual({ sessionId: 's' });
  });

  it("open from a foreign mention's own URI followed as a link, and refuse a payload that is not canonical", () => {
    const link = encodeAgentSessionUri('codex', 'cx-1');
    expect(agentSessionOfTranscriptDocument({ scheme: 'codex-session', path: link.slice('codex-session:'.length), query: '' })).toEqual({
      sessionId: 'cx-1',
      agent: 'codex',
    });
    expect(() => agentSessionOfTranscriptDocument({ scheme: 'claude-session', path: '/x.md', query: 'IiJ' })).toThrow(
      expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' }),
    );
  });
});

describe('preview documents', () => {
  it('carry their source URI and a Markdown title', () => {
    const uri = previewDocumentUri('file:///work/notes.prompt.md', 'notes.prompt.md');
    expect(uri).toEqual({ scheme: 'dsh-preview', path: '/notes.prompt.md (model view).md', query: 'file:///work/notes.prompt.md' });
    expect(sourceOfPreviewDocument(uri)).toBe('file:///work/notes.prompt.md');
  });
});
