import fs from 'node:fs';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

/** An open ledger database. */
export type Db = Database.Database;

/**
 * Open (creating if needed) the ledger at `file`, in WAL mode, migrated to the newest schema. Returns whether
 * the file was created, so the CLI can say so once.
 */
export function openDb(file: string, options: { readonly?: boolean } = {}): { db: Db; created: boolean } {
  const created = !fs.existsSync(file);
  const db = new Database(file, { readonly: options.readonly === true && !created });
  db.pragma('busy_timeout = 30000');
  if (!options.readonly || created) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    migrate(db);
  }
  db.pragma('foreign_keys = ON');
  return { db, created };
}

/** Apply the migrations the database has not seen yet, each in its own transaction. */
export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
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
