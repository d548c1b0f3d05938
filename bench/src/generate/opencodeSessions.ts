/**
 * A synthetic opencode home for the mixed-store bench: the real fixture database
 * (test/agent-stores/fixtures/opencode-checkpointed/, written by opencode 1.18.33) with its sessions
 * replaced by `count` copies of its tool-call session, each under a fresh id, cwd and title, its
 * messages and parts copied with it. Needs node:sqlite (Node 22.13 or newer): without it there is
 * no opencode home, and the bench runs without opencode.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../server/serverProcess';

const TEMPLATE_DB = path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures', 'opencode-checkpointed', 'opencode.db');
const TEMPLATE_ID = 'ses_db5289112ffeePBiDfPO1FfEZw';

interface Sqlite {
  DatabaseSync: new (file: string) => {
    exec(sql: string): void;
    prepare(sql: string): { run(...params: (string | number)[]): unknown };
    close(): void;
  };
}

/** node:sqlite, when this Node has it. */
function sqlite(): Sqlite | undefined {
  return process.getBuiltinModule?.('node:sqlite') as Sqlite | undefined;
}

/** Whether an opencode home can be made (and read) on this Node. */
export function canMakeOpencodeHome(): boolean {
  return sqlite() !== undefined;
}

/** One generated session: its id, title and cwd. */
export interface OpencodeSession {
  id: string;
  title: string;
  cwd: string;
}

/** Writes `home/opencode.db` holding exactly `sessions` (each a copy of the template's messages and parts). */
export function writeOpencodeHome(home: string, sessions: readonly OpencodeSession[]): void {
  const module = sqlite();
  if (module === undefined) throw new Error('an opencode home needs node:sqlite (Node 22.13 or newer)');
  mkdirSync(home, { recursive: true });
  const file = path.join(home, 'opencode.db');
  copyFileSync(TEMPLATE_DB, file);
  const db = new module.DatabaseSync(file);
  try {
    db.exec('BEGIN');
    const session = db.prepare(
      'INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) ' +
        "SELECT ?, project_id, slug, ?, ?, version, ?, ? FROM session WHERE id = '" + TEMPLATE_ID + "'",
    );
    const messages = db.prepare(
      "INSERT INTO message (id, session_id, time_created, time_updated, data) SELECT id || '_' || ?, ?, time_created, time_updated, data FROM message WHERE session_id = '" +
        TEMPLATE_ID + "'",
    );
    const parts = db.prepare(
      "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) SELECT id || '_' || ?, message_id || '_' || ?, ?, time_created, time_updated, data FROM part WHERE session_id = '" +
        TEMPLATE_ID + "'",
    );
    sessions.forEach(({ id, title, cwd }, i) => {
      const created = 1796000000000 + i * 1000;
      session.run(id, cwd, title, created, created);
      messages.run(id, id);
      parts.run(id, id, id);
    });
    // The fixture's own sessions go: the home holds exactly the generated ones.
    db.exec("DELETE FROM part WHERE session_id NOT LIKE 'ses_bench_%'; DELETE FROM message WHERE session_id NOT LIKE 'ses_bench_%'; DELETE FROM session WHERE id NOT LIKE 'ses_bench_%'; COMMIT");
  } finally {
    db.close();
  }
}
