import path from 'node:path';
import Database from 'better-sqlite3';
import { DroverError } from '../errors.js';

/**
 * Only one controller acts on a ledger at a time. The lock is SQLite's own: an exclusive transaction held on
 * `.drover/server/lock.db` for as long as the controller runs. It is a POSIX lock on that file, so the kernel
 * drops it when the process ends however it ends (a SIGKILLed controller leaves no stale lock), and a second
 * controller that tries to take it is refused at once.
 */

/** A held controller lock. */
export interface ServerLock {
  /** Give the lock up (graceful shutdown). */
  release(): void;
}

/**
 * Take the controller lock of the `.drover/` folder whose server files are in `serverDir`, or throw a conflict
 * error naming who holds it (from `holder()`, e.g. server.json's pid and URL).
 */
export function takeServerLock(serverDir: string, holder: () => string | undefined): ServerLock {
  const db = new Database(path.join(serverDir, 'lock.db'));
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      const who = holder();
      throw new DroverError(
        'conflict',
        `another drover server uses this folder's ledger${who ? ` (${who})` : ''}: stop it (drover server stop) or use that one`,
        { cause: err },
      );
    }
    throw err;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
}
