import fs from 'node:fs';
import type Database from 'better-sqlite3';
import { DroverError, describeSystemError, ioError, isSystemError, type SystemError } from '../errors.js';
import type { DroverPaths } from '../paths.js';
import { type Db, ledgerError, openDb, openDbForReading, openMemoryDb } from './open.js';

/** Where the ledger's warnings go (a torn or corrupt record file): stderr, one line each, unless told. */
export type WarningSink = (message: string) => void;

const toStderr: WarningSink = (message) => {
  process.stderr.write(`drover: warning: ${message}\n`);
};

/** The ledger: drover's record of jobs, tasks, launches and attempts, in `.drover/ledger.db`. */
export class Ledger {
  private readonly cache = new Map<string, Database.Statement>();
  /** Opened by a command that only reads: bringing the ledger up to date may fail, the answer not. */
  private forReading = false;
  /** Warnings already given (each once per process). */
  private readonly warned = new Set<string>();
  private constructor(
    readonly db: Db,
    readonly paths: DroverPaths,
    /** True when this call created `.drover/` (the CLI says so once). */
    readonly created: boolean,
    /**
     * Why the ledger was opened for reading only (`.drover` cannot be written, or the disk refused to open it
     * for writing): it is shown as last written, and nothing brings it up to date. Undefined when writable.
     */
    readonly readOnlyBecause: string | undefined,
    /** Where warnings go. */
    public warn: WarningSink = toStderr,
  ) {}

  /** Open the ledger of a `.drover/` folder, creating the folder and database on first use. */
  static open(paths: DroverPaths): Ledger {
    const existed = fs.existsSync(paths.ledger);
    try {
      fs.mkdirSync(paths.root, { recursive: true });
    } catch (err) {
      throw isSystemError(err) ? ioError(err, paths.root) : err;
    }
    // SQLite would open an unwritable ledger read-only without a word and fail at the first write, or not
    // open it at all: say what is wrong instead.
    const refused = writeRefused(paths);
    if (refused) throw ioError(refused);
    const { db } = openDb(paths.ledger);
    return new Ledger(db, paths, !existed, undefined);
  }

  /**
   * A ledger in memory, with nothing on disk: for what runs on the ledger without a `.drover/` folder (the
   * controller's decisions in a test). `paths` only names where files would go.
   */
  static inMemory(paths: DroverPaths): Ledger {
    return new Ledger(openMemoryDb(), paths, false, undefined);
  }

  /** True when the ledger was opened for reading only (see readOnlyBecause). */
  get readonly(): boolean {
    return this.readOnlyBecause !== undefined;
  }

  /**
   * Open an existing ledger for a command that only reads (status, list, logs, history): read-only when
   * `.drover` cannot be written or the disk refuses to open it for writing (SQLite cannot make its WAL index
   * on a full disk), saying once on stderr, when it matters, that the answer may be stale.
   */
  static openForReading(paths: DroverPaths): Ledger {
    const refused = writeRefused(paths);
    let because = refused ? describeSystemError(refused, refused.path, '') : undefined;
    if (!because) {
      try {
        const ledger = Ledger.open(paths);
        ledger.forReading = true;
        return ledger;
      } catch (err) {
        if (!(err instanceof DroverError) || err.code !== 'io') throw err;
        because = err.message;
      }
    }
    const db = openDbForReading(paths.ledger);
    if (db.memory && fileSize(`${paths.ledger}-wal`) > 0) {
      because += ` (and its write-ahead log ${paths.ledger}-wal cannot be read: recent changes may be missing)`;
    }
    return new Ledger(db, paths, false, because);
  }

