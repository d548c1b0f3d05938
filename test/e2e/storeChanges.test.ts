import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CompletionList } from 'vscode-languageserver-protocol';
import { fileUri, pollUntil, type LspTestClient } from '../support/lspClient';
import { EXAMPLE_SESSIONS, WEATHER_APP, copyStore, removeTemporary, startServer, waitForSessions } from './helpers';

const PROJECT_DIR = '--home-sam-weather-app--';
const PROMPT_URI = fileUri(`${WEATHER_APP}/PROMPT.md`);
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A new dsh session log, as dsh writes one: header, one turn, a fallback title. */
function newSessionLog(id: string, title: string, createdAt: number): string {
  const lines = [
    { type: 'session', version: 0, id, createdAt, cwd: WEATHER_APP, delegationDepth: 0 },
    { type: 'turn/start', seq: 0, time: createdAt + 10, data: { turn: 1 } },
    { type: 'step/start', seq: 1, time: createdAt + 11, data: { turn: 1, step: 1 } },
    {
      type: 'user/message',
      seq: 2,
      time: createdAt + 12,
      data: { content: [{ type: 'text', text: title }], source: { kind: 'user' }, role: 'user', id: `${id}-m1` },
      surfaceOp: 'append',
    },
    { type: 'session/title', seq: 3, time: createdAt + 13, data: { title, messageSeqs: [2], source: { kind: 'fallback' } } },
    { type: 'step/end', seq: 4, time: createdAt + 14, data: { turn: 1, step: 1 } },
    { type: 'turn/end', seq: 5, time: createdAt + 15, data: { turn: 1, reason: { kind: 'completed' } } },
  ];
  return lines.map((line) => JSON.stringify(line) + '\n').join('');
}

async function labelsAt(client: LspTestClient): Promise<string[]> {
  const list: CompletionList = await client.completion(PROMPT_URI, { line: 0, character: 1 });
  return list.items.map((item) => String(item.label));
}

describe('a store that changes while the server runs', () => {
  it('shows a new session, a renamed session and forgets a deleted one, without a restart', async () => {
    const root = copyStore();
    cleanups.push(() => removeTemporary(path.dirname(root)));
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
    cleanups.push(cleanup);
    const count = Object.keys(EXAMPLE_SESSIONS).length;
    await waitForSessions(client, count);
    await client.openDocument(PROMPT_URI, '@');
    expect(await labelsAt(client)).not.toContain('Add wind speed to the hourly forecast');

    // dsh creates a session: its directory and transcript appear.
    const id = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
    const sessionDir = path.join(root, PROJECT_DIR, id);
    mkdirSync(sessionDir);
    writeFileSync(path.join(sessionDir, 'session.jsonl'), newSessionLog(id, 'Add wind speed to the hourly forecast', Date.now()));
    const withNew = await pollUntil(async () => {
      const labels = await labelsAt(client);
      return labels.includes('Add wind speed to the hourly forecast') ? labels : undefined;
    }, 30_000, 'the new session in completion');
    // The newest session of the document's folder comes first.
    expect(withNew[0]).toBe('Add wind speed to the hourly forecast');

    // dsh appends a user rename to an existing log.
    const cacheLog = path.join(root, PROJECT_DIR, EXAMPLE_SESSIONS.cache, 'session.jsonl');
    const lastSeq = JSON.parse(readFileSync(cacheLog, 'utf8').trimEnd().split('\n').pop()!).seq as number;
    appendFileSync(
      cacheLog,
      JSON.stringify({ type: 'session/title', seq: lastSeq + 1, time: Date.now(), data: { title: 'LRU cache for OpenWeather', messageSeqs: [], source: { kind: 'user' } } }) + '\n',
    );
    await pollUntil(async () => ((await labelsAt(client)).includes('LRU cache for OpenWeather') ? true : undefined), 30_000, 'the renamed session');

    // dsh deletes a session.
    rmSync(sessionDir, { recursive: true });
    await pollUntil(async () => (!(await labelsAt(client)).includes('Add wind speed to the hourly forecast') ? true : undefined), 30_000, 'the deleted session gone');
    expect(client.running).toBe(true);
  });
});
