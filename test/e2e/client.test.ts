/**
 * `dsh-session-ls/client` (server/src/client) against the built server: the server it starts by default,
 * how a failed start reads, the settings it passes on, and the editor features and commands it asks on a
 * text (diagnostics, hover, code actions, the transcript), as a user's script or test asks them.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { DshSessionClient, DshSessionStartError, SessionReferenceError, positionAt, type SessionDiagnostic } from '../../server/src/client';
import { buildHeldIndexServer, holdArgument } from '../support/heldIndexServerBuild';
import { REPO_ROOT, SERVER_BIN } from '../support/lspClient';
import { EXAMPLE_SESSIONS, EXAMPLE_STORE, removeTemporary, startSessionClient, temporaryDirectory } from './helpers';

const { cache, hourly } = EXAMPLE_SESSIONS;
const CACHE_TITLE = 'Cache OpenWeather responses';
const STALE = formatSessionReferenceMention({ sessionId: cache, label: 'the cache work' });
const CURRENT = formatSessionReferenceMention({ sessionId: hourly, label: 'Hourly forecast endpoint' });
const UNKNOWN = encodeSessionReferenceUri('no-such-session');

// Stores written by the real Claude Code and codex-cli (test/agent-stores/tools/generate.mjs).
const FIXTURES = path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures');
const CLAUDE_RENAMED = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const CODEX_RENAMED = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';

let scratch: string;
beforeAll(() => {
  scratch = temporaryDirectory('client');
});
afterAll(() => removeTemporary(scratch));

/** The error a promise rejects with, or a failure if it resolved. */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  if (!(outcome.error instanceof Error)) throw new Error(`expected an Error, got ${String(outcome.error)}`);
  return outcome.error;
}

/** An environment with a private cache and DSH_HOME, and `dirs` first on PATH. */
function privateEnv(name: string, dirs: string[] = []): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: [...dirs, process.env.PATH ?? ''].join(path.delimiter),
    XDG_CACHE_HOME: path.join(scratch, `${name}-cache`),
    DSH_HOME: path.join(scratch, `${name}-dsh`),
  };
}

describe('starting the server', () => {
  it("starts its own package's server with this Node by default, whatever `dsh-session-ls` is on PATH", async () => {
    // A `dsh-session-ls` first on PATH that fails and leaves a mark: the client must not run it.
    const impostorDir = path.join(scratch, 'impostor');
    const mark = path.join(scratch, 'impostor-ran');
    mkdirSync(impostorDir, { recursive: true });
    writeFileSync(path.join(impostorDir, 'dsh-session-ls'), `#!/bin/sh\ntouch '${mark}'\nexit 3\n`);
    chmodSync(path.join(impostorDir, 'dsh-session-ls'), 0o755);

    const client = await DshSessionClient.start({ settings: { sessionsRoot: EXAMPLE_STORE }, cwd: scratch, env: privateEnv('default', [impostorDir]) });
    try {
      expect((await client.candidates()).map((row) => row.sessionId)).toContain(cache);
    } finally {
      await client.shutdown();
    }
    expect(existsSync(mark)).toBe(false);
  });

  it('rejects a failed start with one message naming the cause and the command run', async () => {
    const error = await rejectionOf(DshSessionClient.start({ args: ['--sessions-root'], cwd: scratch, env: privateEnv('usage') }));
    expect(error).toBeInstanceOf(DshSessionStartError);
    const command = [process.execPath, SERVER_BIN, '--stdio', '--sessions-root'];
    expect((error as DshSessionStartError).command).toEqual(command);
    expect(error.message).toBe(
      `cannot start dsh-session-ls (\`${command.join(' ')}\`): the server exited with code 2 before it answered initialize: USAGE: --sessions-root needs a value`,
    );
  });

  it('names how a server that stopped before answering ended, and its last words', async () => {
    const script = path.join(scratch, 'broken-server');
    writeFileSync(script, "#!/bin/sh\necho 'starting' >&2\necho 'BROKEN: no store here' >&2\nexit 3\n");
    chmodSync(script, 0o755);
    const error = await rejectionOf(DshSessionClient.start({ server: script, cwd: scratch }));
    expect(error.message).toBe(`cannot start dsh-session-ls (\`${script} --stdio\`): the server exited with code 3 before it answered initialize: BROKEN: no store here`);
  });

  it('names a command that is not there, and how to start the package’s own server instead', async () => {
    const error = await rejectionOf(DshSessionClient.start({ server: 'dsh-session-ls-no-such-program-here', cwd: scratch }));
    expect(error).toBeInstanceOf(DshSessionStartError);
    expect((error as DshSessionStartError).command).toEqual(['dsh-session-ls-no-such-program-here', '--stdio']);
    expect(error.message).toBe(
      'cannot start dsh-session-ls (`dsh-session-ls-no-such-program-here --stdio`): spawn dsh-session-ls-no-such-program-here ENOENT' +
        " (no such command; without the `server` option the client starts its own package's server)",
    );
  });

  it('shuts the server down at the end of an `await using` scope', async () => {
    let client: DshSessionClient;
    {
      await using started = await DshSessionClient.start({ server: SERVER_BIN, settings: { sessionsRoot: EXAMPLE_STORE }, cwd: scratch, env: privateEnv('using') });
      client = started;
      expect(await client.parse('hi')).toEqual({ text: 'hi', references: [] });
    }
    // Shut down cleanly: `shutdown` then `exit`, so the server ended with code 0.
    expect((await rejectionOf(client.parse('hi'))).message).toMatch(/^dsh-session-ls is not running \(exit code 0\)/);
  });
});

