import { DroverError } from '../errors.js';
import type { Ledger } from './ledger.js';
import type { State } from './states.js';

/** A job as the ledger holds it. */
export interface JobRow {
  /** Internal id. */
  id: number;
  /** The jobname. */
  name: string;
  /** Unix seconds. */
  created_at: number;
  /** Tasks 1..task_count exist. */
  task_count: number;
  /** Path of its jobs.json. */
  jobfile: string;
  /** mtime of jobs.json when it was last read into the ledger. */
  jobfile_mtime: number | null;
}

/** A task as the ledger holds it. */
export interface TaskRow {
  /** Task id, 1..N. */
  id: number;
  command: string;
  tag: string;
  /** Its latest attempt's state, or pending/queued. */
  state: State;
  /** Exit code of its latest attempt, when it exited. */
  exit_code: number | null;
  /** Attempts started, all launches. */
  attempts: number;
  /** The newest launch that included it. */
  last_launch_id: number | null;
}

/** Find a job by name, or undefined. */
export function findJob(ledger: Ledger, name: string): JobRow | undefined {
  return ledger.stmt('SELECT * FROM jobs WHERE name = ?').get(name) as JobRow | undefined;
}

/** Find a job by name or throw a not-found error that says how to create it. */
export function getJob(ledger: Ledger, name: string): JobRow {
  const job = findJob(ledger, name);
  if (!job) throw jobNotFound(name);
  return job;
}

/** The error for a job name this folder does not know. */
export function jobNotFound(name: string): DroverError {
  return new DroverError(
    'not-found',
    `no job named '${name}' here: create it with 'drover prelaunch +jobname ${name} ...' or see 'drover status'`,
  );
}

/**
 * Make the ledger's tasks of `name` match the jobfile's entries (creating the job if needed). Existing task
 * rows keep their state; changed commands or tags are updated; new ids are added as pending.
 */
export function syncJobTasks(
  ledger: Ledger,
  name: string,
  jobfile: string,
  entries: ReadonlyMap<number, { command: string; tag: string }>,
  jobfileMtime: number,
): JobRow {
  return ledger.write(() => {
    let job = findJob(ledger, name);
    if (!job) {
      ledger
        .stmt('INSERT INTO jobs (name, created_at, jobfile) VALUES (?, ?, ?)')
        .run(name, Date.now() / 1000, jobfile);
      job = findJob(ledger, name)!;
    } else if (job.jobfile !== jobfile) {
      ledger.stmt('UPDATE jobs SET jobfile = ? WHERE id = ?').run(jobfile, job.id);
    }
    const upsert = ledger.stmt(
      `INSERT INTO tasks (job_id, id, command, tag) VALUES (?, ?, ?, ?)
       ON CONFLICT (job_id, id) DO UPDATE SET command = excluded.command, tag = excluded.tag
       WHERE command != excluded.command OR tag != excluded.tag`,
    );
    let max = 0;
    for (const [id, e] of entries) {
      upsert.run(job.id, id, e.command, e.tag);
      if (id > max) max = id;
    }
    ledger
      .stmt('UPDATE jobs SET task_count = ?, jobfile_mtime = ? WHERE id = ?')
      .run(max, jobfileMtime, job.id);
    return { ...job, jobfile, task_count: max, jobfile_mtime: jobfileMtime };
  });
}

/** Every job, oldest first. */
export function listJobs(ledger: Ledger): JobRow[] {
  return ledger.stmt('SELECT * FROM jobs ORDER BY id').all() as JobRow[];
}

/** A task as the scripting contract shows it (`drover list --json`, the server's task list). */
export function taskJson(t: TaskRow) {
  return {
    task: t.id,
    command: t.command,
    tag: t.tag,
    state: t.state,
    exit_code: t.exit_code,
    attempts: t.attempts,
    launch: t.last_launch_id === null ? null : String(t.last_launch_id),
  };
}
