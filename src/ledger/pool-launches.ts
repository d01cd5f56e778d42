import type { Ledger } from './ledger.js';

/**
 * What the ledger holds about pool launches beyond what every launch has: the pool_launches row, and
 * pool_tasks — only the tasks handed to a worker or waiting to retry. Reads only; the changes are transitions
 * (transitions/pool.ts, transitions/expand.ts).
 */

/** The pool-specific row of a pool launch. */
export interface PoolLaunchRow {
  launch_id: number;
  pool: string;
  /** The launch's task ids (tasklist grammar). */
  tasklist: string;
  total: number;
  /** --num-jobs N, or null for a job's tasks. */
  num_jobs: number | null;
  /** launch_tasks rows exist for the ids <= this. */
  expanded: number;
  /** Ids <= this were handed out at least once. */
  cursor: number;
  cpus: number;
  gpus: number;
  mem_mb: number;
  retries: number;
  retry_delay: number;
  /** JSON of LaunchSettings. */
  settings: string;
}

/** A pool_tasks row. */
export interface PoolTaskRow {
  launch_id: number;
  task_id: number;
  /** The attempt number it runs (or will run) as. */
  attempt: number;
  /** Attempts started in this launch. */
  tries: number;
  /** The worker holding it; null while waiting to retry. */
  worker: string | null;
  /** Waiting to retry: not before this time (unix s). */
  not_before: number;
}

/** A queued task ready to hand out. */
export interface ReadyTask {
  task: number;
  attempt: number;
  command: string;
  /** Attempts started in this launch so far. */
  tries: number;
}

/** The pool row of a launch, or undefined when it is not a pool launch. */
export function getPoolLaunch(ledger: Ledger, launchId: number): PoolLaunchRow | undefined {
  return ledger.stmt('SELECT * FROM pool_launches WHERE launch_id = ?').get(launchId) as
    | PoolLaunchRow
    | undefined;
}

/** The ids of the open pool launches, oldest first. */
export function openPoolLaunchIds(ledger: Ledger): number[] {
  return ledger
    .stmt(
      'SELECT pl.launch_id FROM pool_launches pl JOIN launches l ON l.id = pl.launch_id WHERE l.open = 1 ORDER BY pl.launch_id',
    )
    .pluck()
    .all() as number[];
}

/** The job of a launch: its id and name. */
export function launchJob(ledger: Ledger, launchId: number): { id: number; name: string } {
  return ledger
    .stmt('SELECT j.id, j.name FROM launches l JOIN jobs j ON j.id = l.job_id WHERE l.id = ?')
    .get(launchId) as { id: number; name: string };
}

/** How many task rows a launch has, and how many of them are queued or running. */
export function launchTaskTally(ledger: Ledger, launchId: number): { made: number; left: number } {
  return ledger
    .stmt(
      `SELECT count(*) AS made, coalesce(sum(state IN ('queued', 'running')), 0) AS left FROM launch_tasks
       WHERE launch_id = ?`,
    )
    .get(launchId) as { made: number; left: number };
}

/** Queued tasks of a launch with ids above `after`, in id order, that were never handed out. */
export function freshTasks(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  after: number,
  limit: number,
): ReadyTask[] {
  return ledger
    .stmt(
      `SELECT lt.task_id AS task, t.attempts + 1 AS attempt, t.command, 0 AS tries FROM launch_tasks lt
       JOIN tasks t ON t.job_id = ? AND t.id = lt.task_id
       WHERE lt.launch_id = ? AND lt.task_id > ? AND lt.state = 'queued' ORDER BY lt.task_id LIMIT ?`,
    )
    .all(jobId, launchId, after, limit) as ReadyTask[];
}

/** The command of a task. */
export function taskCommand(ledger: Ledger, jobId: number, taskId: number): string {
  return (
    ledger.stmt('SELECT command FROM tasks WHERE job_id = ? AND id = ?').get(jobId, taskId) as {
      command: string;
    }
  ).command;
}

/** The pool_tasks row of a task. */
export function poolTask(ledger: Ledger, launchId: number, taskId: number): PoolTaskRow | undefined {
  return ledger.stmt('SELECT * FROM pool_tasks WHERE launch_id = ? AND task_id = ?').get(launchId, taskId) as
    | PoolTaskRow
    | undefined;
}

/** The tasks of a launch waiting to retry (no worker holds them). */
export function waitingTasks(ledger: Ledger, launchId: number): PoolTaskRow[] {
  return ledger
    .stmt('SELECT * FROM pool_tasks WHERE launch_id = ? AND worker IS NULL')
    .all(launchId) as PoolTaskRow[];
}

/** Every task some worker holds, of any launch. */
export function heldTasks(ledger: Ledger): PoolTaskRow[] {
  return ledger.stmt('SELECT * FROM pool_tasks WHERE worker IS NOT NULL').all() as PoolTaskRow[];
}

/** True when the attempt was recorded as started. */
export function attemptStarted(ledger: Ledger, jobId: number, taskId: number, attempt: number): boolean {
  return (
    ledger
      .stmt('SELECT 1 FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?')
      .get(jobId, taskId, attempt) !== undefined
  );
}

/** A cancel request the CLI or the cancel route left for the controller. */
export interface PoolCancelRow {
  id: number;
  launch_id: number;
  /** JSON: task ids, or "all". */
  tasks: string;
}

/** The cancel requests not acted on yet, oldest first. */
export function pendingCancels(ledger: Ledger): PoolCancelRow[] {
  return ledger
    .stmt('SELECT id, launch_id, tasks FROM pool_cancels WHERE done = 0 ORDER BY id')
    .all() as PoolCancelRow[];
}

/** Mark a cancel request acted on. */
export function cancelDone(ledger: Ledger, id: number): void {
  ledger.write(() => ledger.stmt('UPDATE pool_cancels SET done = 1 WHERE id = ?').run(id));
}

/** How many attempts of a task in a pool launch `--requeue` ran again (the controller's count of its requeues). */
export function poolTaskRequeues(ledger: Ledger, jobId: number, launchId: number, taskId: number): number {
  return ledger
    .stmt('SELECT count(*) FROM attempts WHERE job_id = ? AND task_id = ? AND launch_id = ? AND requeued = 1')
    .pluck()
    .get(jobId, taskId, launchId) as number;
}