describe('other agents through the settings', () => {
  it('passes agents, claudeCodeHome and codexHome on, and reads another agent’s transcript', async () => {
    const { client, cleanup } = await startSessionClient({
      settings: {
        sessionsRoot: EXAMPLE_STORE,
        agents: ['dsh', 'claude-code', 'codex'],
        claudeCodeHome: path.join(FIXTURES, 'claude-code'),
        codexHome: path.join(FIXTURES, 'codex'),
      },
    });
    try {
      const rows = await client.candidates('', { limit: 1000 });
      expect(rows.map((row) => row.agent ?? 'dsh')).toEqual(expect.arrayContaining(['dsh', 'claude-code', 'codex']));
      expect(rows.find((row) => row.sessionId === CLAUDE_RENAMED)?.agent).toBe('claude-code');
      expect(rows.find((row) => row.sessionId === CODEX_RENAMED)?.agent).toBe('codex');
      const transcript = await client.transcript(CODEX_RENAMED, { agent: 'codex' });
      expect(transcript).toContain('- agent: codex (read-only)');
    } finally {
      await cleanup();
    }
  });
});

describe('editor features and commands on a text', () => {
  let client: DshSessionClient;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ client, cleanup } = await startSessionClient({ settings: { sessionsRoot: EXAMPLE_STORE } }));
  });
  afterAll(() => cleanup());

  it('resolves with the diagnostics the server publishes for the text, and none for a message dsh accepts', async () => {
    const text = `Compare ${STALE}\nwith ${UNKNOWN}.`;
    const diagnostics = await client.diagnostics(text);
    expect(diagnostics.map((d) => [d.range.start.line, d.severity, d.code ?? null, d.source])).toEqual([
      [0, 4, null, 'dsh-session'],
      [1, 1, 'SESSION_REFERENCE_READ_FAILED', 'dsh-session'],
    ]);
    expect(diagnostics[0]!.message).toContain(CACHE_TITLE);
    expect(diagnostics[1]!.message).toContain('session "no-such-session" not found');
    // They agree with prepare: it fails with the first error's code.
    expect(((await rejectionOf(client.prepare(text))) as SessionReferenceError).code).toBe('SESSION_REFERENCE_READ_FAILED');
    expect(await client.diagnostics(`Compare ${CURRENT}.`)).toEqual([]);
  });

  it('waits for the first index before it asks, so an unknown session is reported (first index held open by the store double)', async () => {
    const hold = path.join(scratch, 'hold');
    writeFileSync(hold, '');
    const server = await buildHeldIndexServer(path.join(scratch, 'held-server'));
    const held = await startSessionClient({ server, args: [holdArgument(hold)], settings: { sessionsRoot: EXAMPLE_STORE } });
    try {
      const text = `See ${UNKNOWN} @`;
      const uri = pathToFileURL(path.join(scratch, 'held.md')).href;
      const diagnostics = held.client.diagnostics(text, { uri });
      // Not opened yet: completion answers a document the server does not have with nothing, complete (an
      // open one, while the first index is held, with what is indexed so far: nothing, incomplete).
      const completion = await held.client.request('textDocument/completion', { textDocument: { uri }, position: positionAt(text) });
      expect(completion).toEqual({ isIncomplete: false, items: [] });
      rmSync(hold);
      expect((await diagnostics).map((d) => d.code)).toEqual(['SESSION_REFERENCE_READ_FAILED']);
    } finally {
      rmSync(hold, { force: true });
      await held.cleanup();
    }
  });

  it('rejects diagnostics with SESSION_REFERENCE_CANCELLED when the signal aborts', async () => {
    const error = await rejectionOf(client.diagnostics(`See ${CURRENT}.`, { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(SessionReferenceError);
    expect((error as SessionReferenceError).code).toBe('SESSION_REFERENCE_CANCELLED');
    // The client goes on.
    expect(await client.diagnostics(`See ${CURRENT}.`)).toEqual([]);
  });

  it('hovers a mention (at an offset or a position), and nothing elsewhere', async () => {
    const text = `Compare ${STALE} now`;
    const offset = text.indexOf('@[') + 3;
    const hover = await client.hover(text, offset);
    expect(hover?.contents.kind).toBe('markdown');
    expect(hover?.contents.value).toContain(`**${CACHE_TITLE}**`);
    expect(hover?.range).toEqual({ start: { line: 0, character: 8 }, end: { line: 0, character: 8 + STALE.length } });
    expect(await client.hover(text, { line: 0, character: offset })).toEqual(hover);
    expect(await client.hover(text, 2)).toBeNull();
  });

  it('offers the code actions of a range, linked to the diagnostics given', async () => {
    const text = `Compare ${STALE} and ${UNKNOWN}`;
    const diagnostics: SessionDiagnostic[] = await client.diagnostics(text);
    const update = (await client.codeActions(text, 10, { diagnostics })).find((action) => action.title.startsWith('Update the label'));
    expect(update?.kind).toBe('quickfix');
    const edits = Object.values(update?.edit?.changes ?? {}).flat();
    expect(edits.map((edit) => edit.newText)).toEqual([formatSessionReferenceMention({ sessionId: cache, label: CACHE_TITLE })]);

    const end = { line: 0, character: text.length - 2 };
    const remove = (await client.codeActions(text, { start: end, end }, { diagnostics, only: ['quickfix'] })).find((action) => action.title.startsWith('Remove'));
    expect(remove?.diagnostics?.map((d) => d.code)).toEqual(['SESSION_REFERENCE_READ_FAILED']);
    expect(await client.codeActions('no mention here', 3)).toEqual([]);
  });

  it('answers the transcript of a session, and READ_FAILED for one that is not there', async () => {
    const transcript = await client.transcript(cache);
    expect(transcript).toContain(`# ${CACHE_TITLE}`);
    expect(transcript).toContain('OpenWeather rate-limits us at 60 calls a minute. How should we cache responses?');
    const error = await rejectionOf(client.transcript('no-such-session'));
    expect((error as SessionReferenceError).code).toBe('SESSION_REFERENCE_READ_FAILED');
  });
});