  /**
   * A prepared statement, compiled once per ledger and shared by every caller with the same SQL text. It comes in
   * its default mode (rows as objects) whatever an earlier caller chained onto it: a `.pluck()` or `.raw()` of one
   * caller must never reach another that shares the text (a cancel once read task ids as undefined that way).
   */
  stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.watchModes(s);
      this.cache.set(sql, s);
    } else {
      this.modeResets.get(s)?.();
    }
    return s;
  }

  /** Statements whose mode a caller changed, and how to put each back to the default. */
  private readonly modeResets = new Map<Database.Statement, () => void>();

  /** Note when a caller turns pluck or raw mode on, so the next stmt() of its text turns it off again. */
  private watchModes(s: Database.Statement): void {
    const pluck = s.pluck.bind(s);
    const raw = s.raw.bind(s);
    const reset = () => {
      pluck(false);
      raw(false);
      this.modeResets.delete(s);
    };
    s.pluck = (on = true) => {
      pluck(on);
      if (on) this.modeResets.set(s, reset);
      return s;
    };
    s.raw = (on = true) => {
      raw(on);
      if (on) this.modeResets.set(s, reset);
      return s;
    };
  }

  /** Run `fn` in one write transaction (BEGIN IMMEDIATE: writers queue up instead of failing). */
  write<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    return this.db.transaction(fn).immediate();
  }

  /** Run `fn` in one read transaction: a snapshot, which other processes' writes meanwhile do not change. */
  read<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    return this.db.transaction(fn).deferred();
  }

  /**
   * ledger.write with SQLite's foreign key and CHECK constraints off for its statements, for a bulk insert whose
   * every row references a row the same transaction holds and takes its state from drover's own SQL (a
   * prelaunch's task rows: their job's row, the column's default 'pending'). For a million tasks the check of
   * each row's job costs a third of the insert, and the state's CHECK (an IN list) another third. The schema has
   * no ON DELETE/UPDATE actions, so nothing else changes; the settings are this connection's alone and are
   * restored after, whatever `fn` does (SQLite then compiles its statements again, with the checks). Inside a
   * transaction already, it is ledger.write (SQLite keeps the foreign key setting for the transaction).
   */
  writeUnchecked<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    this.db.pragma('foreign_keys = OFF');
    this.db.pragma('ignore_check_constraints = ON');
    try {
      return this.write(fn);
    } finally {
      this.db.pragma('ignore_check_constraints = OFF');
      this.db.pragma('foreign_keys = ON');
    }
  }

  /** Give a warning once per process. */
  warnOnce(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.warn(message);
  }

  /**
   * Bring the ledger up to date with `fn` (ingest records, reconcile), as the way it was opened allows: not at
   * all when it is read-only, and for a command that only reads, giving up when the disk refuses the write
   * (full, read-only, failing) — either way saying once on stderr that the answer may be stale.
   */
  refreshing(fn: () => void): void {
    if (this.readOnlyBecause !== undefined) {
      this.warnOnce(
        `${this.readOnlyBecause} — showing the ledger as last written (what runners recorded since is not read in): the answer may be stale`,
      );
      return;
    }
    if (!this.forReading) {
      fn();
      return;
    }
    try {
      fn();
    } catch (err) {
      const e = ledgerError(err, this.paths.ledger);
      if (e?.code !== 'io' && !isSystemError(err)) throw err;
      const why = e?.message ?? (isSystemError(err) ? describeSystemError(err) : String(err));
      this.warnOnce(`${why} — could not bring the ledger up to date: the answer may be stale`);
    }
  }

  /** From now on, wait up to `ms` for a lock another process holds before failing (SQLite's busy_timeout). */
  setBusyTimeout(ms: number): void {
    this.db.pragma(`busy_timeout = ${ms}`);
  }

  /** Copy the write-ahead log into the database file and empty it (before a long-running writer closes). */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  close(): void {
    this.db.close();
  }
}

/** Why this process cannot write the ledger or its folder (where SQLite keeps its WAL files), if it cannot. */
function writeRefused(paths: DroverPaths): SystemError | undefined {
  try {
    fs.accessSync(paths.root, fs.constants.W_OK);
    if (fs.existsSync(paths.ledger)) fs.accessSync(paths.ledger, fs.constants.W_OK);
    return undefined;
  } catch (err) {
    if (isSystemError(err)) return err;
    throw err;
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
