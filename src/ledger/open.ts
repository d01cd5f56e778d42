import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DroverError } from '../errors.js';
import { MIGRATIONS } from './migrations.js';

/** An open ledger database. */
export type Db = Database.Database;

/** Database files this process opened, newest last: SQLite's errors do not say which file they are about. */
const opened: string[] = [];

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 30_000;

/**
 * Open (creating if needed) the ledger at `file`, in WAL mode, migrated to the newest schema. Returns whether
 * the file was created, so the CLI can say so once. Failures are DroverErrors naming the file and the remedy.
 */
export function openDb(file: string, options: { readonly?: boolean } = {}): { db: Db; created: boolean } {
  const created = !fs.existsSync(file);
  let db: Db | undefined;
  try {
    db = new Database(file, { readonly: options.readonly === true && !created });
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (!options.readonly || created) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      migrate(db);
    }
    db.pragma('foreign_keys = ON');
  } catch (err) {
    db?.close();
    throw ledgerError(err, file) ?? err;
  }
  opened.push(file);
  return { db, created };
}

/** A ledger database in memory, migrated to the newest schema: nothing is written to disk. */
export function openMemoryDb(): Db {
  const db = new Database(':memory:');
  migrate(db);
  db.pragma('foreign_keys = ON');
  return db;
}

/**
 * Open an existing ledger that this process cannot write (a read-only `.drover`): read-only in place when
 * SQLite can (its WAL index exists), else from a copy in memory of the file as it is on disk. Either way it
 * is a snapshot for reading: writes fail with SQLITE_READONLY.
 */
export function openDbForReading(file: string): Db {
  let db: Db;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('user_version', { simple: true }); // the first read opens the WAL index, or fails
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (code !== 'SQLITE_CANTOPEN' && !code.startsWith('SQLITE_IOERR')) throw ledgerError(err, file) ?? err;
    // A WAL database closed cleanly has no -shm file, and SQLite cannot make one in a read-only folder (or
    // size one on a full disk). Everything is in the main file then: read a copy of it, marked as a
    // rollback-journal database (bytes 18-19 of the header), which SQLite opens in memory.
    try {
      const image = fs.readFileSync(file);
      if (image.length >= 100) image.fill(1, 18, 20);
      db = new Database(image, { readonly: true });
      db.pragma('user_version', { simple: true });
    } catch (err2) {
      throw ledgerError(err2, file) ?? err2;
    }
  }
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== MIGRATIONS.length) {
    db.close();
    throw new DroverError(
      'io',
      version > MIGRATIONS.length
        ? `ledger schema version ${version} of ${file} is newer than this drover (${MIGRATIONS.length}): upgrade drover`
        : `the ledger ${file} is from an older drover (schema ${version}, now ${MIGRATIONS.length}) and cannot be written here to upgrade it: run drover once where ${path.dirname(file)} is writable`,
    );
  }
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  opened.push(file);
  return db;
}

/** Apply the migrations the database has not seen yet, each in its own transaction. */
export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new DroverError(
      'io',
      `ledger schema version ${current} is newer than this drover (${MIGRATIONS.length}): upgrade drover`,
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      // Re-check inside the write lock: another process may have migrated meanwhile.
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now > v) return;
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}

/** What SQLite's result codes say about a ledger file, and what the user can do about it. */
function describe(code: string, file: string): { code: 'corrupt' | 'io'; message: string } | undefined {
  const dir = path.dirname(file);
  if (code.startsWith('SQLITE_CORRUPT')) {
    return {
      code: 'corrupt',
      message: `the ledger ${file} is damaged (database disk image is malformed): restore it from a backup, or move it aside (its jobfiles and logs stay) and drover starts a new one; sqlite3's .recover may save its history`,
    };
  }
  if (code === 'SQLITE_NOTADB') {
    return {
      code: 'corrupt',
      message: `${file} is not a drover ledger (file is not a database): move it aside and drover starts a new one`,
    };
  }
  if (code === 'SQLITE_FULL') {
    return { code: 'io', message: `disk full at ${file}: free space on that disk and run the command again` };
  }
  if (code.startsWith('SQLITE_IOERR') && diskFull(dir)) {
    return {
      code: 'io',
      message: `disk full at ${file} (${code}): free space on that disk and run the command again`,
    };
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return {
      code: 'io',
      message: `disk I/O error at ${file} (${code}): check the disk (dmesg) and free space, then run the command again`,
    };
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return {
      code: 'io',
      message: `the ledger ${file} cannot be written (${code}): make ${dir} writable, or work in another folder`,
    };
  }
  if (code.startsWith('SQLITE_CANTOPEN')) {
    return {
      code: 'io',
      message: `cannot open the ledger ${file}: ${dir} must exist and be writable (a read-only folder can only be read)`,
    };
  }
  if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_')) {
    return {
      code: 'io',
      message: `the ledger ${file} stayed locked by another drover for 30 s: try again when it is done`,
    };
  }
  return undefined;
}

/** True when the file system of `dir` has no block left for us (SQLite reports that as an I/O error). */
function diskFull(dir: string): boolean {
  try {
    return fs.statfsSync(dir).bavail === 0;
  } catch {
    return false;
  }
}

/**
 * An error from SQLite as a DroverError naming the ledger file and the remedy (`corrupt`: exit 2, `io`:
 * exit 1); undefined for anything else. Without `file`, the ledger this process opened last is meant.
 */
export function ledgerError(err: unknown, file = opened.at(-1)): DroverError | undefined {
  if (!(err instanceof Database.SqliteError) || file === undefined) return undefined;
  const d = describe(err.code, file);
  return d ? new DroverError(d.code, d.message, { cause: err }) : undefined;
}
