/**
 * A private, read-only snapshot of an agent's SQLite database, so that reading it writes nothing
 * beside it. Opening the agent's own file would: a reader of a WAL database creates or writes its
 * `-shm` (read marks) and may checkpoint; `immutable=1` would write nothing but miss the committed
 * frames still in the `-wal`. So the database and its `-wal` are copied (opened without following a
 * FIFO, only regular files) into a fresh folder of our own, and SQLite opens the copy there, where
 * it rebuilds the WAL index from the copied log and sees every transaction committed in it (a frame
 * torn mid-copy fails its checksum and ends the log there, as after a crash). A copy made while a
 * checkpoint rewrote the database is retried: the database's identity is compared before and
 * after. Needs node:sqlite (Node 22.13 or newer, unflagged); {@link loadSqlite} says whether it is here.
 */
import { constants, promises as fsp, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DatabaseReader } from '../formats/database';
import { fileIdentity, sameIdentity, type FileIdentity } from '../transcriptFiles';

/** node:sqlite, as much of it as the snapshot uses. */
interface SqliteModule {
  DatabaseSync: new (file: string, options?: { readOnly?: boolean }) => {
    prepare(sql: string): { all(...params: (string | number)[]): unknown[] };
    close(): void;
  };
}

/** The oldest runtime that has node:sqlite without a flag, for messages. */
export const SQLITE_RUNTIME = 'Node 22.13';

/** Largest database copied (a bigger one is not read). */
export const MAX_DATABASE_BYTES = 2 * 1024 * 1024 * 1024;

let sqlite: SqliteModule | null | undefined;

/** Snapshot folders not yet removed: a process that exits without disposing its stores leaves none behind. */
const liveFolders = new Set<string>();
let exitHook = false;

function track(folder: string): void {
  liveFolders.add(folder);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const live of liveFolders) rmSync(live, { recursive: true, force: true });
  });
}

function remove(folder: string): void {
  liveFolders.delete(folder);
  rmSync(folder, { recursive: true, force: true });
}

/** node:sqlite where this runtime has it unflagged, else undefined (its experimental warning is not printed). */
export function loadSqlite(): SqliteModule | undefined {
  if (sqlite !== undefined) return sqlite ?? undefined;
  const emitWarning = Reflect.get(process, 'emitWarning') as typeof process.emitWarning;
  // Loading it prints an ExperimentalWarning on Node 22: noise on a CLI's stderr, nothing to act on.
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if ((typeof warning === 'string' ? warning : warning.message).includes('SQLite')) return;
    Reflect.apply(emitWarning, process, [warning, ...rest]);
  }) as typeof process.emitWarning;
  try {
    sqlite = (process.getBuiltinModule?.('node:sqlite') as SqliteModule | undefined) ?? null;
  } catch {
    sqlite = null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return sqlite ?? undefined;
}

/** The identities of a database and its write-ahead log (undefined: no log). */
export interface DatabaseIdentity {
  db: FileIdentity;
  wal: FileIdentity | undefined;
}

export function sameDatabaseIdentity(a: DatabaseIdentity | undefined, b: DatabaseIdentity | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return sameIdentity(a.db, b.db) && (a.wal === undefined ? b.wal === undefined : b.wal !== undefined && sameIdentity(a.wal, b.wal));
}

async function identityOf(file: string): Promise<FileIdentity | undefined> {
  try {
    const stats = await fsp.stat(file);
    return stats.isFile() ? fileIdentity(stats) : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The database's identity now; undefined when there is no database file. Throws what `stat` throws but ENOENT. */
export async function databaseIdentity(file: string): Promise<DatabaseIdentity | undefined> {
  const db = await identityOf(file);
  if (db === undefined) return undefined;
  return { db, wal: await identityOf(`${file}-wal`) };
}

/** Copies a regular file (never waiting on a FIFO); false when it is not there. */
async function copyRegular(from: string, to: string): Promise<boolean> {
  let source;
  try {
    source = await fsp.open(from, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  try {
    if (!(await source.stat()).isFile()) return false;
    const target = await fsp.open(to, 'wx');
    try {
      const buffer = Buffer.allocUnsafe(1024 * 1024);
      for (let position = 0; ; ) {
        const { bytesRead } = await source.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) break;
        await target.write(buffer, 0, bytesRead);
        position += bytesRead;
      }
    } finally {
      await target.close();
    }
    return true;
  } finally {
    await source.close();
  }
}

/** One snapshot: the copy, opened read-only. */
export class DatabaseSnapshot implements DatabaseReader {
  private constructor(
    private readonly folder: string,
    private readonly db: InstanceType<SqliteModule['DatabaseSync']>,
    /** What the agent's files were when copied. */
    readonly identity: DatabaseIdentity,
  ) {}

  /**
   * Copies `file` (and its `-wal`) and opens the copy. Undefined when there is no database;
   * throws a file system error, `RangeError` past {@link MAX_DATABASE_BYTES}, or SQLite's error
   * for a file that is not a database.
   */
  static async take(sqliteModule: SqliteModule, file: string): Promise<DatabaseSnapshot | undefined> {
    for (let attempt = 0; ; attempt++) {
      const before = await databaseIdentity(file);
      if (before === undefined) return undefined;
      if (before.db.size + (before.wal?.size ?? 0) > MAX_DATABASE_BYTES) throw new RangeError('too large to read');
      const folder = await fsp.mkdtemp(path.join(os.tmpdir(), 'dsh-session-ls-db-'));
      track(folder);
      try {
        const copy = path.join(folder, 'snapshot.db');
        if (!(await copyRegular(file, copy))) throw Object.assign(new Error('not a regular file'), { code: 'ENOENT' });
        await copyRegular(`${file}-wal`, `${copy}-wal`);
        const after = await databaseIdentity(file);
        // A checkpoint rewrote the database while it was copied: the copies may not fit together.
        if (after === undefined || !sameIdentity(before.db, after.db)) {
          if (attempt < 4) {
            remove(folder);
            continue;
          }
        }
        const db = new sqliteModule.DatabaseSync(copy, { readOnly: true });
        return new DatabaseSnapshot(folder, db, before);
      } catch (error) {
        remove(folder);
        throw error;
      }
    }
  }

  all(sql: string, ...params: (string | number)[]): Record<string, unknown>[] {
    return this.db.prepare(sql).all(...params) as Record<string, unknown>[];
  }

  /** Closes the copy and removes it. */
  dispose(): void {
    try {
      this.db.close();
    } catch {
      // Already closed.
    }
    remove(this.folder);
  }
}
