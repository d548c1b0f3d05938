// dsh's own answers for the fixture store (test/conformance/dsh-store/expected/dsh-answers.jsonl) must be
// ours too: the resolver over our on-disk store reader, on the raw AND the zstd encoding of the same store.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSessionReferenceError, parseSessionReferenceText } from '@dsh-session-ls/shared';
import { createSessionReferenceResolver } from '../../server/src/resolver';
import { openSessionStore, type SessionStoreService } from '../../server/src/store';
import { dshAnswersFile, fixtureStore } from '../support/conformance';

interface AnswerRow {
  config: Record<string, number>;
  request: { op: 'list' | 'remote' | 'prepare' | 'mention'; args: unknown[]; cwd?: string; target?: string };
  response: { ok: true; result: unknown } | { ok: false; error: { name: string; code: string; message: string } };
}

const rows: AnswerRow[] = readFileSync(dshAnswersFile(), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as AnswerRow);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Drop `additionalContext.id` (a fresh UUID per call, removed from dsh's recording too) after checking its shape. */
function withoutContextId(prepared: unknown): unknown {
  const copy = structuredClone(prepared) as { additionalContext?: { id?: unknown } };
  if (copy.additionalContext) {
    expect(copy.additionalContext.id).toMatch(UUID);
    delete copy.additionalContext.id;
  }
  return copy;
}

async function answer(store: SessionStoreService, row: AnswerRow): Promise<unknown> {
  const resolver = createSessionReferenceResolver(store, row.config);
  const { op, args, cwd, target: targetId } = row.request;
  const target = { ...(targetId !== undefined ? { sessionId: targetId } : {}), ...(cwd !== undefined ? { cwd } : {}) };
  switch (op) {
    case 'list':
      return resolver.listCandidates(target, args[0] as string, args[1] as number | undefined);
    case 'remote':
      return resolver.listMentionCandidates(target, args[0] as string, args[1] as number | undefined);
    case 'prepare':
      return withoutContextId(
        await resolver.prepare(target, [{ type: 'text', text: args[0] as string }], JSON.parse(args[1] as string)),
      );
    case 'mention': {
      const parsed = parseSessionReferenceText(args[0] as string);
      const prepared = await resolver.prepare(target, [{ type: 'text', text: parsed.text }], parsed.references);
      return { parsed, prepared: withoutContextId(prepared) };
    }
  }
}

for (const encoding of ['raw', 'zstd'] as const) {
  describe(`dsh's recorded answers over our ${encoding} store reader`, () => {
    let store: SessionStoreService;
    beforeAll(async () => {
      store = openSessionStore({ root: fixtureStore(encoding) });
      await store.whenIndexed();
    });
    afterAll(() => store?.dispose());

    it('covers every kind of request and all three configs', () => {
      expect(new Set(rows.map((row) => row.request.op))).toEqual(new Set(['list', 'remote', 'prepare', 'mention']));
      expect(new Set(rows.map((row) => JSON.stringify(row.config))).size).toBe(3);
    });

    it.each(rows.map((row, index) => [index + 1, `${row.request.op} ${JSON.stringify(row.request.args)} ${JSON.stringify(row.config)}${row.request.target ? ` target=${row.request.target}` : ''}`, row] as const))(
      'row %i: %s',
      async (_line, _title, row) => {
        if (row.response.ok) {
          const ours = await answer(store, row);
          expect(ours).toEqual(row.response.result);
          // The prompt is compared byte for byte (toEqual on strings already is); say so for the reader.
          const prompt = (row.response.result as { additionalContext?: { content: Array<{ text: string }> } }).additionalContext?.content[0]?.text;
          if (prompt !== undefined) expect((ours as { additionalContext: { content: Array<{ text: string }> } }).additionalContext.content[0]!.text).toBe(prompt);
        } else {
          const expected = row.response.error;
          const error = await answer(store, row).then(
            (value) => ({ unexpectedValue: value }),
            (caught: unknown) => caught,
          );
          expect(isSessionReferenceError(error)).toBe(true);
          expect((error as { code: string }).code).toBe(expected.code);
          expect((error as Error).message).toBe(expected.message);
        }
      },
    );
  });
}
