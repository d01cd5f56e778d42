import fs from 'node:fs';
import type Database from 'better-sqlite3';
import type { DroverPaths } from '../paths.js';
import { type Db, openDb } from './open.js';

/** The ledger: drover's record of jobs, tasks, launches and attempts, in `.drover/ledger.db`. */
export class Ledger {
  private readonly cache = new Map<string, Database.Statement>();
  private constructor(
    readonly db: Db,
    readonly paths: DroverPaths,
    /** True when this call created `.drover/` (the CLI says so once). */
    readonly created: boolean,
  ) {}

  /** Open the ledger of a `.drover/` folder, creating the folder and database on first use. */
  static open(paths: DroverPaths): Ledger {
    const existed = fs.existsSync(paths.ledger);
    fs.mkdirSync(paths.root, { recursive: true });
    const { db } = openDb(paths.ledger);
    return new Ledger(db, paths, !existed);
  }

  /** A prepared statement, compiled once per ledger. */
  stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  /** Run `fn` in one write transaction (BEGIN IMMEDIATE: writers queue up instead of failing). */
  write<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    return this.db.transaction(fn).immediate();
  }

  close(): void {
    this.db.close();
  }
}
