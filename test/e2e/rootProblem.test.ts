/**
 * `@` completion when the sessions root is not read: the built server answers one item that
 * says why the list is empty, accepting it leaves the text exactly as it was, and the sessions replace it
 * once the root appears.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_STATUS_NOTIFICATION, type SessionStoreStatus, type SessionsRootProblem } from '@dsh-session-ls/shared';
import type { CompletionList, TextEdit } from 'vscode-languageserver-protocol';
import { fileUri, pollUntil, type LspTestClient } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, WEATHER_APP, acceptItem, cursorIn, removeTemporary, startServer, temporaryDirectory } from './helpers';

const PROMPT_URI = fileUri(`${WEATHER_APP}/PROMPT.md`);
const TEXT_KIND = 1;
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server on `root` (pulled setting), once it has reported the root's problem. */
async function serverOn(root: string, problem: SessionsRootProblem): Promise<LspTestClient> {
  const { client, cleanup } = await startServer({}, { settings: { sessionsRoot: root } });
  cleanups.push(cleanup);
  await client.waitForMessage(SESSION_STATUS_NOTIFICATION, (params: SessionStoreStatus) => params.root === root && params.rootProblem === problem, 30_000);
  return client;
}

async function completeIn(client: LspTestClient, marked: string): Promise<{ list: CompletionList; text: string }> {
  const { text, position } = cursorIn(marked);
  await client.openDocument(PROMPT_URI, text);
  const list = await client.completion(PROMPT_URI, position);
  await client.closeDocument(PROMPT_URI);
  return { list, text };
}

describe('@ completion over the built server when the sessions root is not read', () => {
  it('says a missing root leaves no sessions, changes nothing when accepted, and lists the sessions once the root appears', async () => {
    const scratch = temporaryDirectory('root-problem');
    cleanups.push(() => removeTemporary(scratch));
    const root = path.join(scratch, 'not-yet', 'sessions');
    const client = await serverOn(root, 'missing');

    for (const marked of ['Reuse what we did in @|', 'see @wea|ther and more', '@|']) {
      const { list, text } = await completeIn(client, marked);
      expect(list.isIncomplete).toBe(true);
      expect(list.items).toHaveLength(1);
      const item = list.items[0]!;
      expect(item).toMatchObject({ label: `No dsh sessions: ${root} does not exist`, kind: TEXT_KIND });
      expect(item.detail).toBe(`The dsh sessions root ${root} does not exist yet; sessions appear once it does.`);
      expect(acceptItem(text, item)).toBe(text);
      // Clients filter on what was typed: the item's filterText keeps it shown.
      const typed = (item.textEdit as TextEdit).newText;
      expect(item.filterText!.startsWith(`${typed} `)).toBe(true);
      // Resolving it is harmless too: nothing is added that could change the text.
      const resolved = await client.resolve(item);
      expect(resolved.textEdit).toEqual(item.textEdit);
      expect(resolved.additionalTextEdits).toBeUndefined();
    }

    mkdirSync(path.dirname(root), { recursive: true });
    cpSync(EXAMPLE_STORE, root, { recursive: true });
    // Asked again (the list was incomplete), completion now lists the sessions and no notice.
    const sessions = await pollUntil(
      async () => {
        const { list } = await completeIn(client, 'see @|');
        return list.items.length === Object.keys(EXAMPLE_SESSIONS).length ? list : undefined;
      },
      30_000,
      'the sessions of the root once it appears',
    );
    expect(sessions.items.every((item) => item.kind === 18)).toBe(true);
    expect(sessions.isIncomplete).toBe(false);
  });

  it('says a root that is a regular file is not a directory, and accepting changes nothing', async () => {
    const scratch = temporaryDirectory('root-file');
    cleanups.push(() => removeTemporary(scratch));
    const root = path.join(scratch, 'sessions');
    writeFileSync(root, 'not a directory\n');
    const client = await serverOn(root, 'not-a-directory');

    const { list, text } = await completeIn(client, 'first\r\n😀 @x|yz\r\nlast');
    expect(list.isIncomplete).toBe(true);
    expect(list.items.map((item) => [item.label, item.kind])).toEqual([[`No dsh sessions: ${root} is not a directory`, TEXT_KIND]]);
    expect(list.items[0]!.detail).toContain('is not a directory, so no sessions can be listed');
    expect(acceptItem(text, list.items[0]!)).toBe(text);
  });
});
