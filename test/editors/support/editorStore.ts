import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DshLog, MODEL_SOURCE } from '../../../server/src/testing/testLogs';

/** One session of the editor-test store and what a reference to it must carry. */
export interface EditorTestSession {
  sessionId: string;
  /** The latest title, which the server offers as the label. */
  label: string;
  cwd: string;
  createdAt: number;
  /** The projected conversation (session-reference.md §8): direct prompts and assistant text. */
  conversation: Array<{ role: 'user' | 'assistant'; text: string }>;
}

// Both sessions live in /home/alice/proj, whose project directory is `--home-alice-proj--`
// (dsh-session-store.md §1.1); no editor workspace is there, so the server keeps store order.
const CWD = '/home/alice/proj';
const PROJECT_DIR = '--home-alice-proj--';

/** The older session: one turn, a fallback title. */
const PARSER_SESSION: EditorTestSession = {
  sessionId: '0c7f3a52-8d1e-4b6a-9f20-5e1d2c3b4a01',
  label: 'How should the parser treat CRLF?',
  cwd: CWD,
  createdAt: 1767225600000,
  conversation: [
    { role: 'user', text: 'How should the parser treat CRLF?' },
    { role: 'assistant', text: 'Split lines on LF and drop one CR before it; columns stay in UTF-16 units.' },
  ],
};

/** The newer session: a fallback title, then a user rename whose `]` the mention must escape. */
const RELEASE_SESSION: EditorTestSession = {
  sessionId: '9b2e6d14-3f5a-4c8b-a7d9-6e0f1a2b3c02',
  label: 'Release notes [draft]',
  cwd: CWD,
  createdAt: 1767312000000,
  conversation: [
    { role: 'user', text: 'Draft the release notes for 0.2' },
    { role: 'assistant', text: 'Draft: completion inserts one canonical mention; prepare matches dsh byte for byte.' },
  ],
};

/** The sessions in the order the server lists them (newest first; same cwd rank). */
export const EDITOR_TEST_SESSIONS: readonly EditorTestSession[] = [RELEASE_SESSION, PARSER_SESSION];

/** The raw JSONL log of one session: header, one completed turn, the fallback title, maybe a rename. */
function sessionLog(session: EditorTestSession, firstTitle: string): Uint8Array {
  const t = session.createdAt;
  const [prompt, answer] = session.conversation;
  const log = new DshLog({ header: { id: session.sessionId, createdAt: t, cwd: session.cwd }, clock: { start: t + 10 } });
  log.event('turn/start', { turn: 1 });
  log.tick(1).event('step/start', { turn: 1, step: 1 });
  const user = log.tick(1).event(
    'user/message',
    { content: [{ type: 'text', text: prompt.text }], source: { kind: 'user' }, role: 'user', id: `${session.sessionId}-u1` },
    { surfaceOp: 'append' },
  );
  log.tick(1).title(firstTitle, [user], { kind: 'fallback' });
  log.at(t + 500).event(
    'assistant/message',
    { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: answer.text }], source: MODEL_SOURCE, id: `${session.sessionId}-a1` } },
    { surfaceOp: 'append' },
  );
  log.tick(1).event('step/end', { turn: 1, step: 1 });
  log.event('turn/end', { turn: 1, reason: { kind: 'completed' } });
  if (firstTitle !== session.label) log.at(t + 60_000).title(session.label);
  return log.raw();
}

/** Writes the two-session raw store under `root` and returns its sessions in server order. */
export function writeEditorTestStore(root: string): readonly EditorTestSession[] {
  const titles = new Map([[RELEASE_SESSION.sessionId, RELEASE_SESSION.conversation[0].text], [PARSER_SESSION.sessionId, PARSER_SESSION.label]]);
  for (const session of EDITOR_TEST_SESSIONS) {
    const dir = path.join(root, PROJECT_DIR, session.sessionId);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'session.jsonl'), sessionLog(session, titles.get(session.sessionId)!));
  }
  return EDITOR_TEST_SESSIONS;
}
