import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEventRecord } from '../../resolver/sessionStore';
import { dshAnswersFile, fixtureStore } from '../../../../test/support/conformance';
import { SessionLogSummarizer, initZstdSupport, loadSessionLog, readSessionHeader } from './index';
import { availableZstdDecoders } from '../../testing/zstdDecoders';

await initZstdSupport();

/** Every `<project>/<session>/<file>` of a fixture store, by directory name. */
function transcripts(dir: string, file: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const project of readdirSync(dir)) {
    for (const session of readdirSync(path.join(dir, project))) found.set(session, path.join(dir, project, session, file));
  }
  return found;
}

interface DshReference {
  sessionId: string;
  capturedThroughSeq: number | null;
  conversation: Array<{ role: string; text: string }>;
  complete: boolean;
}

/** What dsh's own resolver answered about each session (expected/dsh-answers.jsonl). */
function dshAnswers(): { labels: Map<string, string>; references: Map<string, DshReference> } {
  const labels = new Map<string, string>();
  const references = new Map<string, DshReference>();
  const lines = readFileSync(dshAnswersFile(), 'utf8').split('\n');
  for (const line of lines.filter(Boolean)) {
    const { config, request, response } = JSON.parse(line);
    if (!response.ok || Object.keys(config).length > 0) continue;
    if (request.op === 'list' && request.args[0] === '') {
      for (const candidate of response.result) labels.set(candidate.sessionId, candidate.label);
    }
    const prepared = request.op === 'mention' ? response.result.prepared : request.op === 'prepare' ? response.result : undefined;
    const context = prepared?.additionalContext;
    if (!context) continue;
    const text: string = context.content[0].text;
    const snapshot = JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1));
    context.source.references.forEach((meta: { truncated: boolean; omittedMessages: number }, i: number) => {
      const ref = snapshot[i];
      references.set(ref.sessionId, { ...ref, complete: !meta.truncated && meta.omittedMessages === 0 });
    });
  }
  return { labels, references };
}

/** The reference projection of a surface (store doc §6.4), enough to compare with dsh's snapshots. */
function conversation(surface: readonly SessionEventRecord[]): Array<{ role: string; text: string }> {
  const out: Array<{ role: string; text: string }> = [];
  for (const event of surface) {
    const message = event.type === 'user/message' ? event.data : event.type === 'assistant/message' ? event.data.message : undefined;
    const source = message?.source;
    const kept =
      event.type === 'assistant/message' ||
      (event.type === 'user/message' && (source.kind === 'user' || (source.kind === 'plugin' && source.plugin === 'compact')));
    if (!kept) continue;
    const text = message.content
      .filter((block: { type: string }) => block.type === 'text')
      .map((block: { text: string }) => block.text)
      .join('\n');
    if (text !== '') out.push({ role: event.type === 'user/message' ? 'user' : 'assistant', text });
  }
  return out;
}

describe('fixture store', () => {
  const raw = transcripts(fixtureStore('raw'), 'session.jsonl');
  const zstd = transcripts(fixtureStore('zstd'), 'session.jsonl.zstd');
  const dsh = dshAnswers();

  it('holds the same sessions in both encodings', () => {
    expect([...zstd.keys()].sort()).toEqual([...raw.keys()].sort());
    expect(raw.size).toBeGreaterThanOrEqual(11);
  });

  for (const [id, rawPath] of raw) {
    describe(id, () => {
      const rawBytes = new Uint8Array(readFileSync(rawPath));
      const zstdBytes = new Uint8Array(readFileSync(zstd.get(id) as string));
      const loaded = () => loadSessionLog(rawBytes, 'raw', { expectedId: id });

      it('decodes identically from session.jsonl and session.jsonl.zstd, with every decoder', () => {
        for (const decoder of availableZstdDecoders()) {
          expect(loadSessionLog(zstdBytes, 'zstd', { expectedId: id, zstdDecoder: decoder })).toEqual(loaded());
        }
        const rawHeader = readSessionHeader(rawBytes, 'raw');
        expect(readSessionHeader(zstdBytes, 'zstd')).toMatchObject({ header: 'header' in rawHeader ? rawHeader.header : undefined });
      });

      it("matches dsh's own answers: label (title or id), capturedThroughSeq, and the projected conversation", () => {
        const log = loaded();
        expect(log.title ?? id).toBe(dsh.labels.get(id));
        const reference = dsh.references.get(id);
        expect(reference).toBeDefined();
        expect(log.capturedThroughSeq).toBe(reference?.capturedThroughSeq);
        if (reference?.complete) expect(conversation(log.surface)).toEqual(reference.conversation);
      });

      it('gives the same surface without keeping the other events (keepEvents: false)', () => {
        const full = loaded();
        for (const [encoding, bytes] of [['raw', rawBytes], ['zstd', zstdBytes]] as const) {
          expect(loadSessionLog(bytes, encoding, { expectedId: id, keepEvents: false })).toEqual({ ...full, events: [] });
        }
      });

      it('summarizes to the same title, capturedThroughSeq and counts in both encodings', () => {
        const log = loaded();
        for (const [encoding, bytes] of [['raw', rawBytes], ['zstd', zstdBytes]] as const) {
          const summarizer = new SessionLogSummarizer(encoding);
          summarizer.push(bytes);
          const summary = summarizer.summary();
          expect(summary).toEqual({
            header: log.header,
            ...(log.title === undefined ? {} : { title: log.title }),
            capturedThroughSeq: log.capturedThroughSeq,
            surfaceCounts: log.surfaceCounts,
            eventCount: log.events.length,
          });
        }
      });
    });
  }
});
