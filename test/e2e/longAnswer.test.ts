/**
 * A long `dshSession.candidates` answer as the built server writes it on stdout: the bytes of the
 * response are those of `JSON.stringify` of the plain candidate rows (the contract's keys, in order).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionCommands, formatSessionReferenceMention, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import { REPO_ROOT, SERVER_BIN, LspTestClient } from '../support/lspClient';
import { writeSession } from '../reliability/support/stores';
import { removeTemporary, temporaryDirectory } from './helpers';

/** More rows than fit in a couple of thousand: the answer is long (~0.4 MB of JSON). */
const SESSIONS = 2_100;
const TITLES = ['Plain title', 'é accents and 日本語', 'quotes " and \\ back', 'brackets [v2.0] and ]', 'emoji 🎉 and \u2028 separator', 'tab\tinside'];

interface Written {
  id: string;
  cwd: string | undefined;
  createdAt: number;
  title: string;
}

/** Each response body the server wrote, in order, as raw bytes, read from its stdout framing. */
function frames(stdout: Buffer): Buffer[] {
  const bodies: Buffer[] = [];
  let at = 0;
  while (at < stdout.length) {
    const headerEnd = stdout.indexOf('\r\n\r\n', at, 'ascii');
    if (headerEnd === -1) break;
    const length = /Content-Length: (\d+)/i.exec(stdout.subarray(at, headerEnd).toString('ascii'));
    if (length === null) throw new Error(`no Content-Length at byte ${at}`);
    const start = headerEnd + 4;
    bodies.push(stdout.subarray(start, start + Number(length[1])));
    at = start + Number(length[1]);
  }
  return bodies;
}

/** The row a client must see for a written session: `sessionId, label, cwd?, createdAt, mention`. */
function plainRow(session: Written): SessionReferenceMentionCandidate {
  const mention = formatSessionReferenceMention({ sessionId: session.id, label: session.title });
  return session.cwd === undefined
    ? { sessionId: session.id, label: session.title, createdAt: session.createdAt, mention }
    : { sessionId: session.id, label: session.title, cwd: session.cwd, createdAt: session.createdAt, mention };
}

let root: string;
let scratch: string;
let child: ChildProcess;
let client: LspTestClient;
const stdout: Buffer[] = [];
const written = new Map<string, Written>();

beforeAll(async () => {
  root = temporaryDirectory('long-answer');
  scratch = temporaryDirectory('home');
  for (let i = 0; i < SESSIONS; i++) {
    const session: Written = {
      id: `session-${String(i).padStart(5, '0')}`,
      cwd: i % 9 === 4 ? undefined : `/home/sam/project-${i % 17}`,
      createdAt: 1_790_000_000_000 + i * 60_000,
      title: `${TITLES[i % TITLES.length]} ${i}`,
    };
    writeSession(root, { id: session.id, cwd: session.cwd, createdAt: session.createdAt, turns: [{ prompt: `prompt ${i}`, answer: 'done', title: session.title }] }, 'raw');
    written.set(session.id, session);
  }
  child = spawn(process.execPath, [SERVER_BIN, '--stdio'], {
    cwd: REPO_ROOT,
    env: { ...process.env, XDG_CACHE_HOME: path.join(scratch, 'cache'), DSH_HOME: path.join(scratch, 'dsh') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr!.resume();
  // Every byte the server writes is kept, beside the client's own reading of them.
  child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
  client = LspTestClient.overStreams(child.stdout!, child.stdin!);
  await client.initialize({ initializationOptions: { sessionsRoot: root } });
}, 120_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await client.shutdown().catch(() => child.kill());
    await exited;
  }
  client.dispose();
  removeTemporary(root);
  removeTemporary(scratch);
});

describe('a long dshSession.candidates answer on stdio', () => {
  it('is byte for byte JSON.stringify of the plain candidate rows', async () => {
    // The command waits for the first index, then lists every session.
    const rows = await client.executeCommand<SessionReferenceMentionCandidate[]>(SessionCommands.candidates, { limit: 100_000 });
    expect(rows.length).toBe(SESSIONS);
    expect(new Set(rows.map((row) => row.sessionId))).toEqual(new Set(written.keys()));
    const answers = frames(Buffer.concat(stdout)).filter((body) => body.includes('"result":[{"sessionId"'));
    expect(answers).toHaveLength(1);
    const id = (JSON.parse(answers[0]!.toString('utf-8')) as { id: number }).id;
    // In the server's order, each row exactly as the contract makes it from the written session.
    const expected = JSON.stringify({ jsonrpc: '2.0', id, result: rows.map((row) => plainRow(written.get(row.sessionId)!)) });
    expect(answers[0]!.length).toBeGreaterThan(300_000);
    expect(answers[0]!.equals(Buffer.from(expected, 'utf-8'))).toBe(true);
  }, 120_000);
});
