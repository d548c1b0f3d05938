import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionCommands, formatSessionReferenceMention, type PreparedReferencedMessage } from '@dsh-session-ls/shared';
import type { Diagnostic, Hover } from 'vscode-languageserver-protocol';
import { credentialCorpus } from '../../server/src/testing/credentialCorpus';
import { DshLog } from '../../server/src/testing/testLogs';
import { REPO_ROOT, SERVER_BIN, fileUri, pollUntil, type LspTestClient } from '../support/lspClient';
import { removeTemporary, startServer, temporaryDirectory, waitForSessions } from './helpers';

// Fake credentials made by the corpus generator: none is written out in this file.
const CORPUS = credentialCorpus(11, 60);
const secretOf = (kind: string): string => {
  const item = CORPUS.find((entry) => entry.kind === kind)!;
  return item.text.slice(item.start, item.end);
};
const GITHUB = secretOf('github-token');
const AWS_ID = secretOf('aws-access-key-id');
const SLACK = secretOf('slack-token');

let scratch: string;
let root: string;
let promptUri: string;
const cleanups: Array<() => void | Promise<void>> = [];

function sessionBytes(id: string, turns: ReadonlyArray<[string, string]>, rename?: string): Uint8Array {
  const log = new DshLog({ header: { id, createdAt: 1767225600000, cwd: '/home/alice/proj' } });
  for (const [prompt, answer] of turns) {
    log.user(prompt);
    log.assistant(answer);
  }
  if (rename !== undefined) log.title(rename);
  return log.raw();
}

function sessionFile(id: string): string {
  return path.join(root, '--home-alice-proj--', id, 'session.jsonl');
}

function writeSession(id: string, turns: ReadonlyArray<[string, string]>, rename?: string): void {
  mkdirSync(path.dirname(sessionFile(id)), { recursive: true });
  writeFileSync(sessionFile(id), sessionBytes(id, turns, rename));
}

const LEAKY = formatSessionReferenceMention({ sessionId: 'leaky', label: 'Deploy fix' });
const CLEAN = formatSessionReferenceMention({ sessionId: 'clean', label: 'Tests' });

