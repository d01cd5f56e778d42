import { usageError } from '../errors.js';
import { condenseIds } from '../tasklist/tasklist.js';
import { idIn } from './id-list.js';
import type { JobRow } from './jobs.js';
import type { Ledger } from './ledger.js';

/** A launch as the ledger holds it. */
export interface LaunchRow {
  id: number;
  job_id: number;
  /** local | slurm | gridengine | pool:NAME */
  backend: string;
  /** Condensed tasklist of its tasks. */
  tasklist: string;
  task_count: number;
  /** Unix seconds. */
  created_at: number;
  /** Its folder under `.drover/jobs/<job>/launches/`. */
  dir: string;
  /** JSON of the launch options. */
  options: string;
  /** JSON of the backend handles: runner pid, array job ids, ... Written by the launch only. */
  handles: string;
  /** JSON of what reconciliation has seen of its elements and when (Grid Engine: `eqw`, `gone`). */
  sightings: string;
  /** 1 while some of its tasks may still change state. */
  open: number;
}

/** What the launch of some tasks needs to know about each: its next attempt number. */
export interface LaunchTask {
  id: number;
  command: string;
  tag: string;
  /** The attempt number its first run in this launch gets. */
  attempt: number;
}

/**
 * The ids among `taskIds` that an open launch has queued or running — whatever command it runs for them, so an
 * attempt of a task's earlier command counts too (docs/concepts.md invariant 2: no rerun while one runs).
 */
export function activeTaskIds(ledger: Ledger, jobId: number, taskIds: readonly number[]): number[] {
  const ids = idIn('lt.task_id', taskIds);
  return ledger
    .stmt(
      `SELECT DISTINCT lt.task_id FROM launch_tasks lt JOIN launches l ON l.id = lt.launch_id
       WHERE l.job_id = ? AND l.open = 1 AND lt.state IN ('queued', 'running')
         AND ${ids.sql} ORDER BY lt.task_id`,
    )
    .pluck()
    .all(jobId, ...ids.params) as number[];
}

/**
 * Refuse to launch tasks that are queued or running in another launch: two copies of one task would run at
 * once and race for its record. The user cancels them first, or leaves them out.
 */
export function refuseActive(
  ledger: Ledger,
  job: Pick<JobRow, 'id' | 'name'>,
  taskIds: readonly number[],
): void {
  const active = activeTaskIds(ledger, job.id, taskIds);
  if (active.length === 0) return;
  const list = condenseIds(active);
  throw usageError(
    `task ${list} of '${job.name}' is already queued or running: wait for it, cancel it first (drover cancel ${job.name} --tasklist ${list}), or leave it out`,
  );
}

/**
 * Which of a job's tasks a launch has, kept small: a range of ids (the common launch), else the ids as one JSON
 * text. A launch lasts as long as its tasks run; an array of its million ids need not stay in memory that long.
 */
export interface TaskSelection {
  readonly sql: string;
  readonly params: readonly (number | string)[];
}

/** The selection of tasks `taskIds` (`id` being the tasks table's column). */
export function taskSelection(taskIds: readonly number[]): TaskSelection {
  return idIn('id', taskIds);
}

/** Tasks `taskIds` of a job in id order, each with the attempt number its next run gets. */
export function launchTasks(
  ledger: Ledger,
  jobId: number,
  taskIds: readonly number[] | TaskSelection,
): LaunchTask[] {
  return [...iterateLaunchTasks(ledger, jobId, taskIds)];
}

/**
 * The same tasks one row at a time: a local launch of a million tasks writes its task file from this without
 * holding the million. The connection runs no other statement until the iteration ends.
 */
export function iterateLaunchTasks(
  ledger: Ledger,
  jobId: number,
  taskIds: readonly number[] | TaskSelection,
): IterableIterator<LaunchTask> {
  const ids = 'sql' in taskIds ? taskIds : taskSelection(taskIds);
  return ledger
    .stmt(
      `SELECT id, command, tag, attempts + 1 AS attempt FROM tasks WHERE job_id = ? AND ${ids.sql} ORDER BY id`,
    )
    .iterate(jobId, ...ids.params) as IterableIterator<LaunchTask>;
}

/** A launch by id, or undefined. */
export function getLaunch(ledger: Ledger, id: number): LaunchRow | undefined {
  return ledger.stmt('SELECT * FROM launches WHERE id = ?').get(id) as LaunchRow | undefined;
}

/** Set a launch's backend handles (merged into what is there). */
export function setLaunchHandles(ledger: Ledger, id: number, handles: object): void {
  ledger.write(() => {
    const row = getLaunch(ledger, id)!;
    const merged = { ...(JSON.parse(row.handles) as object), ...handles };
    ledger.stmt('UPDATE launches SET handles = ? WHERE id = ?').run(JSON.stringify(merged), id);
  });
}

/** Set what reconciliation has seen of a launch's elements (merged into what is there, by key). */
export function setLaunchSightings(ledger: Ledger, id: number, sightings: object): void {
  ledger.write(() => {
    const row = getLaunch(ledger, id)!;
    const merged = { ...(JSON.parse(row.sightings) as object), ...sightings };
    ledger.stmt('UPDATE launches SET sightings = ? WHERE id = ?').run(JSON.stringify(merged), id);
  });
}

/** A job's launches, oldest first. */
export function jobLaunches(ledger: Ledger, jobId: number): LaunchRow[] {
  return ledger.stmt('SELECT * FROM launches WHERE job_id = ? ORDER BY id').all(jobId) as LaunchRow[];
}

/** The folders of a job's launches on `backend`. */
export function launchDirs(ledger: Ledger, jobId: number, backend: string): string[] {
  return ledger
    .stmt('SELECT dir FROM launches WHERE job_id = ? AND backend = ?')
    .pluck()
    .all(jobId, backend) as string[];
}

/** A job's launches that may still change, oldest first. */
export function openLaunches(ledger: Ledger, jobId?: number): LaunchRow[] {
  return (
    jobId === undefined
      ? ledger.stmt('SELECT * FROM launches WHERE open = 1 ORDER BY id').all()
      : ledger.stmt('SELECT * FROM launches WHERE open = 1 AND job_id = ? ORDER BY id').all(jobId)
  ) as LaunchRow[];
}
