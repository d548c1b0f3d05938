// Spec audit (docs/traceability.md): lsp-contract.md "Read-only" — the built server, driven through every
// feature it offers (completion and resolve, file mentions inside the root, every command, hover, links,
// code actions, diagnostics), writes, moves and creates nothing under the sessions root: names, modes,
// sizes, mtimes (directories too) and bytes are unchanged after shutdown.
import { cpSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionCommands, encodeSessionReferenceUri, formatSessionReferenceMention, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import type { CompletionItem, Diagnostic } from 'vscode-languageserver-protocol';
import { fixtureStore } from '../support/conformance';
import { fileUri, pollUntil } from '../support/lspClient';
import { treeHash } from '../reliability/support/stores';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, removeTemporary, startServer, temporaryDirectory, waitForSessions } from './helpers';

const scratch = temporaryDirectory('read-only-audit');
afterAll(() => removeTemporary(scratch));

describe('the server never writes under the sessions root', () => {
  it('leaves the root byte-identical after every feature has run over it', async () => {
    const root = path.join(scratch, 'sessions');
    cpSync(EXAMPLE_STORE, root, { recursive: true });
    // The zstd fixture store too, so the compressed reader is exercised as well.
    const fixtureSessions = readdirSync(fixtureStore('zstd'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.zstd')).length;
    cpSync(fixtureStore('zstd'), root, { recursive: true });
    const before = treeHash(root);

    // The workspace folder IS the sessions root, so file mentions walk it as well.
    const { client, cleanup } = await startServer({
      initializationOptions: { sessionsRoot: root },
      workspaceFolders: [{ uri: fileUri(root), name: 'sessions' }],
      rootUri: fileUri(root),
    });
    try {
      const expected = Object.keys(EXAMPLE_SESSIONS).length + fixtureSessions;
      await waitForSessions(client, expected);
      const listed = await client.executeCommand<SessionReferenceMentionCandidate[]>(SessionCommands.candidates, { limit: 1000 });
      expect(listed).toHaveLength(expected);

      const uri = fileUri(path.join(root, 'PROMPT.md'));
      const mention = formatSessionReferenceMention({ sessionId: EXAMPLE_SESSIONS.cache, label: 'an old label' });
      const text = `see ${mention} and ${encodeSessionReferenceUri(EXAMPLE_SESSIONS.hourly)}\nbroken @[x](dsh-session:IiJ) ${encodeSessionReferenceUri('nope')}\n@`;
      await client.openDocument(uri, text);
      const end = { line: 2, character: 1 };

      const list = await client.completion(uri, end);
      expect(list.items.some((item) => (item.data as { kind?: string } | undefined)?.kind === 'dsh-file')).toBe(true);
      expect(list.items.some((item) => (item.data as { kind?: string } | undefined)?.kind === 'dsh-session')).toBe(true);
      for (const item of list.items.slice(0, 20)) await client.resolve(item as CompletionItem);
      await client.completion(uri, end, '/');
      await client.request('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 6 } });
      await client.request('textDocument/documentLink', { textDocument: { uri } });
      const diagnostics = await pollUntil(() => {
        const published = client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === uri);
        const latest = published.at(-1)?.params as { diagnostics: Diagnostic[] } | undefined;
        return latest !== undefined && latest.diagnostics.length > 0 ? latest.diagnostics : undefined;
      }, 20_000, 'diagnostics');
      await client.request('textDocument/codeAction', {
        textDocument: { uri },
        range: { start: { line: 0, character: 0 }, end },
        context: { diagnostics },
      });

      await client.executeCommand(SessionCommands.parse, { text: `see ${mention}` });
      await client.executeCommand(SessionCommands.formatMention, { sessionId: EXAMPLE_SESSIONS.cache });
      await client.executeCommand(SessionCommands.preview, { textDocument: { uri } });
      await client.executeCommand(SessionCommands.prepare, { text: `${mention} ${encodeSessionReferenceUri(EXAMPLE_SESSIONS.hourly)}` });
      for (const { sessionId } of listed) {
        await client.executeCommand(SessionCommands.prepare, { content: [], references: [{ sessionId }], config: { maxReferenceBytes: 400 } }).catch(() => undefined);
        await client.executeCommand(SessionCommands.transcript, { sessionId }).catch(() => undefined);
      }
      expect(await client.shutdown()).toBe(0);
    } finally {
      await cleanup();
    }
    expect(treeHash(root)).toBe(before);
  });
});
