import type Database from 'better-sqlite3';
import { findJob, type JobRow } from './jobs.js';
import type { Ledger } from './ledger.js';

/** What a sync changed: tasks by kind, and the attempts that became history of replaced commands. */
export interface JobChanges {
  /** The job did not exist before. */
  created: boolean;
  added: number;
  /** Tasks whose command changed: they are `pending` again. */
  changed: number;
  removed: number;
  /** Tasks whose tag alone changed (their state stands). */
  retagged: number;
  /** Attempts of the changed and removed tasks' earlier commands, kept as history. */
  historyAttempts: number;
}

/**
 * Transition: make the ledger's tasks of `name` those of the jobfile's entries, creating the job if needed
 * (docs/concepts.md invariant 1). A task whose command is unchanged keeps its state (a new tag is just taken). A task
 * whose command changed gets a new revision and is `pending` again; its earlier command is kept in
 * task_revisions and its earlier attempts stay as that command's history. A task no longer in the entries
 * leaves the job (and its counts); its attempts stay as history. Attempt numbers keep counting per task id, so
 * history is never overwritten. Each entry's params (JSON text, `{}` when absent) are its command's: they are
 * set with a new or changed command and replaced whenever they differ. One transaction.
 */
export function syncJobTasks(
  ledger: Ledger,
  name: string,
  jobfile: string,
  entries: ReadonlyMap<number, { command: string; tag: string; params?: string }>,
  jobfileStamp: string | null,
): { job: JobRow; changes: JobChanges } {
  return ledger.write(() => {
    const sync = new JobSync(ledger, name);
    let batch = {
      ids: [] as number[],
      commands: [] as string[],
      tags: [] as string[],
      params: [] as string[],
    };
    for (const [id, e] of entries) {
      batch.ids.push(id);
      batch.commands.push(e.command);
      batch.tags.push(e.tag);
      batch.params.push(e.params ?? '{}');
      if (batch.ids.length === SYNC_BATCH) {
        sync.add(batch);
        batch = { ids: [], commands: [], tags: [], params: [] };
      }
    }
    sync.add(batch);
    return sync.finish(jobfile, jobfileStamp);
  });
}

/** Some entries of a sync, as parallel arrays (params as JSON text); the ids of a whole sync are distinct. */
export interface EntryBatch {
  ids: readonly number[];
  commands: readonly string[];
  tags: readonly string[];
  params: readonly string[];
}

/** The trigger that counts a job's tasks by state as each row is inserted (migrations: job_counts). */
const COUNT_TRIGGER = 'tasks_count_insert';

/** Entries a sync gathers before it writes them. */
const SYNC_BATCH = 4096;
/** Rows per INSERT statement: 4 values each, well under SQLite's 32,766 bound parameters. */
const ROWS_PER_INSERT = 1024;

/**
 * syncJobTasks a batch at a time, for a job of any size (a prelaunch streams its sweep's tasks here): `add` the
 * entries in batches, then `finish`. Must run inside one ledger.write transaction, which the caller holds from
 * the constructor to `finish`. The entries go to the ledger in multi-row INSERTs, never one JavaScript object
 * per task: straight into the job's tasks when it has none yet (a new job: nothing to compare with), else into
 * temp.sync_entries, which the set-based statements of a sync then apply.
 */
export class JobSync {
  private job: JobRow;
  private readonly created: boolean;
  /** True when the job had no tasks: the entries are inserted as its tasks at once. */
  private readonly direct: boolean;
  /** True when the job has attempts: new task ids must continue their attempt numbers. */
  private readonly hasAttempts: boolean;
  private count = 0;
  private max = 0;
  /** The count trigger's SQL while it is set aside for a bulk insert (see `bulk`), else undefined. */
  private countTrigger: string | undefined;
  /**
   * The INSERT of n rows, by n: made once per sync, as the ledger's statement cache would hash and compare its
   * whole text (tens of kilobytes) on every lookup.
   */
  private readonly inserts = new Map<number, Database.Statement>();

