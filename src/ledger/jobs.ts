import { DroverError, usageError } from '../errors.js';
import type { State } from '../protocol/states.js';
import { condenseIds, parseTasklist } from '../tasklist/tasklist.js';
import type { Ledger } from './ledger.js';

/** A job as the ledger holds it. */
export interface JobRow {
  /** Internal id. */
  id: number;
  /** The jobname. */
  name: string;
  /** Unix seconds. */
  created_at: number;
  /** How many tasks it has now. */
  task_count: number;
  /** Its highest task id: ids run 1..max_task, with gaps where the jobfile has them. */
  max_task: number;
  /** Path of its jobs.json. */
  jobfile: string;
  /** `mtime:size:inode` of jobs.json when it was last read into the ledger. */
  jobfile_stamp: string | null;
  /** Bumped by each sync that changed a task's command: the revision those tasks get. */
  generation: number;
}

/** A task as the ledger holds it. */
export interface TaskRow {
  /** Task id, 1..N. */
  id: number;
  command: string;
  tag: string;
  /** Its latest attempt's state (of its current command), or pending/queued. */
  state: State;
  /** Exit code of its latest attempt, when it exited. */
  exit_code: number | null;
  /** Attempts of its current command, all launches. */
  attempts: number;
  /** Of those, the ones `--requeue` ran again (it hit its time limit or checkpointed); read where shown. */
  requeues?: number;
  /** The newest launch of its current command. */
  last_launch_id: number | null;
  /** The sweep values of its current command (`{}` when prelaunch recorded none for it). */
  params: Record<string, string>;
}

/** Find a job by name, or undefined. */
export function findJob(ledger: Ledger, name: string): JobRow | undefined {
  return ledger.stmt('SELECT * FROM jobs WHERE name = ?').get(name) as JobRow | undefined;
}

/** A job by its internal id, or undefined. */
export function jobById(ledger: Ledger, id: number): JobRow | undefined {
  return ledger.stmt('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
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

/** The ids of a job's tasks, in order. */
export function jobTaskIds(ledger: Ledger, jobId: number): number[] {
  return ledger.stmt('SELECT id FROM tasks WHERE job_id = ? ORDER BY id').pluck().all(jobId) as number[];
}

/** Every job, oldest first. */
export function listJobs(ledger: Ledger): JobRow[] {
  return ledger.stmt('SELECT * FROM jobs ORDER BY id').all() as JobRow[];
}

/**
 * The ids a tasklist names in a job, sorted: ids beyond the job's highest are refused before anything is
 * expanded further, and so are ids the job does not have (a jobfile's ids may have gaps).
 */
export function resolveTasklist(
  ledger: Ledger,
  job: Pick<JobRow, 'id' | 'name' | 'max_task'>,
  text: string,
): number[] {
  const ids = parseTasklist(text, job.max_task, job.name);
  if (ids.length === 0) return ids;
  const missing = ledger
    .stmt('SELECT value FROM json_each(?) WHERE value NOT IN (SELECT id FROM tasks WHERE job_id = ?)')
    .pluck()
    .all(JSON.stringify(ids), job.id) as number[];
  if (missing.length > 0) {
    throw usageError(
      `tasklist '${text}' names task ${condenseIds(missing)}, which job '${job.name}' does not have (its jobfile has no such ids): see drover list ${job.name}`,
    );
  }
  return ids;
}

/** True when the job has a task with this id now. */
export function jobHasTask(ledger: Ledger, jobId: number, taskId: number): boolean {
  return ledger.stmt('SELECT 1 FROM tasks WHERE job_id = ? AND id = ?').get(jobId, taskId) !== undefined;
}

/**
 * A job of `count` ranks of one command (a pool launch's `--num-jobs`): its row only, with no jobfile; the
 * launch makes its task rows as it dispatches them, so this costs the same for 10 ranks or 10,000,000.
 */
export function createRankJob(ledger: Ledger, name: string, jobfile: string, count: number): JobRow {
  ledger
    .stmt('INSERT INTO jobs (name, created_at, jobfile, task_count, max_task) VALUES (?, ?, ?, ?, ?)')
    .run(name, Date.now() / 1000, jobfile, count, count);
  return findJob(ledger, name)!;
}
