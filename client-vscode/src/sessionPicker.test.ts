import { formatSessionReferenceMention, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { ResponseError } from 'vscode-jsonrpc';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('vscode', () => import('./testing/fakeVscode.js'));

import { pickSession } from './sessionPicker';
import { recorded, resetFakeVscode, type FakeQuickPick } from './testing/fakeVscode';

const NOW = Date.UTC(2026, 11, 2);

function candidate(sessionId: string, label: string): SessionReferenceMentionCandidate {
  return { sessionId, label, cwd: '/w', createdAt: NOW - 7200_000, mention: formatSessionReferenceMention({ sessionId, label }) };
}

/** A candidate source whose answers the test releases one by one. */
function controlledSource() {
  const asked: Array<{ query: string; token: { isCancellationRequested: boolean }; answer(rows: SessionReferenceMentionCandidate[]): void; fail(error: unknown): void }> = [];
  const source = (query: string, token: { isCancellationRequested: boolean }) =>
    new Promise<SessionReferenceMentionCandidate[]>((resolve, reject) => asked.push({ query, token, answer: resolve, fail: reject }));
  return { asked, source };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

function picker(): FakeQuickPick<any> {
  return recorded.quickPicks[0]!;
}

describe('pickSession', () => {
  beforeEach(() => resetFakeVscode());

  it('lists the server candidates for the empty query at once', async () => {
    const { asked, source } = controlledSource();
    void pickSession(source, () => NOW);
    expect(picker().shown).toBe(true);
    expect(asked.map((a) => a.query)).toEqual(['']);
    expect(picker().busy).toBe(true);
    asked[0]!.answer([candidate('s-1', 'Alpha')]);
    await settle();
    expect(picker().busy).toBe(false);
    expect(picker().items.map((item: { label: string; description: string; detail: string }) => [item.label, item.description, item.detail])).toEqual([
      ['Alpha', '2 hours ago', '/w'],
    ]);
  });

  it('asks again as the user types, cancels the older request and ignores its late answer', async () => {
    const { asked, source } = controlledSource();
    void pickSession(source, () => NOW);
    picker().type('be');
    expect(asked.map((a) => a.query)).toEqual(['', 'be']);
    expect(asked[0]!.token.isCancellationRequested).toBe(true);
    asked[1]!.answer([candidate('s-2', 'Beta')]);
    asked[0]!.answer([candidate('s-1', 'Alpha')]);
    await settle();
    expect(picker().items.map((item: { label: string }) => item.label)).toEqual(['Beta']);
    expect(picker().busy).toBe(false);
  });

  it('resolves with the accepted candidate and closes', async () => {
    const { asked, source } = controlledSource();
    const picked = pickSession(source, () => NOW);
    asked[0]!.answer([candidate('s-1', 'Alpha'), candidate('s-2', 'Beta')]);
    await settle();
    picker().accept(picker().items[1]);
    await expect(picked).resolves.toEqual(candidate('s-2', 'Beta'));
    expect(picker().disposed).toBe(true);
  });

  it('resolves with nothing when dismissed, cancelling the pending request', async () => {
    const { asked, source } = controlledSource();
    const picked = pickSession(source, () => NOW);
    picker().hide();
    await expect(picked).resolves.toBeUndefined();
    expect(asked[0]!.token.isCancellationRequested).toBe(true);
  });

  it('shows a server error as a row with its code, which cannot be accepted', async () => {
    const { asked, source } = controlledSource();
    const picked = pickSession(source, () => NOW);
    asked[0]!.fail(new ResponseError(-32602, 'session-reference: candidateLimit must be a positive safe integer', { code: 'SESSION_REFERENCE_INVALID_CONFIG' }));
    await settle();
    expect(picker().items.map((item: { label: string }) => item.label)).toEqual([
      '$(error) SESSION_REFERENCE_INVALID_CONFIG: session-reference: candidateLimit must be a positive safe integer',
    ]);
    picker().accept(picker().items[0]);
    expect(picker().shown).toBe(true);
    picker().hide();
    await expect(picked).resolves.toBeUndefined();
  });

  it('does not show the cancellation of a replaced request as an error', async () => {
    const { asked, source } = controlledSource();
    void pickSession(source, () => NOW);
    picker().type('x');
    asked[1]!.answer([]);
    asked[0]!.fail(new ResponseError(-32800, 'Request cancelled'));
    await settle();
    expect(picker().items).toEqual([]);
  });
});