  /**
   * `bulk`: many entries are coming (a big sweep). A new job's rows then skip the per-row count trigger: it is
   * dropped in this transaction and made again, from its own SQL, by `finish`, which adds the rows to
   * job_counts at once (a fifth of the insert's time for a million rows). The transaction holds the write lock,
   * so no other writer inserts tasks meanwhile, and readers see the schema of before or after, never between.
   * A transaction that took a bulk JobSync must not commit without its `finish` (an error rolls it back).
   */
  constructor(
    private readonly ledger: Ledger,
    private readonly name: string,
    options: { bulk?: boolean } = {},
  ) {
    if (!ledger.db.inTransaction) throw new Error('JobSync runs inside a ledger.write transaction');
    let job = findJob(ledger, name);
    this.created = job === undefined;
    if (!job) {
      ledger
        .stmt('INSERT INTO jobs (name, created_at, jobfile, generation) VALUES (?, ?, ?, 0)')
        .run(name, Date.now() / 1000, '');
      job = findJob(ledger, name)!;
    }
    this.job = job;
    this.direct =
      this.created || ledger.stmt('SELECT 1 FROM tasks WHERE job_id = ? LIMIT 1').get(job.id) === undefined;
    this.hasAttempts =
      ledger.stmt('SELECT 1 FROM attempts WHERE job_id = ? LIMIT 1').get(job.id) !== undefined;
    if (this.direct && options.bulk) {
      this.countTrigger = ledger
        .stmt(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = '${COUNT_TRIGGER}'`)
        .pluck()
        .get() as string | undefined;
      if (this.countTrigger !== undefined) ledger.db.exec(`DROP TRIGGER ${COUNT_TRIGGER}`);
    }
    if (!this.direct) {
      ledger.db.exec(
        `CREATE TEMP TABLE IF NOT EXISTS sync_entries (id INTEGER PRIMARY KEY, command TEXT NOT NULL, tag TEXT NOT NULL,
           params TEXT NOT NULL)`,
      );
      ledger.stmt('DELETE FROM temp.sync_entries').run();
    }
  }

  /** Add some entries. */
  add(batch: EntryBatch): void {
    const n = batch.ids.length;
    const { id, generation } = this.job;
    const head = this.direct && this.hasAttempts ? [id, generation + 1, id] : [];
    const values: unknown[] = [];
    for (let start = 0; start < n; start += ROWS_PER_INSERT) {
      const rows = Math.min(ROWS_PER_INSERT, n - start);
      values.length = 0;
      values.push(...head);
      for (let i = start; i < start + rows; i++) {
        const task = batch.ids[i]!;
        values.push(task, batch.commands[i], batch.tags[i], batch.params[i]);
        if (task > this.max) this.max = task;
      }
      let insert = this.inserts.get(rows);
      if (insert === undefined) {
        insert = this.insert(rows);
        this.inserts.set(rows, insert);
      }
      insert.run(values);
    }
    this.count += n;
  }

  /** Apply the entries and record the jobfile; what changed. */
  finish(jobfile: string, jobfileStamp: string | null): { job: JobRow; changes: JobChanges } {
    const { ledger, job } = this;
    let changes: JobChanges;
    if (this.direct) {
      if (this.countTrigger !== undefined) {
        ledger.db.exec(this.countTrigger);
        this.countTrigger = undefined;
        // What the trigger would have counted: every new row is pending.
        if (this.count > 0)
          ledger
            .stmt(
              `INSERT INTO job_counts (job_id, state, n) VALUES (?, 'pending', ?)
             ON CONFLICT DO UPDATE SET n = n + excluded.n`,
            )
            .run(job.id, this.count);
      }
      changes = {
        created: this.created,
        added: this.count,
        changed: 0,
        removed: 0,
        retagged: 0,
        historyAttempts: 0,
      };
    } else {
      changes = applyEntries(ledger, job, this.created);
      ledger.stmt('DELETE FROM temp.sync_entries').run();
    }
    const generation = changes.changed + changes.added > 0 ? job.generation + 1 : job.generation;
    ledger
      .stmt(
        'UPDATE jobs SET jobfile = ?, jobfile_stamp = ?, task_count = ?, max_task = ?, generation = ? WHERE id = ?',
      )
      .run(jobfile, jobfileStamp, this.count, this.max, generation, job.id);
    return { job: findJob(ledger, this.name)!, changes };
  }

  /** The INSERT of `rows` entries: into the job's tasks (new tasks get generation + 1), or into sync_entries. */
  private insert(rows: number): Database.Statement {
    const values = `VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')}`;
    if (!this.direct)
      return this.ledger.stmt(`INSERT INTO temp.sync_entries (id, command, tag, params) ${values}`);
    if (!this.hasAttempts) {
      // The common case, a new job: plain rows, the job and the revision written in (integers from the ledger),
      // so each row binds only its own four values and SQLite makes no subquery of them (a quarter less time).
      const { id, generation } = this.job;
      const row = `(${Math.trunc(id)}, ?, ?, ?, ?, ${Math.trunc(generation) + 1}, 0)`;
      return this.ledger.stmt(
        `INSERT INTO tasks (job_id, id, command, tag, params, revision, attempts)
         VALUES ${Array.from({ length: rows }, () => row).join(', ')}`,
      );
    }
    // Bound first: the job, the new tasks' revision and the job again. A new id continues the attempt numbers of
    // any earlier task with that id, so its history stays intact.
    return this.ledger.stmt(
      `INSERT INTO tasks (job_id, id, command, tag, params, revision, attempts)
       SELECT ?, e.column1, e.column2, e.column3, e.column4, ?,
         coalesce((SELECT max(attempt) FROM attempts a WHERE a.job_id = ? AND a.task_id = e.column1), 0)
       FROM (${values}) e`,
    );
  }
}

/** The set-based statements of a sync, against temp.sync_entries; new and changed tasks get generation + 1. */
function applyEntries(ledger: Ledger, job: JobRow, created: boolean): JobChanges {
  const now = Date.now() / 1000;
  const next = job.generation + 1;
  // Tasks that leave (gone from the entries) or whose command changes: their current command becomes history.
  const replaced = `SELECT t.id FROM tasks t LEFT JOIN temp.sync_entries e ON e.id = t.id
    WHERE t.job_id = ? AND (e.id IS NULL OR e.command != t.command)`;
  const historyAttempts = (
    ledger
      .stmt(
        `SELECT count(*) AS n FROM attempts a
           JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id
           JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id AND lt.revision = t.revision
         WHERE a.job_id = ? AND a.task_id IN (${replaced})`,
      )
      .get(job.id, job.id) as { n: number }
  ).n;
  ledger
    .stmt(
      `INSERT OR REPLACE INTO task_revisions (job_id, task_id, revision, command, tag, replaced_at)
       SELECT job_id, id, revision, command, tag, ? FROM tasks WHERE job_id = ? AND id IN (${replaced})`,
    )
    .run(now, job.id, job.id);
  const removed = ledger
    .stmt('DELETE FROM tasks WHERE job_id = ? AND id NOT IN (SELECT id FROM temp.sync_entries)')
    .run(job.id).changes;
  const changed = ledger
    .stmt(
      `UPDATE tasks SET command = e.command, tag = e.tag, params = e.params, revision = ?, state = 'pending',
         exit_code = NULL, tries = 0, requeues = 0, last_launch_id = NULL, latest = NULL
       FROM temp.sync_entries e WHERE tasks.job_id = ? AND tasks.id = e.id AND tasks.command != e.command`,
    )
    .run(next, job.id).changes;
  const retagged = ledger
    .stmt(
      `UPDATE tasks SET tag = e.tag FROM temp.sync_entries e
       WHERE tasks.job_id = ? AND tasks.id = e.id AND tasks.command = e.command AND tasks.tag != e.tag`,
    )
    .run(job.id).changes;
  ledger
    .stmt(
      `UPDATE tasks SET params = e.params FROM temp.sync_entries e
       WHERE tasks.job_id = ? AND tasks.id = e.id AND tasks.command = e.command AND tasks.params != e.params`,
    )
    .run(job.id);
  // A new id continues the attempt numbers of any earlier task with that id, so its history stays intact.
  const added = ledger
    .stmt(
      `INSERT INTO tasks (job_id, id, command, tag, params, revision, attempts)
       SELECT ?, e.id, e.command, e.tag, e.params, ?,
         coalesce((SELECT max(attempt) FROM attempts a WHERE a.job_id = ? AND a.task_id = e.id), 0)
       FROM temp.sync_entries e WHERE e.id NOT IN (SELECT id FROM tasks WHERE job_id = ?)`,
    )
    .run(job.id, next, job.id, job.id).changes;
  return { created, added, changed, removed, retagged, historyAttempts };
}

/** One line saying what a sync changed in an existing job, or undefined when it changed nothing. */
export function describeChanges(name: string, c: JobChanges): string | undefined {
  if (c.created || c.added + c.changed + c.removed + c.retagged === 0) return undefined;
  const parts = [
    [c.changed, 'changed'] as const,
    [c.removed, 'removed'] as const,
    [c.added, 'added'] as const,
    [c.retagged, 'retagged'] as const,
  ]
    .filter(([n]) => n > 0)
    .map(([n, what], i) => (i === 0 ? `${n} ${n === 1 ? 'task' : 'tasks'} ${what}` : `${n} ${what}`));
  const n = c.historyAttempts;
  const history =
    n > 0
      ? `; their ${n} earlier attempt${n === 1 ? ' is' : 's are'} kept as history (drover list ${name} --attempts)`
      : '';
  const pending = c.changed > 0 ? '; changed tasks are pending again' : '';
  return `job '${name}': ${parts.join(', ')}${pending}${history}`;
}