beforeEach(() => {
  scratch = temporaryDirectory('secrets');
  root = path.join(scratch, 'sessions');
  writeSession('leaky', [
    [`Deploy fails with export GITHUB_TOKEN=${GITHUB}`, 'The token in your shell is read first.'],
    ['and the key?', `aws_access_key_id = ${AWS_ID} is set in the profile`],
  ]);
  writeSession('clean', [['Run the tests', 'All 214 passed.']]);
  promptUri = fileUri(path.join(scratch, 'PROMPT.md'));
  cleanups.push(() => removeTemporary(scratch));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function diagnosticsOf(client: LspTestClient, match: (diagnostics: Diagnostic[]) => boolean, deadlineMs = 20_000): Promise<Diagnostic[]> {
  return pollUntil(() => {
    const published = client.messages('textDocument/publishDiagnostics').filter((m) => (m.params as { uri: string }).uri === promptUri);
    const latest = published.at(-1)?.params as { diagnostics: Diagnostic[] } | undefined;
    return latest !== undefined && match(latest.diagnostics) ? latest.diagnostics : undefined;
  }, deadlineMs, 'diagnostics');
}

const secretWarnings = (diagnostics: Diagnostic[]) => diagnostics.filter((d) => d.code === 'REFERENCED_SECRETS');

function expectNoCredential(text: string): void {
  for (const secret of [GITHUB, AWS_ID, SLACK]) expect(text).not.toContain(secret);
}

describe('credentials in mentioned sessions, through the built server', () => {
  it('warns on the mention, lists kinds in the hover, marks the preview, and re-checks when the session changes', async () => {
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
    cleanups.push(cleanup);
    await waitForSessions(client, 2);
    const text = `Compare ${LEAKY} with ${CLEAN}.`;
    await client.openDocument(promptUri, text);
    const diagnostics = await diagnosticsOf(client, (found) => secretWarnings(found).length === 1);
    const [warning] = secretWarnings(diagnostics);
    expect(warning).toMatchObject({ severity: 2, source: 'dsh-session', data: { kind: 'referenced-secrets', sessionId: 'leaky' } });
    expect(warning!.message).toContain('2 credentials (1 aws-access-key-id, 1 github-token)');
    expect(warning!.range.start.character).toBe(text.indexOf(LEAKY));
    expectNoCredential(JSON.stringify(diagnostics));

    const hover = await client.request<Hover>('textDocument/hover', { textDocument: { uri: promptUri }, position: { line: 0, character: text.indexOf(LEAKY) + 2 } });
    const value = (hover.contents as { value: string }).value;
    expect(value).toContain('credentials sent to the model**: 2 (aws-access-key-id × 1, github-token × 1)');
    // The preview quotes the first prompt with its token masked.
    expect(value).toContain('REDACTED:github-token');
    expectNoCredential(value);

    const preview = await client.executeCommand<string>(SessionCommands.preview, { textDocument: { uri: promptUri } });
    expect(preview).toContain('**2 credentials are sent to the model** (1 aws-access-key-id, 1 github-token)');
    expect(preview).toContain('[CREDENTIAL:github-token]');
    expectNoCredential(preview);

    // The clean session gains a credential (and a new title, which the store reports): its mention is checked again.
    writeSession('clean', [['Run the tests', 'All 214 passed.'], [`post with ${SLACK}`, 'Posted.']], 'Tests and Slack');
    // The store notices the change on its next sweep (as in storeChanges.test.ts, a generous deadline).
    const changed = await diagnosticsOf(client, (found) => secretWarnings(found).length === 2, 45_000);
    expect(secretWarnings(changed).map((d) => d.data as { sessionId: string }).map((data) => data.sessionId)).toEqual(['leaky', 'clean']);
    expectNoCredential(JSON.stringify(changed));
  });

  it('warns when a credential is appended to a mentioned session whose title (its listing row) stays the same', async () => {
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
    cleanups.push(cleanup);
    await waitForSessions(client, 2);
    await client.openDocument(promptUri, `See ${CLEAN}.`);
    await diagnosticsOf(client, (found) => found.length === 0);
    const before = await client.executeCommand<unknown[]>(SessionCommands.candidates, { query: '', limit: 10_000 });

    // A new turn appended as dsh appends it: the bytes written so far stay, no title record is added.
    const written = sessionBytes('clean', [['Run the tests', 'All 214 passed.']]);
    const grown = sessionBytes('clean', [['Run the tests', 'All 214 passed.'], [`post with ${SLACK}`, 'Posted.']]);
    expect(Buffer.from(grown.subarray(0, written.length)).equals(Buffer.from(written))).toBe(true);
    appendFileSync(sessionFile('clean'), grown.subarray(written.length));
    const changed = await diagnosticsOf(client, (found) => secretWarnings(found).length === 1, 45_000);
    expect(secretWarnings(changed)[0]).toMatchObject({ data: { kind: 'referenced-secrets', sessionId: 'clean' } });
    expect(secretWarnings(changed)[0]!.message).toContain('1 credential (1 slack-token)');
    expectNoCredential(JSON.stringify(changed));
    // The listing row did not change: the warning came from the content change alone.
    const after = await client.executeCommand<unknown[]>(SessionCommands.candidates, { query: '', limit: 10_000 });
    expect(after).toEqual(before);
  });

  it('warns on a claude-session: mention of an enabled agent, and again when that session is written with a credential', async () => {
    // A Claude Code store written by the real CLI (test/agent-stores/tools/generate.mjs), copied so it can be written.
    const home = path.join(scratch, 'claude-home');
    cpSync(path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures', 'claude-code'), home, { recursive: true });
    const id = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
    const file = path.join(home, 'projects', '-tmp-dsh-agent-fixtures-proj-a', `${id}.jsonl`);
    const lastPrompt = 'After the compaction, one more turn';
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root, agents: ['dsh', 'claude-code'], claudeCodeHome: home } });
    cleanups.push(cleanup);
    await waitForSessions(client, 2);
    const mention = formatSessionReferenceMention({ sessionId: id, label: 'Parser', agent: 'claude-code' });
    const text = `See ${mention}.`;
    await client.openDocument(promptUri, text);
    await diagnosticsOf(client, (found) => found.length > 0 && secretWarnings(found).length === 0);

    // The session is written again with a token in its last prompt (its queue entry and its message).
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(lastPrompt, `${lastPrompt}: export GITHUB_TOKEN=${GITHUB}`));
    const changed = await diagnosticsOf(client, (found) => secretWarnings(found).length === 1, 45_000);
    expect(secretWarnings(changed)[0]).toMatchObject({ severity: 2, source: 'dsh-session', data: { kind: 'referenced-secrets', sessionId: id } });
    expect(secretWarnings(changed)[0]!.message).toContain('2 credentials (2 github-token)');
    expect(secretWarnings(changed)[0]!.range.start.character).toBe(text.indexOf(mention));
    expectNoCredential(JSON.stringify(changed));
    const hover = await client.request<Hover>('textDocument/hover', { textDocument: { uri: promptUri }, position: { line: 0, character: text.indexOf(mention) + 2 } });
    const value = (hover.contents as { value: string }).value;
    expect(value).toContain('credentials sent to the model**: 2 (github-token × 2)');
    expectNoCredential(value);
  });

  it('with redactSecrets, prepares [REDACTED:<kind>] in place of each credential, and warns no more', async () => {
    const { client, cleanup } = await startServer({ initializationOptions: { sessionsRoot: root } });
    cleanups.push(cleanup);
    await waitForSessions(client, 2);
    const text = `Compare ${LEAKY}.`;
    await client.openDocument(promptUri, text);
    await diagnosticsOf(client, (found) => secretWarnings(found).length === 1);
    const plain = await client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { textDocument: { uri: promptUri } });
    expect(JSON.stringify(plain)).toContain(GITHUB);

    await client.changeConfiguration({ dshSessions: { redactSecrets: true } });
    await diagnosticsOf(client, (found) => secretWarnings(found).length === 0);
    const redacted = await client.executeCommand<PreparedReferencedMessage>(SessionCommands.prepare, { textDocument: { uri: promptUri } });
    const context = (redacted.additionalContext!.content[0] as { text: string }).text;
    expect(context).toContain('GITHUB_TOKEN=[REDACTED:github-token]');
    expect(context).toContain('aws_access_key_id = [REDACTED:aws-access-key-id] is set');
    expect(context.match(/<referenced-sessions>/g)).toHaveLength(1);
    expectNoCredential(JSON.stringify(redacted));
    // Everything else is the plain answer with the placeholders in.
    const withPlaceholders = (plain.additionalContext!.content[0] as { text: string }).text
      .replace(GITHUB, '[REDACTED:github-token]')
      .replace(AWS_ID, '[REDACTED:aws-access-key-id]');
    expect(context).toBe(withPlaceholders);

    const hover = await client.request<Hover>('textDocument/hover', { textDocument: { uri: promptUri }, position: { line: 0, character: text.indexOf(LEAKY) + 2 } });
    expect((hover.contents as { value: string }).value).toContain('- credentials: 2 redacted (aws-access-key-id × 1, github-token × 1)');
    const preview = await client.executeCommand<string>(SessionCommands.preview, { textDocument: { uri: promptUri } });
    expect(preview).toContain('2 credentials were redacted (1 aws-access-key-id, 1 github-token).');
  });
});

describe('dsh-session-ls prepare and credentials', () => {
  function prepare(...flags: string[]) {
    const result = spawnSync(process.execPath, [SERVER_BIN, 'prepare', '--text', `Compare ${LEAKY}.`, '--root', root, ...flags], {
      cwd: scratch,
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'no-dsh-home') },
      timeout: 60_000,
    });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it('warns on stderr, with kinds and counts only, that credentials are being sent', () => {
    const { code, stdout, stderr } = prepare('--json');
    expect(code).toBe(0);
    expect(stdout).toContain(GITHUB);
    expect(stderr).toBe('warning: the context sends 2 credentials to the model (1 aws-access-key-id, 1 github-token); pass --redact-secrets to replace them\n');
  });

  it('--redact-secrets sends placeholders and warns nothing', () => {
    const { code, stdout, stderr } = prepare('--redact-secrets', '--json');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('[REDACTED:github-token]');
    expectNoCredential(stdout);
  });
});
