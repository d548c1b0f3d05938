/**
 * Conformance through the real server process: over the dsh fixture store (raw and zstd),
 * `dshSession.candidates` and `dshSession.prepare` answer what dsh's own resolver answered
 * (`expected/dsh-answers.jsonl`), minus `additionalContext.id`.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionCommands, type PreparedReferencedMessage } from '@dsh-session-ls/shared';
import { dshAnswersFile, fixtureStore } from '../support/conformance';
import { responseErrorOf, type LspTestClient } from '../support/lspClient';
import { startServer, waitForSessions } from './helpers';

interface AnswerRow {
  config: Record<string, number>;
  request: { op: 'list' | 'remote' | 'prepare' | 'mention'; args: unknown[]; cwd?: string; target?: string };
  response: { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };
}

const rows: AnswerRow[] = readFileSync(dshAnswersFile(), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as AnswerRow);

// session-reference.md §3: the messages that must be dsh's own; any other message is ours to word.
const PINNED_MESSAGES = [
  /^invalid session reference URI "/,
  /^session reference must be an object$/,
  /^session reference must contain a string sessionId and optional string label$/,
  /^failed to read referenced session: session ".*" not found$/,
  /^a message may reference at most \d+ sessions$/,
  /^session ".*" cannot reference itself$/,
  /^session-reference: \w+ must be a positive safe integer$/,
  /^session-reference: maxReferences must not exceed 3$/,
  /^referenced session snapshot cannot fit the configured byte budget$/,
  /^candidate limit must be a positive safe integer$/,
];

/** The row's target: the target session (explicitly none when absent) and its cwd. */
function target(row: AnswerRow): { sessionId: string | null; cwd: string | null } {
  return { sessionId: row.request.target ?? null, cwd: row.request.cwd ?? null };
}

/** The executeCommand call a row maps to, and how to read our answer for comparison. */
function commandFor(row: AnswerRow): { command: string; argument: Record<string, unknown>; answer: (result: unknown) => unknown } {
  const config = Object.keys(row.config).length === 0 ? {} : { config: row.config };
  const { op, args } = row.request;
  switch (op) {
    case 'list':
    case 'remote': {
      const [query, limit] = args as [string, number | undefined];
      return {
        command: SessionCommands.candidates,
        argument: { query, ...(limit === undefined ? {} : { limit }), target: target(row), ...config },
        // `list` rows are listCandidates: the same rows without the mention.
        answer: (result) =>
          op === 'remote' ? result : (result as Array<Record<string, unknown>>).map(({ mention: _mention, ...candidate }) => candidate),
      };
    }
    case 'prepare': {
      const [text, references] = args as [string, string];
      return {
        command: SessionCommands.prepare,
        argument: { target: target(row), content: [{ type: 'text', text }], references: JSON.parse(references), ...config },
        answer: withoutContextId,
      };
    }
    case 'mention': {
      const [text] = args as [string];
      return { command: SessionCommands.prepare, argument: { target: target(row), text, ...config }, answer: withoutContextId };
    }
  }
}

function withoutContextId(result: unknown): unknown {
  const prepared = result as PreparedReferencedMessage;
  if (prepared.additionalContext === undefined) return prepared;
  const { id, ...rest } = prepared.additionalContext;
  expect(typeof id).toBe('string');
  return { ...prepared, additionalContext: rest };
}

function expectedAnswer(row: AnswerRow): unknown {
  if (!row.response.ok) return undefined;
  // `mention` rows record what the grammar parsed and what prepare returned; the command returns the latter.
  return row.request.op === 'mention' ? (row.response.result as { prepared: unknown }).prepared : row.response.result;
}

/** Every listed session: dsh's answer to an unlimited, unfiltered listing without a target. */
function sessionCount(): number {
  const all = rows.find((row) => row.request.op === 'list' && row.request.args.length === 1 && row.request.args[0] === '' && row.request.target === undefined);
  return all !== undefined && all.response.ok ? (all.response.result as unknown[]).length : 1;
}

describe('dsh conformance through the server process', () => {
  it('has answers to check', () => {
    expect(rows.length).toBeGreaterThan(50);
    expect(new Set(rows.map((row) => row.request.op))).toEqual(new Set(['list', 'remote', 'prepare', 'mention']));
  });

  describe.each(['raw', 'zstd'] as const)('the %s store', (encoding) => {
    let client: LspTestClient;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: fixtureStore(encoding) } }));
      await waitForSessions(client, sessionCount());
    });

    afterAll(async () => {
      await cleanup();
    });

    it.each(rows.map((row, index) => [index + 1, `${row.request.op} ${JSON.stringify(row.request.args).slice(0, 70)} ${JSON.stringify(row.config)}`, row] as const))(
      'answer %i: %s',
      async (_line, _name, row) => {
        const { command, argument, answer } = commandFor(row);
        if (row.response.ok) {
          expect(answer(await client.executeCommand(command, argument))).toEqual(expectedAnswer(row));
          return;
        }
        const expected = row.response.error;
        const error = await responseErrorOf(client.executeCommand(command, argument));
        expect(error.data).toEqual({ code: expected.code });
        if (PINNED_MESSAGES.some((pattern) => pattern.test(expected.message))) expect(error.message).toBe(expected.message);
      },
    );

    it('parses mention rows as dsh parsed them (dshSession.parse)', async () => {
      for (const row of rows.filter((candidate) => candidate.request.op === 'mention' && candidate.response.ok)) {
        const parsed = (row.response as { result: { parsed: unknown } }).result.parsed;
        expect(await client.executeCommand(SessionCommands.parse, { text: row.request.args[0] })).toEqual(parsed);
      }
    });
  });
});
